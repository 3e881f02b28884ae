# Pitboss developer entry points. Logic lives in scripts/; recipes stay thin.
#   make infra   start (or reuse) PostgreSQL + Kafka for local work
#   make run     infra + build + migrate + sandbox key + serve
#   make test    go vet + go test -race against the local infra (what CI runs)
#   make down    stop the PostgreSQL/Kafka our scripts started (data is kept)
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

# Scripts are run through bash, so their exec bit does not matter.
SCRIPTS := scripts
# Exports PITBOSS_* (DB URL, Kafka brokers, ...), GOTOOLCHAIN=auto and a PATH with Go.
ENV := set -a && source $(SCRIPTS)/env.sh && set +a

GO_TEST_FLAGS ?= -race -count=1 -timeout 20m
PKGS ?= ./...

.PHONY: all infra build run test down fmt vet clean ensure-go

all: build

ensure-go:
	bash $(SCRIPTS)/ensure-go.sh

infra:
	bash $(SCRIPTS)/infra-up.sh

build:
	$(ENV) && go build -o bin/pitboss ./cmd/pitboss

run: ensure-go infra build
	bash $(SCRIPTS)/run.sh

# Nothing is printed after go test, so its own summary lines end the output.
test: ensure-go infra
	$(ENV) && go vet $(PKGS) && go test $(GO_TEST_FLAGS) $(PKGS)

down:
	bash $(SCRIPTS)/infra-down.sh

fmt:
	$(ENV) && go fmt $(PKGS)

vet:
	$(ENV) && go vet $(PKGS)

# Build output only; .data (databases, Kafka logs) and .cache are kept.
clean:
	rm -rf bin/
