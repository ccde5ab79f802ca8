# The README's two commands. Both build .venv on first use (Python >= 3.10 and pip only).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=

.PHONY: test demo install clean

install: $(VENV)/.installed
	@# The code sandbox uses bubblewrap where it runs: install it when we can (root with apt), quietly,
	@# never failing the build; `referee doctor` says which isolation the sandbox then has.
	@command -v bwrap >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	  { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null 2>&1 || \
	    { apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null 2>&1; }; }; } || true

# torch==2.13.0 first, so the CPU build is taken before TRL asks for any torch.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[train,dev]'
	touch $@

test: install
	$(PY) -m pytest -q $(PYTEST_ARGS)

# GRPO on a CPU in a few minutes: a tiny local model learns sums; writes runs/demo/.
demo: install
	$(PY) -m referee.recipes.cli demo

# A short run of the pinned recipes on the CUDA device here (~0.5B random Qwen2, bf16; tiny and fp32
# without one); writes benchmarks/results/gpu_check.json. A machine without network: docs/gpu_check.md.
.PHONY: gpu-check
gpu-check: install
	$(PY) -m benchmarks.gpu_check

clean:
	rm -rf $(VENV) runs .pytest_cache
