# Two commands on a fresh clone: `make demo` and `make test` (see README.md).
VENV := .venv
STAMP := $(VENV)/.etude-installed

.PHONY: demo test lint format

$(STAMP): pyproject.toml scripts/setup.sh
	bash scripts/setup.sh
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/etude demo

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/pytest

format: $(STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .
