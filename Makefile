# typed-mcp. First commands on a fresh clone: `make generate`, then `make test`.
# The Makefile creates its own virtual environment (.venv) and installs what it needs.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
NODE_STAMP := tests/node/node_modules/.installed
SPEC := specs/weather-api.json
OUT := generated/weather-mcp
PACKAGE := weather-mcp
SPEC_URL ?=

.PHONY: generate test lint demo corpus bench load check build publish clean venv lock

venv: $(STAMP)

# Installed from the lock file (constraints.txt): the same spec gives the same bytes on any machine.
$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit("typed-mcp needs Python 3.10 or newer" if sys.version_info < (3, 10) else 0)'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $(STAMP)

## lock: re-resolve the toolchain from pyproject.toml into constraints.txt (then make generate, and commit both)
lock:
	rm -rf .venv-lock
	$(PYTHON) -m venv .venv-lock
	.venv-lock/bin/python -m pip install --quiet -e '.[dev]'
	{ sed -n '/^#/p' constraints.txt; .venv-lock/bin/python -m pip freeze --exclude-editable | grep -v '^typed-mcp'; } > constraints.txt.new
	mv constraints.txt.new constraints.txt
	rm -rf .venv-lock

# The strict TypeScript MCP client and Prism (a mock API server), from the npm registry, pinned by the lock file.
$(NODE_STAMP): tests/node/package-lock.json
	cd tests/node && npm ci --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

## generate: regenerate generated/ from the snapshot in specs/ (or from SPEC_URL=..., refreshing the snapshot)
generate: $(STAMP)
ifeq ($(SPEC_URL),)
	$(BIN)/typed-mcp generate $(SPEC) --out $(OUT) --package-name $(PACKAGE)
else
	$(BIN)/typed-mcp generate '$(SPEC_URL)' --out $(OUT) --package-name $(PACKAGE) --snapshot $(SPEC)
endif

## lint: ruff on the generator, the tests and the committed generated package (CI runs it before the tests)
lint: $(STAMP)
	$(BIN)/ruff check generator tests bench
	$(BIN)/ruff format --check generator tests bench
	$(BIN)/ruff check --no-cache --force-exclude $(OUT)

## test: the whole test suite
test: $(STAMP) $(NODE_STAMP)
	$(BIN)/python -m pytest

## check: exit 1 when the committed specs/ and generated/ no longer match the live API (SPEC_URL=...) or the snapshot
check: $(STAMP)
ifeq ($(SPEC_URL),)
	$(BIN)/typed-mcp check $(SPEC) --out $(OUT) --package-name $(PACKAGE)
else
	$(BIN)/typed-mcp check '$(SPEC_URL)' --out $(OUT) --package-name $(PACKAGE) --snapshot $(SPEC)
endif

## build: sdist and wheel of the generated package in dist/, checked with twine
build: $(STAMP)
	rm -rf dist/$(PACKAGE)
	$(BIN)/python -m build --sdist --wheel --outdir dist/$(PACKAGE) $(OUT)
	$(BIN)/twine check --strict dist/$(PACKAGE)/*

## publish: upload dist/ with twine to TWINE_REPOSITORY_URL, as TWINE_USERNAME (default __token__) with TWINE_PASSWORD
publish: build
	@test -n "$$TWINE_REPOSITORY_URL" || { echo "set TWINE_REPOSITORY_URL (e.g. https://upload.pypi.org/legacy/) and TWINE_PASSWORD (an API token)"; exit 2; }
	@test -n "$$TWINE_PASSWORD" || { echo "set TWINE_PASSWORD (an API token)"; exit 2; }
	TWINE_USERNAME=$${TWINE_USERNAME:-__token__} $(BIN)/twine upload --non-interactive --repository-url "$$TWINE_REPOSITORY_URL" dist/$(PACKAGE)/*

## demo: start the demo API, generate from its live spec, serve the package and call every tool
demo: $(STAMP)
	PYTHONPATH=tests $(BIN)/python -m harness.demo.run

## corpus: every spec of ../shared/corpus (or CORPUS=...): generate, import, list, fidelity, strict-client calls against Prism; writes reports/corpus.md
CORPUS ?= ../shared/corpus
CORPUS_ARGS ?=
corpus: $(STAMP) $(NODE_STAMP)
	PYTHONPATH=tests $(BIN)/python -m harness.corpus $(CORPUS) --calls --report reports/corpus $(CORPUS_ARGS)

## bench: the generated GitHub server vs FastMCP from_openapi (own venv in bench/); writes bench/RESULTS.md (~20 min)
bench: $(STAMP)
	$(BIN)/python bench/bench.py --runs 3 --markdown bench/RESULTS.md
	$(BIN)/python bench/modes.py --markdown bench/MODES.md
	$(BIN)/python bench/search_quality.py bench/.work/modes-github__api.github.com bench/search_tasks/github.json --peer $(CORPUS)/github__api.github.com.json
	$(BIN)/python bench/search_quality.py bench/.work/modes-cloudflare__openapi bench/search_tasks/cloudflare.json --peer $(CORPUS)/cloudflare__openapi.json

## load: the demo package under uvicorn with 1 and 4 workers, 100 MCP SDK clients, 20,000 calls each (bench/LOAD.md; ~15 min on 2 shared cores)
LOAD_ARGS ?=
load: $(STAMP)
	$(BIN)/python bench/load.py $(LOAD_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache dist
