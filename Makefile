# Two commands on a fresh clone: `make demo` and `make test` (see README.md).
# `make demo` installs only what the demo runs; `make test` installs everything the tests use
# (the llama.cpp server included), which also satisfies the demo.
VENV := .venv
DEV_STAMP := $(VENV)/.etude-installed
DEMO_STAMP := $(VENV)/.etude-demo-installed

.PHONY: demo test lint format

$(DEV_STAMP): pyproject.toml scripts/setup.sh
	bash scripts/setup.sh dev
	touch $(DEV_STAMP) $(DEMO_STAMP)

$(DEMO_STAMP): pyproject.toml scripts/setup.sh
	@if [ -f $(DEV_STAMP) ] && [ $(DEV_STAMP) -nt pyproject.toml ] && [ $(DEV_STAMP) -nt scripts/setup.sh ]; then \
		touch $(DEMO_STAMP); else bash scripts/setup.sh demo && touch $(DEMO_STAMP); fi

demo: $(DEMO_STAMP)
	$(VENV)/bin/etude demo

test: $(DEV_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/pytest

format: $(DEV_STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .
