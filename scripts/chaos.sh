#!/usr/bin/env bash
# The fault-injection suite (docs/reliability.md).
#
#   scripts/chaos.sh [run]      every fault at full length (CHAOS=full); the report
#                               table is also written to $PITBOSS_DATA_DIR/chaos-report.txt
#   SOAK_MINUTES=10 scripts/chaos.sh
#                               the same, then a soak at half the measured peak rate
#   scripts/chaos.sh cluster    the cluster form (make chaos-cluster, or make chaos
#                               CHAOS_CLUSTER=1): three brokers, a PostgreSQL primary
#                               and standby started by scripts/cluster.sh on free ports;
#                               report in $PITBOSS_DATA_DIR/chaos-cluster-report.txt
#   scripts/chaos.sh kafka-stop [seconds]
#                               manual drill on the SHARED broker (the one
#                               scripts/kafka-up.sh started, found by its pid file):
#                               kill -9 it, wait (default 30 s), start it again.
#                               Other people's tests use that broker: only on a
#                               machine of your own.
#
# The suite itself never touches the shared PostgreSQL or Kafka: it starts a
# private cluster and a private broker (same binaries and jars) on free ports,
# so it can kill and restart them. Knobs: CHAOS_RATE, CHAOS_WORKERS,
# CHAOS_PLAYERS, CHAOS_ONLY, CHAOS_KEEP, CHAOS_RACE=1 (server built with -race).
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
PITBOSS_LOG_TAG=chaos
# shellcheck source=scripts/lib.sh
source "$SCRIPT_DIR/lib.sh"
# shellcheck source=scripts/kafka-lib.sh
source "$SCRIPT_DIR/kafka-lib.sh"
# shellcheck source=scripts/pg-lib.sh
source "$SCRIPT_DIR/pg-lib.sh"
cd "$PITBOSS_ROOT"

case "${1:-run}" in
  run)
    mkdir -p "$PITBOSS_DATA_DIR"
    report="$PITBOSS_DATA_DIR/chaos-report.txt"
    minutes="${SOAK_MINUTES:-0}"
    timeout="$(( 40 + minutes * 2 ))m"
    log "full fault-injection suite (soak: ${minutes} min); report: $report"
    CHAOS=full go test -count=1 -v -timeout "$timeout" -run 'TestChaos' ./chaos/ 2>&1 | tee "$report"
    ;;
  cluster)
    mkdir -p "$PITBOSS_DATA_DIR"
    # The packages and jars the cluster needs (no server is started here).
    command -v kcat >/dev/null 2>&1 || apt_install kcat
    ensure_pg_packages
    ensure_java
    ensure_libs
    log "cluster fault-injection suite; report: $PITBOSS_DATA_DIR/chaos-cluster-report.txt"
    CHAOS_CLUSTER=1 go test -count=1 -v -timeout 40m -run 'TestChaosCluster' ./chaos/ 2>&1 | tee "$PITBOSS_DATA_DIR/chaos-cluster.log"
    ;;
  kafka-stop)
    secs="${2:-30}"
    pid="$(kafka_ours_pid)" || die "no broker started by scripts/kafka-up.sh is running"
    log "kill -9 the shared Kafka broker (pid $pid) for ${secs}s"
    kill -KILL "$pid"
    while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
    sleep "$secs"
    bash "$SCRIPT_DIR/kafka-up.sh" >/dev/null
    log "broker is back"
    ;;
  *)
    die "usage: scripts/chaos.sh [run | cluster | kafka-stop [seconds]]"
    ;;
esac
