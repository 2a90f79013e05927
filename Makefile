# Two entry points for a fresh machine: `make demo` and `make test`.
# Each creates the virtual environment when missing; torch is installed first, pinned,
# from PyTorch's CPU index, so that nothing later pulls a multi-GB CUDA build. --retries 1:
# where that index cannot be reached, pip turns to its other sources in seconds, not minutes.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint docs install clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --retries 1 torch==2.13.0 --extra-index-url https://download.pytorch.org/whl/cpu
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/agentmem demo

test: $(STAMP)
	$(VENV)/bin/ruff check langchain_agentmem tests benchmarks
	$(VENV)/bin/mypy
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet --site-dir site
	$(PY) -m pytest -q -n auto --maxprocesses 4

lint: $(STAMP)
	$(VENV)/bin/ruff check langchain_agentmem tests benchmarks
	$(VENV)/bin/ruff format --check langchain_agentmem tests benchmarks
	$(VENV)/bin/mypy

docs: $(STAMP)
	$(VENV)/bin/mkdocs serve

clean:
	rm -rf $(VENV) site
