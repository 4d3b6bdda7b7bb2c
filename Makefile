# Everything a fresh machine needs is installed by these targets, on first use.
#   make demo   - run the bundled five-week scenario on the embedded AWS and print the report
#   make quick  - the fast lane: the tests that need no stack, build or process (pytest -m "not stack and not slow")
#   make test   - lint the template and state machine, then run every test (what CI runs)
#   make unit   - every test (pytest), after building the artifacts; make test without the lint
#   make bench  - benchmarks (report over a year of checks; a large fleet's evaluation; cost per window; a site's day-one sizes, BENCH_SITE_ARGS="--only equipment")
#   make chaos  - the demo under random faults (seeds 1-3), recovered and compared with a clean run
#   make build  - sam build into .aws-sam/build (layer and functions; needs a Python 3.13, no Docker)
#   make runtime - the Lambda runtime's own boto3/botocore for the local emulator, .aws-sam/lambda-runtime
#   make artifacts - both of the above
#   make check-layer - build, then check the layer's contents and size
#   make browser - Debian's chromium for the HTML report's browser test (apt-get, when missing)
#   make screenshot - the demo's HTML report, opened in headless Chromium, into docs/report-demo.png
SHELL := /bin/bash
export SAM_CLI_TELEMETRY := 0
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SAM_VENV := .venv-sam
ASL_VALIDATOR := tools/node_modules/.bin/asl-validator

.PHONY: demo test quick lint unit bench chaos build runtime artifacts check-layer browser screenshot clean help FORCE
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

demo: $(BIN)/.installed artifacts
	$(BIN)/missed-checks local demo

lint: $(BIN)/.installed $(SAM_VENV)/.installed $(ASL_VALIDATOR)
	$(BIN)/ruff check src functions tests tools
	$(BIN)/cfn-lint template.yaml
	$(SAM_VENV)/bin/sam validate --lint --template-file template.yaml
	$(ASL_VALIDATOR) --json-path statemachines/evaluate_checklist.asl.json

unit: $(BIN)/.installed artifacts browser
	$(BIN)/pytest $(PYTEST_ARGS)

test: lint check-layer unit

# The fast lane: only the venv. Tests that provision a stack, run the Lambda emulator or other
# processes, or need make's artifacts are marked `stack` by tests/conftest.py, the few long domain
# tests `slow`; property tests run a tenth of their examples. pytest exits 5 (and make fails) if
# nothing was collected.
quick: $(BIN)/.installed
	$(BIN)/pytest -m "not stack and not slow" --few-examples -q

chaos: $(BIN)/.installed artifacts
	@for seed in 1 2 3; do $(BIN)/missed-checks local chaos --seed $$seed --format json --output .aws-sam/chaos-$$seed.json || exit 1; done

bench: $(BIN)/.installed artifacts
	$(BIN)/python tools/bench_report.py
	$(BIN)/python tools/bench_evaluation.py
	$(BIN)/python tools/bench_cost.py --json .aws-sam/bench-cost.json
	$(BIN)/python tools/bench_site.py $(BENCH_SITE_ARGS)

# --- sam build, without Docker -------------------------------------------------------------------
# The functions are python3.13: SAM's builder insists on a python3.13 on PATH, so a directory
# holding just a `python3.13` (a wrapper for the interpreter tools/find_python313 finds) goes first
# on PATH. The layer is BuildMethod makefile (src/Makefile): pip fetches arm64 CPython 3.13 wheels
# from src/layer-requirements.txt with the SAM virtualenv's pip. `sam build` runs only when an
# input changed (then SAM's own cache, samconfig.toml, rebuilds only what changed).
AWS_SAM := .aws-sam
BUILT := $(AWS_SAM)/build/template.yaml
RUNTIME_DIR := $(AWS_SAM)/lambda-runtime
PYTHON313_FILE := $(RUNTIME_DIR)/python313
PYTHON313_BIN := $(RUNTIME_DIR)/bin/python3.13
BUILD_INPUTS := template.yaml samconfig.toml $(wildcard statemachines/*) src/Makefile src/layer-requirements.txt \
	$(shell find functions src/missed_checks -type f ! -path '*/__pycache__/*' ! -name '*.py[co]' 2>/dev/null)

# The interpreter's path, rewritten only when it changes (so a rebuild follows a new interpreter).
$(PYTHON313_FILE): tools/find_python313 FORCE
	@mkdir -p $(@D)
	@python313="$$(tools/find_python313)" || exit 1; \
	if [ "$$(cat $@ 2>/dev/null)" != "$$python313" ]; then \
		printf '%s\n' "$$python313" > $@; echo "$@: $$python313"; \
	fi

$(PYTHON313_BIN): $(PYTHON313_FILE)
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec "%s" "$$@"\n' "$$(cat $<)" > $@
	chmod +x $@

$(BUILT): $(BUILD_INPUTS) $(PYTHON313_BIN) | $(SAM_VENV)/.installed
	MAKEFLAGS= MAKELEVEL= PATH="$(CURDIR)/$(dir $(PYTHON313_BIN)):$$PATH" \
	LAYER_PIP="$(CURDIR)/$(SAM_VENV)/bin/python -m pip" \
		$(SAM_VENV)/bin/sam build --parallel
	touch $@

build: $(BUILT)

# --- the runtime's own SDK, for the local emulator ---------------------------------------------
# Pure-Python wheels at the Lambda runtime's versions (lambda-runtime/requirements.txt), compiled
# with the Python 3.13 the emulator runs the functions with ($(PYTHON313_FILE)).
$(RUNTIME_DIR)/.installed: lambda-runtime/requirements.txt $(PYTHON313_FILE) | $(SAM_VENV)/.installed
	rm -rf $(RUNTIME_DIR)/python
	$(SAM_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-deps --no-compile \
		--only-binary=:all: --implementation cp --python-version 3.13 --platform manylinux2014_x86_64 \
		--target $(RUNTIME_DIR)/python --requirement lambda-runtime/requirements.txt
	"$$(cat $(PYTHON313_FILE))" -m compileall -q $(RUNTIME_DIR)/python
	touch $@

runtime: $(RUNTIME_DIR)/.installed

artifacts: build runtime

check-layer: $(BIN)/.installed build
	$(BIN)/python tools/check_layer.py

# Debian's chromium, installed with apt-get when /usr/bin/chromium is missing (as root or through
# passwordless sudo); when that is impossible it says why and the browser test fails saying so.
browser:
	@tools/install_chromium

screenshot: $(BIN)/.installed artifacts browser
	$(BIN)/python tools/report_screenshot.py --png docs/report-demo.png

FORCE:

clean:
	rm -rf $(VENV) $(SAM_VENV) tools/node_modules .aws-sam .pytest_cache .hypothesis
