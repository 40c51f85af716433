# cupric — the commands. From a fresh clone: `make demo`, `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
BUILD  := build/py
STAMP  := $(VENV)/.cupric-built
WERROR ?= ON
CMAKE_DEFS := --config-settings=cmake.define.CUPRIC_WERROR=$(WERROR) --config-settings=cmake.define.CUPRIC_TESTS=ON
SOURCES := $(shell find src include device_include examples/cpp tests/cpp -type f 2>/dev/null) CMakeLists.txt pyproject.toml

.PHONY: all build demo test test-python test-cpp bench soak gpu-check lint format clean

all: build

$(VENV)/.deps:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q "scikit-build-core>=0.10" "nanobind>=2.0" ninja "numpy>=2.0" "pytest>=8" "hypothesis>=6" "ml_dtypes>=0.4"
	touch $@

# Incremental: ninja in build/py rebuilds only what changed; pip just re-links the package.
$(STAMP): $(VENV)/.deps $(SOURCES)
	$(PIP) install -q --no-build-isolation --no-deps -e . $(CMAKE_DEFS)
	touch $@

build: $(STAMP)

demo: build
	$(PY) examples/demo.py

test: test-cpp test-python

test-python: build
	$(PY) -m pytest tests/python $(PYTEST_ARGS)

test-cpp: build
	cd $(BUILD) && ctest --output-on-failure

bench: build
	$(PY) benchmarks/cpu_vs_numpy.py

# Not in CI (minutes): a million mixed ops on every device with host RSS and GPU pools checked flat,
# then hostile inputs (huge shapes, deep lists, bad buffers and grids), each in its own process.
soak: build
	$(PY) tests/soak/soak.py
	$(PY) tests/soak/hostile_inputs.py

# One command for the GPU machine: build, GPU tests, benchmarks, short table last (logs in $$OUT).
gpu-check:
	bash tools/gpu_check.sh

lint:
	$(VENV)/bin/ruff check python tests benchmarks examples || true
	clang-format --dry-run --Werror $$(find src include device_include examples tests/cpp -name '*.cpp' -o -name '*.hpp' -o -name '*.h')

format:
	clang-format -i $$(find src include device_include examples tests/cpp -name '*.cpp' -o -name '*.hpp' -o -name '*.h')

clean:
	rm -rf build $(VENV)
