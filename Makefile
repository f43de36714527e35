# The two commands of the README: `make grade` and `make test`. Both set everything up first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: grade test setup system lint

grade: setup  ## grade the bundled reference submission (full marks expected)
	$(BIN)/normlab grade solutions

test: setup  ## the project's whole test suite
	$(BIN)/python -m pytest

setup: system $(VENV)/.installed

system:  ## Debian packages the sandbox and the browser tests use (installed only as root)
	@.ci/system-packages

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,nbgrader,docs,crosscheck]'
	$(BIN)/normlab environment  # the interpreter environment student code runs in
	touch $@

lint: setup
	$(BIN)/ruff check grader tests
	$(BIN)/mypy
