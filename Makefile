# Everything a fresh machine needs is installed by these targets, on first use.
#   make demo   - run the bundled five-week scenario on the embedded AWS and print the report
#   make quick  - the fast lane: the tests that need no stack, build or process (pytest -m "not stack and not slow")
#   make test   - lint, type-check the product, the operator's tools and the emulator, then run every test (what CI runs)
#   make typecheck - mypy --strict on src/missed_checks, src/missed_checks_ops and src/missed_checks_local (config in pyproject.toml)
#   make unit   - every test (pytest), after building the artifacts; make test without the lint
#   make bench  - benchmarks (report over a year of checks; a large fleet's evaluation; cost per window; a site's day-one sizes, BENCH_SITE_ARGS="--only equipment")
#   make chaos  - the demo under random faults (seeds 1-3), recovered and compared with a clean run
#   make build  - sam build into .aws-sam/build (layer and functions; needs a Python 3.13, no Docker)
#   make runtime - the Lambda runtime's own boto3/botocore for the local emulator, .aws-sam/lambda-runtime
#   make artifacts - both of the above
#   make check-layer - build, then check the layer's contents and size
#   make invoke FUNCTION=PlanEvaluationFunction EVENT=events/plan_evaluation.json - the real sam local invoke, in podman (docs/sam-local-invoke.md)
#   make sam-local - what make invoke needs: podman (apt-get), the Lambda base image, this machine's build
#   make browser - Debian's chromium for the browser tests (apt-get, when missing) and axe-core (npm ci)
#   make screenshot - the demo's HTML report, opened in headless Chromium, into docs/report-demo.png
#   make aws-cli - the AWS CLI (v1, from PyPI) in .venv-aws: tests read what the stack holds back through it
SHELL := /bin/bash
export SAM_CLI_TELEMETRY := 0
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SAM_VENV := .venv-sam
AWS_VENV := .venv-aws
ASL_VALIDATOR := tools/node_modules/.bin/asl-validator
# axe-core's browser script: the web app's browser test injects it into each page (tests/e2e/test_webapp_browser.py)
AXE := tools/node_modules/axe-core/axe.min.js

.PHONY: demo test quick lint typecheck unit bench chaos build runtime artifacts check-layer browser screenshot clean help FORCE \
	invoke sam-local sam-local-engine sam-local-image sam-local-for-tests aws-cli
help:
	@sed -n '/^[^#]/q; s/^#   //p' Makefile

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade "pip>=24"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

$(SAM_VENV)/.installed:
	$(PYTHON) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/python -m pip install --quiet --disable-pip-version-check "aws-sam-cli>=1.120,<2"
	touch $@

# The AWS CLI v1 (pip's awscli; v2 is not on PyPI) in a venv of its own, so that its botocore does not
# pin the project's: tests read what a stack holds back through it against the local endpoint, as
# a user does (tests/aws_cli.py; docs/testing.md).
$(AWS_VENV)/.installed:
	$(PYTHON) -m venv $(AWS_VENV)
	$(AWS_VENV)/bin/python -m pip install --quiet --disable-pip-version-check "awscli>=1.32,<2"
	touch $@

aws-cli: $(AWS_VENV)/.installed

$(ASL_VALIDATOR) $(AXE) &: tools/package.json tools/package-lock.json
	cd tools && npm ci --no-audit --no-fund --loglevel=error
	touch $(ASL_VALIDATOR) $(AXE)

demo: $(BIN)/.installed artifacts
	$(BIN)/missed-checks local demo

# The four template, policy and state machine checks run side by side (each is one process of a few
# seconds), each one's output printed after it, in this order; any failure fails the target.
# tools/lint_policies.py: parliament on every IAM policy of the transformed template, clean but for
# the findings tools/policy-lint-allow.json allows with a reason.
LINTERS := "$(BIN)/cfn-lint template.yaml" \
	"$(SAM_VENV)/bin/sam validate --lint --template-file template.yaml" \
	"$(ASL_VALIDATOR) --json-path statemachines/evaluate_checklist.asl.json" \
	"$(BIN)/python tools/lint_policies.py"

lint: $(BIN)/.installed $(SAM_VENV)/.installed $(ASL_VALIDATOR)
	$(BIN)/ruff check src functions tests tools
	@out=$$(mktemp -d); trap 'rm -rf "$$out"' EXIT; n=0; \
	for command in $(LINTERS); do n=$$((n + 1)); $$command > "$$out/$$n" 2>&1 & echo $$! > "$$out/$$n.pid"; done; \
	status=0; n=0; \
	for command in $(LINTERS); do n=$$((n + 1)); echo "$$command"; \
		if wait "$$(cat "$$out/$$n.pid")"; then cat "$$out/$$n"; else cat "$$out/$$n"; echo "FAILED: $$command"; status=1; fi; \
	done; exit $$status

typecheck: $(BIN)/.installed
	$(BIN)/mypy

# pytest keeps each test module's assertion rewrite (and Python the project's bytecode) in
# __pycache__, even where the environment says PYTHONDONTWRITEBYTECODE: without that cache every run
# rewrites all 140 test modules again (about 2 s of CPU before the first test).
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest

# The suite runs in TEST_WORKERS pytest-xdist processes (default: this machine's cores plus one, at
# most 4: the tests wait on processes of their own, so one more worker fills those waits), each
# handed whole test files, longest directories first (tests/conftest.py); each process has its own
# embedded AWS and shared stack. TEST_WORKERS=0 runs it in this one process.
TEST_WORKERS ?= $(shell n=$$(( $$(nproc 2>/dev/null || echo 1) + 1 )); [ $$n -gt 4 ] && n=4; echo $$n)
# The fast lane's tests never wait: one worker per core (a third one on 2 cores cost it 2 s).
QUICK_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ $$n -gt 4 ] && n=4; echo $$n)

unit: $(BIN)/.installed artifacts browser sam-local-for-tests $(AWS_VENV)/.installed
	$(PYTEST) -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

test: lint typecheck check-layer unit

# The fast lane: only the venv. Tests that provision a stack, run the Lambda emulator or other
# processes, or need make's artifacts are marked `stack` by tests/conftest.py, the few long domain
# tests `slow`; property tests run the `quick` hypothesis profile (a tenth of `ci`'s examples, see
# tests/conftest.py). pytest-randomly shuffles the order (the seed is printed at the end: rerun with
# `-p randomly --randomly-seed=N`). pytest exits 5 (and make fails) if nothing was collected.
quick: $(BIN)/.installed
	$(PYTEST) -n $(QUICK_WORKERS) -m "not stack and not slow" --hypothesis-profile quick -q

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

# --- sam local invoke, on podman (docs/sam-local-invoke.md) ------------------------------------
# The real SAM CLI runs a function in a Lambda container: podman (Debian's, installed on first use,
# configured by tools/sam_local/containers.conf) behind a Docker-compatible socket started for the
# invoke; the base image public.ecr.aws/lambda/python:3.13-ARCH built here from Debian packages
# (rebuilt only when its inputs change); the functions and layer built for this machine's own
# architecture (Architecture=x86_64 on x86_64), byte-compiled once, so nothing is emulated.
#   make invoke FUNCTION=... EVENT=...                      against `missed-checks local serve --host 0.0.0.0`
#   make invoke FUNCTION=... EVENT=... ENV_VARS=env.json REGION=...   against a deployed stack
SAM_LOCAL := $(AWS_SAM)/sam-local
SAM_LOCAL_ARCH := $(if $(filter aarch64 arm64,$(shell uname -m)),arm64,x86_64)
SAM_LOCAL_MACHINE := $(if $(filter arm64,$(SAM_LOCAL_ARCH)),aarch64,x86_64)
SAM_LOCAL_BUILT := $(SAM_LOCAL)/build/template.yaml

sam-local-engine:
	@tools/sam_local/engine install

sam-local-image: sam-local-engine $(PYTHON313_FILE) | $(SAM_VENV)/.installed
	@PIP="$(SAM_VENV)/bin/python -m pip" PYTHON313="$$(cat $(PYTHON313_FILE))" \
		tools/sam_local/base_image $(SAM_LOCAL_ARCH) $(SAM_LOCAL)

$(SAM_LOCAL_BUILT): $(BUILD_INPUTS) $(PYTHON313_BIN) | $(SAM_VENV)/.installed
	MAKEFLAGS= MAKELEVEL= PATH="$(CURDIR)/$(dir $(PYTHON313_BIN)):$$PATH" \
	LAYER_PIP="$(CURDIR)/$(SAM_VENV)/bin/python -m pip" LAYER_MACHINE=$(SAM_LOCAL_MACHINE) \
		$(SAM_VENV)/bin/sam build --parallel --build-dir $(SAM_LOCAL)/build --cache-dir $(SAM_LOCAL)/cache \
		--parameter-overrides Architecture=$(SAM_LOCAL_ARCH)
	"$$(cat $(PYTHON313_FILE))" -m compileall -q --invalidation-mode unchecked-hash $(SAM_LOCAL)/build
	touch $@

sam-local: sam-local-image $(SAM_LOCAL_BUILT)

# For make test: like the browser, a machine that cannot run containers does not stop the other
# tests; the sam_local tests then fail, naming what is missing (the reason is printed here).
sam-local-for-tests:
	@$(MAKE) --no-print-directory sam-local || echo "sam-local: sam local invoke cannot run here (see above);" \
		"the sam_local tests will fail saying so" >&2

# Standard output carries the handler's result alone: what the set-up prints (make's own echo of
# its commands included) goes to standard error.
invoke:
	@test -n "$(FUNCTION)" -a -n "$(EVENT)" || { echo "make invoke: give FUNCTION=<logical id> EVENT=<file>," \
		"e.g. make invoke FUNCTION=PlanEvaluationFunction EVENT=events/plan_evaluation.json" >&2; exit 2; }
	@$(MAKE) --no-print-directory $(BIN)/.installed sam-local >&2
	@$(BIN)/python tools/sam_local/invoke.py "$(FUNCTION)" "$(EVENT)" --architecture $(SAM_LOCAL_ARCH) \
		$(if $(ENV_VARS),--env-vars "$(ENV_VARS)") $(if $(REGION),--region "$(REGION)") \
		$(if $(ENDPOINT),--endpoint "$(ENDPOINT)")

# Debian's chromium, installed with apt-get when /usr/bin/chromium is missing (as root or through
# passwordless sudo); when that is impossible it says why and the browser test fails saying so.
# And axe-core (tools/package.json, npm ci), which the web app's browser test runs in each page.
browser: $(AXE)
	@tools/install_chromium

screenshot: $(BIN)/.installed artifacts browser
	$(BIN)/python tools/report_screenshot.py --png docs/report-demo.png

FORCE:

clean:
	rm -rf $(VENV) $(SAM_VENV) $(AWS_VENV) tools/node_modules .aws-sam .pytest_cache .hypothesis
