# Everything a fresh machine needs is installed by these targets, on first use.
#   make demo   - run the bundled five-week scenario on the embedded AWS and print the report
#   make test   - lint the template and state machine, then run every test
#   make bench  - benchmarks (report over a year of checks; one evaluation of a large fleet)
SHELL := /bin/bash
export SAM_CLI_TELEMETRY := 0
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SAM_VENV := .venv-sam
ASL_VALIDATOR := tools/node_modules/.bin/asl-validator

.PHONY: demo test lint unit bench build clean help
help:
	@grep -E '^#   make' Makefile | sed 's/^#   //'

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade "pip>=24"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

$(SAM_VENV)/.installed:
	$(PYTHON) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/python -m pip install --quiet --disable-pip-version-check "aws-sam-cli>=1.120,<2"
	touch $@

$(ASL_VALIDATOR): tools/package.json tools/package-lock.json
	cd tools && npm ci --no-audit --no-fund --loglevel=error
	touch $@

demo: $(BIN)/.installed
	$(BIN)/missed-checks local demo

lint: $(BIN)/.installed $(SAM_VENV)/.installed $(ASL_VALIDATOR)
	$(BIN)/ruff check src functions tests tools
	$(BIN)/cfn-lint template.yaml
	$(SAM_VENV)/bin/sam validate --lint --template-file template.yaml
	$(ASL_VALIDATOR) --json-path statemachines/evaluate_checklist.asl.json

unit: $(BIN)/.installed
	$(BIN)/pytest

test: lint unit

bench: $(BIN)/.installed
	$(BIN)/python tools/bench_report.py
	$(BIN)/python tools/bench_evaluation.py

build: $(SAM_VENV)/.installed
	$(SAM_VENV)/bin/sam build

clean:
	rm -rf $(VENV) $(SAM_VENV) tools/node_modules .aws-sam .pytest_cache .hypothesis
