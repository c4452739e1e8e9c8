# meldstream: `make help` lists the targets. Every target sets up what it needs first.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PROTO_OUT := libs/rummy_proto/src
PROTO_FILES := $(shell find protos -name '*.proto' -not -path 'protos/third_party/*' 2>/dev/null)
# Local packages, installed editable; libs/ are imported, services/ are run, benches/ is the `make bench-*`
# programs (never in a service image: deploy/service.Dockerfile builds libs/ and services/ only).
PACKAGES := libs/rummy_rules libs/rummy_proto libs/rummy_store libs/rummy_infra libs/rummy_service libs/rummy_contracts libs/rummy_client services/identity services/engine services/web services/cli services/matchmaking services/scoring benches
PYTEST_ARGS ?=

.PHONY: help setup venv protos infra oidc-provider web-tools run test test-unit lint lint-kube fmt screenshots bench bench-rules bench-eventlog bench-engine bench-platform bench-web go-client kafka-up kafka-down redis-up redis-down clean

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[1m%-16s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

setup: venv protos infra oidc-provider web-tools ## everything: Python packages, generated code, local Kafka and Redis, the tests' OpenID provider, the web app's npm tools

venv: $(VENV)/.installed ## the virtualenv with pinned dependencies and the local packages

# Makefile is a prerequisite too: a package added to PACKAGES must reach existing virtualenvs.
$(VENV)/.installed: requirements/lock.txt Makefile $(foreach p,$(PACKAGES),$(p)/pyproject.toml)
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements/lock.txt
	$(BIN)/pip install --quiet --no-deps $(foreach p,$(PACKAGES),-e $(p))
	@touch $@

protos: $(PROTO_OUT)/.generated ## generate Python, gRPC and typed stubs from protos/

$(PROTO_OUT)/.generated: $(VENV)/.installed $(PROTO_FILES)
	@rm -rf $(PROTO_OUT)/rummy
	@if [ -n "$(PROTO_FILES)" ]; then \
	  $(BIN)/python -m grpc_tools.protoc -I protos --python_out=$(PROTO_OUT) --grpc_python_out=$(PROTO_OUT) \
	    --mypy_out=$(PROTO_OUT) --mypy_grpc_out=$(PROTO_OUT) --plugin=protoc-gen-mypy=$(BIN)/protoc-gen-mypy \
	    --plugin=protoc-gen-mypy_grpc=$(BIN)/protoc-gen-mypy_grpc $(PROTO_FILES); \
	  find $(PROTO_OUT)/rummy -type d -exec touch {}/py.typed \; ; \
	fi
	@touch $@

infra: ## fetch Apache Kafka (Maven Central), install redis-server and chromium + chromedriver (Debian) if missing
	deploy/local/kafka.sh fetch
	deploy/local/redis.sh install
	@command -v chromedriver >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null; }

oidc-provider: ## the OpenID provider the tests sign in with (zitadel/oidc's example, Go module proxy) into .local/bin, once
	deploy/local/oidc-provider/build.sh

web-tools: tools/web/node_modules/.installed ## the pinned npm packages of tools/web (SortableJS as vendored, axe-core for the browser tests), once

tools/web/node_modules/.installed: tools/web/package-lock.json
	npm ci --prefix tools/web --no-audit --no-fund --loglevel=error
	@touch $@

run: venv protos ## run the platform on the embedded default (no servers needed)
	$(BIN)/meldstream run

test: setup go-client ## the whole suite: unit, property, contract, integration (real Kafka + Redis), e2e
	$(BIN)/pytest $(PYTEST_ARGS)

go-client: venv ## the Go client (clients/go): plugins from the Go module proxy, code generated from protos/
	clients/go/build.sh

test-unit: venv protos ## fast inner loop: tests that need no servers
	$(BIN)/pytest -m "not integration and not slow" $(PYTEST_ARGS)

lint: venv protos ## ruff, mypy (strict), buf lint and buf breaking against the released protos, deploy/k8s rendered and validated offline, deploy/compose.yaml loaded by compose-go
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy -p rummy_rules -p rummy_store -p rummy_infra -p meldstream_cli -p meldstream_web
	$(BIN)/mypy services/web/tests tests/browser services/cli/tests
	$(BIN)/mypy -p rummy_service -p rummy_contracts -p rummy_client -p rummy_engine
	$(BIN)/mypy conftest.py tests libs/rummy_store/tests tools/conformance
	$(BIN)/mypy services/engine/tests libs/rummy_service/tests libs/rummy_contracts/tests
	$(BIN)/mypy -p rummy_matchmaking -p rummy_scoring -p rummy_identity -p meldstream_benches
	$(BIN)/mypy services/matchmaking/tests services/scoring/tests services/identity/tests benches/tests
	deploy/local/buf.sh lint
	deploy/local/buf-breaking.sh
	deploy/k8s/validate.sh
	deploy/compose-check/check.sh

lint-kube: venv protos ## render deploy/k8s with kustomize (built once) and validate every object against the Kubernetes schemas
	deploy/k8s/validate.sh

fmt: venv ## format and autofix
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

screenshots: venv protos web-tools ## the card table's browser test, then its newest screenshots (desktop and phone width) into docs/
	@command -v chromedriver >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null; }
	$(BIN)/pytest -p no:cacheprovider -q tests/browser/test_card_table.py
	cp tests/browser/screenshots/table-selected.png docs/players/table.png
	cp tests/browser/screenshots/table-phone.png docs/players/table-phone.png
	cp tests/browser/screenshots/table-game-over.png docs/web-table.png

bench: bench-rules bench-eventlog bench-engine bench-scale bench-platform bench-web ## every benchmark

# The benchmarks start services on throwaway stores with the public development secrets.
bench bench-eventlog bench-engine bench-scale bench-platform: export MELDSTREAM_DEV = 1

bench-rules: venv ## rules engine throughput vs OpenSpiel and RLCard, same machine, same run
	@$(BIN)/pip install --quiet -r requirements/bench.txt || echo "bench-rules: peers not installed (pip install -r requirements/bench.txt failed); measuring meldstream only" >&2
	$(BIN)/python -m meldstream_benches.rules $(BENCH_ARGS)

bench-eventlog: setup ## Kafka append latency, snapshot load, rebuild throughput
	$(BIN)/python -m meldstream_benches.eventlog

bench-engine: setup ## engine action latency p50/p99 and actions/s, many concurrent games, beside a bare gRPC round trip
	$(BIN)/python -m meldstream_benches.engine $(BENCH_ARGS)

bench-scale: setup go-client ## 1, 2 and 4 engine processes on the same load (CPU/action per engine, Kafka and Redis per action), join and leave, recovery after an engine or broker SIGKILL
	$(BIN)/python -m meldstream_benches.engine_scale $(BENCH_ARGS)

bench-platform: setup ## matchmaking throughput (tickets/s to seat a large queue) and scoring lag under load
	$(BIN)/python -m meldstream_benches.matchmaking
	$(BIN)/python -m meldstream_benches.scoring

bench-web: venv protos ## the web table's budgets: first paint, page weight, click to updated table (headless chromium on `meldstream run`)
	@command -v chromedriver >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null; }
	$(BIN)/python -m meldstream_benches.web $(BENCH_ARGS)

kafka-up: ## start the local Kafka broker (loopback)
	deploy/local/kafka.sh start
kafka-down: ## stop the local Kafka broker
	deploy/local/kafka.sh stop
redis-up: ## start the local Redis server (loopback)
	deploy/local/redis.sh start
redis-down: ## stop the local Redis server
	deploy/local/redis.sh stop

clean: ## remove the virtualenv, generated code and local server data
	rm -rf $(VENV) $(PROTO_OUT)/rummy $(PROTO_OUT)/.generated .local
