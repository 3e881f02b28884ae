# Pitboss developer entry points. Logic lives in scripts/; recipes stay thin.
#   make infra   start (or reuse) PostgreSQL + Kafka for local work
#   make run     infra + build + migrate + sandbox key + serve
#   make test    go vet + go test -race against the local infra (what CI runs)
#   make down    stop the PostgreSQL/Kafka our scripts started (data is kept)
#   make chaos   the full fault-injection suite (SOAK_MINUTES=10 adds a soak)
#   make bench   the benchmark, report in out/bench/<time>/ (BENCH_QUICK=1: 3 s steps)
#   make cluster three Kafka brokers, a PostgreSQL primary + standby, the roles as processes
#   make cluster-down   stop it (data in .data/cluster is kept)
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

# Scripts are run through bash, so their exec bit does not matter.
SCRIPTS := scripts
# Exports PITBOSS_* (DB URL, Kafka brokers, ...), GOTOOLCHAIN=auto and a PATH with Go.
ENV := set -a && source $(SCRIPTS)/env.sh && set +a

# Packages tested at once: the CPUs, and at least 3 — most of a package's
# time is waiting on PostgreSQL and Kafka, so on a 2-core box a third
# package keeps the cores busy (make test: 366 s with 2, 336 s with 3,
# 2026-11-29, docs/testing.md).
GO_TEST_P ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ $$n -lt 3 ] && n=3; echo $$n)
GO_TEST_FLAGS ?= -race -count=1 -timeout 20m -p $(GO_TEST_P)
PKGS ?= ./...

.PHONY: all infra build run test down fmt vet clean ensure-go ensure-chromium ensure-console-assets ensure-schemathesis vulncheck chaos bench cluster cluster-down chaos-cluster

all: build

ensure-go:
	bash $(SCRIPTS)/ensure-go.sh

# Headless Chromium (Debian's chromium) for the demo game's browser test.
ensure-chromium:
	bash $(SCRIPTS)/ensure-chromium.sh

# uPlot for the console's charts, vendored from npm at the version the lock
# file pins into the git-ignored console/assets/vendor/ (docs/console.md).
ensure-console-assets:
	bash $(SCRIPTS)/ensure-console-assets.sh

# Schemathesis (PyPI) in a virtualenv under .cache/, for the OpenAPI-driven
# API fuzzer in api/schemathesis_test.go.
ensure-schemathesis:
	bash $(SCRIPTS)/ensure-schemathesis.sh

infra:
	bash $(SCRIPTS)/infra-up.sh

build: ensure-console-assets
	$(ENV) && go build -o bin/pitboss ./cmd/pitboss

run: ensure-go ensure-console-assets infra build
	bash $(SCRIPTS)/run.sh

# Known vulnerabilities in code we call (scripts/vulncheck.sh): against
# the offline snapshot of the Go vulnerability database at ../shared/vulndb
# (or PITBOSS_VULNDB) when there is one, its date printed with the result;
# else vuln.go.dev. Found vulnerabilities (exit 3) fail.
vulncheck: ensure-go
	bash $(SCRIPTS)/vulncheck.sh

# go test -json goes through cmd/testtimes, which prints what a plain go test
# would (package results, failed tests' output), then the slowest tests and
# packages; pipefail keeps go test's exit code.
# CLUSTER_TEST=0 leaves out the cluster form's short run (one broker kill,
# one primary promotion on a cluster of its own; ~2 min, ~2 GB of memory).
CLUSTER_TEST ?= 1
test: ensure-go ensure-chromium ensure-console-assets ensure-schemathesis infra vulncheck
	$(ENV) && export PITBOSS_CLUSTER_TEST=$(CLUSTER_TEST) && go vet $(PKGS) && go build -o bin/testtimes ./cmd/testtimes && \
	  go test -json $(GO_TEST_FLAGS) $(PKGS) | bin/testtimes

# The whole fault-injection suite (docs/reliability.md); `go test` runs its
# short form. SOAK_MINUTES=N adds an N-minute soak at half the peak rate.
chaos: ensure-go infra
	bash $(SCRIPTS)/chaos.sh $(if $(filter 1,$(CHAOS_CLUSTER)),cluster,run)

# The reproducible benchmark (docs/benchmarks.md): wallet throughput and
# latency against pgbench on the same Postgres, relay and projection lag,
# CPU and memory, then the read side on a generated ledger (BENCH_EVENTS,
# 10M; BENCH_QUICK=1: 3 s steps and 200k events).
bench: ensure-go infra
	bash $(SCRIPTS)/bench.sh

down:
	bash $(SCRIPTS)/infra-down.sh

# A local cluster (docs/operations.md): three KRaft brokers (19092-19094),
# a PostgreSQL primary (5434) with a synchronous streaming standby (5435),
# and Pitboss as five processes (two api,relay on 18080/18081, two
# projectors, a forwarder). Prints the settings; logs in .data/cluster/.
cluster: ensure-go ensure-console-assets
	bash $(SCRIPTS)/cluster.sh up

cluster-down:
	bash $(SCRIPTS)/cluster.sh down

# The cluster form of the fault-injection suite (docs/reliability.md): its
# own cluster on free ports through scripts/cluster.sh, every cluster fault
# (broker kill -9, primary kill -9 + promotion, a broker SIGSTOPped, the
# relay standby taking over), report in .data/chaos-cluster-report.txt.
# `make chaos CHAOS_CLUSTER=1` is the same.
chaos-cluster: ensure-go
	bash $(SCRIPTS)/chaos.sh cluster

fmt:
	$(ENV) && go fmt $(PKGS)

vet:
	$(ENV) && go vet $(PKGS)

# Build output only; .data (databases, Kafka logs) and .cache are kept.
clean:
	rm -rf bin/
