# pdpx: two commands on a fresh machine, `make demo` and `make test`.
# Each runs `setup` first; `setup` is idempotent and quick when nothing changed.

SHELL := /bin/bash
VENV  := $(CURDIR)/.venv
PY    := $(VENV)/bin/python
STAMP := $(VENV)/.pdpx-installed
APT_PACKAGES := r-base-core r-base-dev r-cran-randomforest r-cran-reticulate r-cran-testthat r-cran-ggplot2 \
                r-cran-ranger r-cran-gbm r-cran-e1071 r-cran-mass r-cran-nnet r-cran-kernlab r-cran-earth \
                r-cran-mda r-cran-party r-cran-ipred r-cran-caret r-cran-rpart chromium chromium-driver \
                default-jre-headless
export PDPX_PYTHON := $(PY)
export OMP_NUM_THREADS ?= 2
# R asks systemd for the time zone when TZ is unset (a harmless "System has not been booted with systemd" line)
export TZ ?= UTC

.PHONY: setup system-packages demo test test-fast lint test-python test-r check-r bench gallery docs clean fuzz

setup: system-packages $(STAMP)

# Debian packages (R and the R packages the R side uses). Skipped when present.
system-packages:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" != 0 ]; then SUDO=sudo; else SUDO=; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

$(VENV)/bin/python:
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip

# Reinstalled when pyproject.toml changes. rpy2 is pinned to 3.5.17 (3.6 fails with R 4.2.2).
# contrib/pdpx-catboost is a separate distribution (the CatBoost plugin), installed editable.
# Then the tree kernels are compiled into numba's cache (a process per core, at most 4, each with about the same
# compile time), so that the first call of a session only loads them.
$(STAMP): pyproject.toml contrib/pdpx-catboost/pyproject.toml $(VENV)/bin/python
	$(VENV)/bin/pip install -q -e ".[all,test,r,docs]"
	$(VENV)/bin/pip install -q -e contrib/pdpx-catboost
	$(PY) -m pdpx.plugins.trees.warmup
	touch $(STAMP)

demo: setup
	$(VENV)/bin/pdpx demo

test: setup lint test-python test-r check-r

# House rules (docs/architecture.md): ruff (lint, docstrings) and import-linter (layers, no cycles,
# core names no model library), contracts in pyproject.toml.
lint:
	$(VENV)/bin/ruff check src tests benchmarks contrib
	$(VENV)/bin/lint-imports

# pytest on TEST_WORKERS processes (pytest-xdist, in the test extra): --dist loadgroup with tests/conftest.py's
# groups keeps a module's tests on one worker (module fixtures built once) and every Spark test on one (one JVM);
# the kernels are compiled once, in the controller, before the workers start.
TEST_WORKERS ?= 2
PYTEST := $(PY) -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder

test-python:
	$(PYTEST) --durations=30

# The inner loop (docs/architecture.md): the house rules and every Python test not marked slow (tests/conftest.py's
# SLOW table: Spark, R processes, notebooks, the docs site, generated models, fresh-cache compiles, ...).
# make test runs them all.
test-fast: setup lint
	$(PYTEST) -m "not slow" --durations=10

test-r:
	cd r/pdpx && PDPX_PYTHON=$(PY) Rscript -e 'testthat::test_local(".", reporter = "summary", stop_on_failure = TRUE)'

# R CMD check of the R package: built into a temporary directory, no errors or warnings allowed
# (examples find Python through PDPX_PYTHON; suggested packages that are absent are not forced). Its testthat
# files ran in test-r just before, so the check does not run them a second time (--no-tests).
check-r:
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	cp -r r/pdpx "$$tmp/pdpx" && cd "$$tmp" && R CMD build --no-build-vignettes pdpx >/dev/null && \
	_R_CHECK_FORCE_SUGGESTS_=false PDPX_PYTHON=$(PY) R CMD check --no-manual --no-tests pdpx_*.tar.gz >check.log 2>&1; \
	status=$$?; grep -E "^(Status|\* checking.*(ERROR|WARNING))" check.log; \
	if [ $$status -ne 0 ] || grep -qE "^Status:.*(ERROR|WARNING)" check.log; then \
	  cat check.log; cat pdpx.Rcheck/00check.log 2>/dev/null | tail -50; exit 1; fi

# The tree kernels are compiled first (a second or two when numba's cache is current): a kernel whose source
# changed since the last warm-up would otherwise compile during the run, and calls would take brute meanwhile.
# The cold start has rows of its own (bench_first_call, bench_trees' cold start), in fresh processes.
bench: setup
	$(PY) -m pdpx.plugins.trees.warmup
	$(PY) benchmarks/run.py

# Random fitted models (tests/test_generated_models.py) against the definition, with many more examples than
# make test draws, not derandomized: about 25 minutes. PDPX_FUZZ_EXAMPLES sets the examples per model family,
# PDPX_FUZZ_STRICT=1 fails on a TreeMismatchWarning.
fuzz: setup
	PDPX_FUZZ=1 $(PY) -m pytest -q -s -p no:cacheprovider --hypothesis-show-statistics tests/test_generated_models.py

# The documentation site, in site/ (a warning or a broken link fails the build; the tests build it too).
docs: setup
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

gallery: setup
	$(PY) -m pdpx.demo.gallery docs/gallery

clean:
	rm -rf $(VENV) demo-output .pytest_cache site
