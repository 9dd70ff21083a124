# Two entry points for a fresh Debian machine with Python 3.11:
#   make run    set up, then compile and run the bundled example
#   make test   set up, then run every test (lit first, pytest last)
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
EXAMPLE ?= examples/chain3.mlir
# pytest workers (pytest-xdist): one per core by default; PYTEST_JOBS=0 runs in one process
PYTEST_JOBS ?= auto
export WGPU_BACKEND_TYPE ?= Vulkan

.PHONY: setup system-deps run test lint lit pytest bench clean

system-deps:
	@pkgs=""; \
	if ! ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1 || ! ldconfig -p 2>/dev/null | grep -q libvulkan.so.1; then \
	  pkgs="mesa-vulkan-drivers libvulkan1"; \
	fi; \
	if ! python3 -c "import ensurepip, venv" >/dev/null 2>&1; then pkgs="$$pkgs python3-venv"; fi; \
	if [ -n "$$pkgs" ]; then \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  echo "installing $$pkgs"; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$pkgs >/dev/null; \
	fi

PLUGIN := examples/vyre-plugin-example

$(VENV)/.installed: pyproject.toml $(PLUGIN)/pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip >/dev/null
	$(PY) -m pip install -q -e '.[test]'
	$(PY) -m pip install -q -e $(PLUGIN)
	touch $@

setup: system-deps $(VENV)/.installed

run: setup
	@export XDG_RUNTIME_DIR=$$(mktemp -d); set -e; \
	echo "== vyre-opt --fuse $(EXAMPLE)   (one program; intermediates forwarded)"; \
	$(VENV)/bin/vyre-opt --fuse $(EXAMPLE); \
	echo "== vyre-opt --fuse --lower -t wgsl $(EXAMPLE)"; \
	$(VENV)/bin/vyre-opt --fuse --lower -t wgsl $(EXAMPLE); \
	echo "== vyre-run --fuse --random-inputs 0 $(EXAMPLE)   (wgpu; lavapipe without a GPU)"; \
	$(VENV)/bin/vyre-run $(EXAMPLE) --fuse --random-inputs 0; \
	echo "== vyre-run --backend reference --random-inputs 0 $(EXAMPLE)   (the reference interpreter)"; \
	$(VENV)/bin/vyre-run $(EXAMPLE) --backend reference --random-inputs 0

lit: setup
	@export XDG_RUNTIME_DIR=$$(mktemp -d); $(VENV)/bin/lit -sv filecheck_tests 2>&1 | tail -n 40; exit $${PIPESTATUS[0]}

pytest: setup
	@export XDG_RUNTIME_DIR=$$(mktemp -d); $(VENV)/bin/pytest -q -p no:cacheprovider -n $(PYTEST_JOBS) tests

lint: setup
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .

test: setup
	@$(VENV)/bin/ruff format --check . && $(VENV)/bin/ruff check . || exit 1; \
	export XDG_RUNTIME_DIR=$$(mktemp -d); chmod 700 $$XDG_RUNTIME_DIR; \
	$(VENV)/bin/lit -s filecheck_tests $(PLUGIN)/tests || exit 1; \
	$(VENV)/bin/pytest -q -p no:cacheprovider -n $(PYTEST_JOBS) tests $(PLUGIN)/tests

bench: setup
	$(PY) bench/run_all.py

clean:
	rm -rf $(VENV) *.egg-info .lit-out .hypothesis
