# The two commands of the README: `make demo` and `make test`. Both create the virtualenv first.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Three workers on a two-core machine: most integration tests wait on servers (sessions,
# rebalances, JVMs starting), not on a core, so a third worker fills those waits; no test
# asserts a wall-clock time. A test module stays on one worker, so its module-scoped servers
# start once.
PYTEST_ARGS ?= -n 3 --dist loadfile --durations=25

.PHONY: install demo test lint figures clean

install: $(STAMP)

$(STAMP): pyproject.toml zkconsumer/datapath/_speedups.c
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@# setuptools' notices about its own experimental options are for packagers, not users.
	PYTHONWARNINGS=ignore $(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: install
	$(VENV)/bin/zkconsumer demo

# Where a C compiler exists the C extension must have been built: a missing one fails the run.
test: install
	ZKCONSUMER_REQUIRE_SPEEDUPS=$$(command -v cc >/dev/null 2>&1 && echo 1 || echo 0) $(PY) -m pytest $(PYTEST_ARGS)

figures: install
	$(VENV)/bin/zkconsumer figures

lint: install
	$(VENV)/bin/ruff check zkconsumer tests benchmarks

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
