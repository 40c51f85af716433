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

.PHONY: all build demo test test-python test-cpp test-integration test-baseline conformance install-check bench soak gpu-check \
	lint ruff format format-check clang-check clean

all: build

$(VENV)/.deps:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q "scikit-build-core>=0.10" "nanobind>=2.0" ninja "numpy>=2.0" "pytest>=8" "hypothesis>=6" "ml_dtypes>=0.4" "scipy-openblas64>=0.3.27" "opt_einsum>=3.3"
	touch $@

# The Python suites run on pytest-xdist's workers, one per core (at most 4: each worker imports
# cupric and its thread pool; docs/architecture.md, "Tests"). PYTEST_PARALLEL= runs them serially.
PYTEST_PARALLEL ?= -n auto --maxprocesses=4
$(VENV)/.xdist: $(VENV)/.deps
	$(PIP) install -q "pytest-xdist>=3.5"
	touch $@

# Incremental: ninja in build/py rebuilds only what changed; pip just re-links the package.
$(STAMP): $(VENV)/.deps $(SOURCES)
	$(PIP) install -q --no-build-isolation --no-deps -e . $(CMAKE_DEFS)
	touch $@

build: $(STAMP)

demo: build
	$(PY) examples/demo.py

test: test-cpp test-python test-baseline test-integration

# Hermetic: pytest runs with HOME an empty folder (XDG_CACHE_HOME unset) and fails the target if a
# test left anything of cupric's there (~/.cache/cupric); tests/python must leave it empty. The
# suite's compile cache is a folder of the session (tests/python/conftest.py).
HERMETIC = home=$$(mktemp -d) && env -u XDG_CACHE_HOME HOME=$$home $(PY) -m pytest $(1) $(PYTEST_ARGS); rc=$$?; \
	left=$$(cd $$home && find . -mindepth 1 $(2) | head -5); rm -rf $$home; \
	if [ -n "$$left" ]; then echo "pytest $(1) wrote into HOME: $$left"; exit 1; fi; exit $$rc

test-python: build $(VENV)/.clients $(VENV)/.xdist  # the docs' Dask examples run in tests/python/test_docs.py
	@$(call HERMETIC,tests/python $(PYTEST_PARALLEL),)

# The CPU kernels once more with the portable baseline variant forced (the machine would pick
# AVX2 or AVX-512): the array and ops tests, which sweep every ufunc, cast and reduction against NumPy.
test-baseline: build $(VENV)/.xdist
	CUPRIC_CPU_TARGETS=baseline $(PY) -m pytest tests/python/array tests/python/ops tests/python/random -q \
		$(PYTEST_PARALLEL) $(PYTEST_ARGS)

# Third-party clients (scikit-learn, SciPy, Dask, xarray, ...) on cupric arrays, against NumPy.
$(VENV)/.clients: $(VENV)/.deps tests/integration/requirements.txt
	$(PIP) install -q -r tests/integration/requirements.txt
	touch $@

test-integration: build $(VENV)/.clients  # (matplotlib keeps its font cache in HOME: only cupric's is checked)
	@$(call HERMETIC,tests/integration,-path ./.cache/cupric)

test-cpp: build
	cd $(BUILD) && ctest --output-on-failure

# The Array API conformance suite from ../shared (SHARED=...), on the CPU unless CUPRIC_DEVICE says
# otherwise; fails below the floor in tests/conformance_floor.txt (RAISE=1 raises the floor).
SHARED ?= ../shared
$(VENV)/.conformance-deps: $(VENV)/.deps
	$(PIP) install -q "hypothesis>=6.151" "ndindex>=1.8" pytest-json-report
	touch $@

conformance: build $(VENV)/.conformance-deps
	CUPRIC_DEVICE=$${CUPRIC_DEVICE:-cpu} $(PY) tools/conformance.py --shared $(SHARED) $(if $(RAISE),--raise-floor)

# The README's install line, from this clone into a fresh venv (its own build folder), then the
# README's tour in that venv: what a user without `make` gets.
install-check:
	rm -rf build/install-check && $(PYTHON) -m venv build/install-check/venv
	build/install-check/venv/bin/pip install -q . --config-settings=build-dir=build/install-check/build
	cd build/install-check && CUPRIC_DEVICE=cpu venv/bin/python -c "import cupric, sys; print('cupric', cupric.__version__, 'from', cupric.__file__)"
	sed -n '/^## A 30-second tour/,/^```$$/p' README.md | sed '1,3d;$$d' > build/install-check/tour.py
	cd build/install-check && CUPRIC_DEVICE=cpu venv/bin/python tour.py

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

# Lint (CI): ruff on the Python, clang-format's check of the C++, and every C++ file compiled by
# clang as well (tools/clang_check.py: -fsyntax-only with the build's flags and -Werror, so clang's
# own warnings count too). The linters are pinned wheels in .venv, so every machine agrees.
LINT_TOOLS := "ruff==0.17.6" "clang-format==18.1.8"
CXX_SOURCES = $$(find src include device_include examples tests/cpp tools/probes -name '*.cpp' -o -name '*.hpp' \
	-o -name '*.h' -o -name '*.cuh' -o -name '*.cu')

$(VENV)/.lint-deps: $(VENV)/.deps
	$(PIP) install -q $(LINT_TOOLS)
	touch $@

lint: ruff format-check clang-check

ruff: $(VENV)/.lint-deps
	$(VENV)/bin/ruff check python tests benchmarks examples tools

format-check: $(VENV)/.lint-deps
	$(VENV)/bin/clang-format --dry-run --Werror $(CXX_SOURCES)

format: $(VENV)/.lint-deps
	$(VENV)/bin/clang-format -i $(CXX_SOURCES)

clang-check: build
	$(PY) tools/clang_check.py

clean:
	rm -rf build $(VENV)
