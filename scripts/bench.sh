#!/usr/bin/env bash
# `make bench`: Pitboss's reproducible benchmark (docs/benchmarks.md).
#   1. PostgreSQL and Kafka (scripts/infra-up.sh); pgbench comes with PostgreSQL
#   2. build bin/pitboss and bin/pitboss-bench
#   3. bin/pitboss-bench: drops and recreates its own databases (pitboss_bench,
#      pitboss_bench_read; never the dev database), runs `pitboss serve` on a
#      topic of its own, drives the provider wallet over HTTP, runs pgbench as
#      the baseline, runs the same steps again with the client in seamless mode
#      over `pitboss operator-sim` (5 ms per wallet call), loads and times the
#      read side, and writes the report to
#      out/bench/<timestamp>/ (report.md, results.json, *.svg).
# Settings (environment): BENCH_QUICK=1 (3 s steps, 200k events), BENCH_DURATION,
# BENCH_STEPS, BENCH_RATE, BENCH_PLAYERS, BENCH_EVENTS, BENCH_SKIP_WRITE=1,
# BENCH_SKIP_READ=1, BENCH_SKIP_PGBENCH=1, BENCH_SKIP_SEAMLESS=1, BENCH_OPERATOR_LATENCY=5ms, BENCH_PROTOCOL=caleta|evolution|redtiger|tbb, ... (bin/pitboss-bench -h lists all).
# Arguments are passed to bin/pitboss-bench.
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
PITBOSS_LOG_TAG=bench
# shellcheck source=scripts/lib.sh
source "$SCRIPT_DIR/lib.sh"
cd "$PITBOSS_ROOT"

eval "$(bash "$SCRIPT_DIR/infra-up.sh")"

if ! command -v pgbench >/dev/null 2>&1; then
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/pgbench" ] && PATH="$d:$PATH"
  done
  command -v pgbench >/dev/null 2>&1 || die "pgbench not found (it comes with PostgreSQL: scripts/postgres-up.sh installs it)"
fi

log "building bin/pitboss and bin/pitboss-bench"
go build -o bin/pitboss ./cmd/pitboss
go build -o bin/pitboss-bench ./cmd/pitboss-bench

log "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
exec bin/pitboss-bench run -pitboss "$PITBOSS_ROOT/bin/pitboss" -root "$PITBOSS_ROOT" "$@"
