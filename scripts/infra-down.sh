#!/usr/bin/env bash
# Stop the PostgreSQL cluster and Kafka broker that scripts/*-up.sh started.
# Servers we merely reused (not started by our scripts) are left alone.
# Data in $PITBOSS_DATA_DIR is kept; `rm -rf .data` after this for a clean slate.
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
PITBOSS_LOG_TAG=infra-down
# shellcheck source=scripts/lib.sh
source "$SCRIPT_DIR/lib.sh"
# shellcheck source=scripts/pg-lib.sh
source "$SCRIPT_DIR/pg-lib.sh"
# shellcheck source=scripts/kafka-lib.sh
source "$SCRIPT_DIR/kafka-lib.sh"

STOP_TIMEOUT="${PITBOSS_STOP_TIMEOUT:-30}"
rc=0

# --- Kafka: SIGTERM (controlled shutdown), SIGKILL after the timeout.
if pid="$(kafka_ours_pid)"; then
  log "stopping Kafka (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  deadline=$(( $(date +%s) + STOP_TIMEOUT ))
  while kill -0 "$pid" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.5; done
  if kill -0 "$pid" 2>/dev/null; then
    log "Kafka did not stop within ${STOP_TIMEOUT}s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    sleep 1
  fi
  if kill -0 "$pid" 2>/dev/null; then log "Kafka (pid $pid) is still running"; rc=1
  else rm -f "$KAFKA_PIDFILE"; log "Kafka stopped"; fi
else
  rm -f "$KAFKA_PIDFILE"
  log "Kafka: no broker started by our scripts is running (nothing to stop)"
fi

# --- PostgreSQL: pg_ctl stop -m fast, immediate as a fallback.
pg_resolve_paths
if pid="$(pg_ours_pid)"; then
  ver="$(cat "$PG_CLUSTER/PG_VERSION" 2>/dev/null || true)"
  if [ -n "$ver" ] && [ -x "/usr/lib/postgresql/$ver/bin/pg_ctl" ]; then
    PG_BIN="/usr/lib/postgresql/$ver/bin"
  else
    PG_BIN="$(pg_bin_dir)" || die "pg_ctl not found"
  fi
  log "stopping PostgreSQL (pid $pid, $PG_CLUSTER)"
  if ! pg_run timeout $(( STOP_TIMEOUT + 10 )) "$PG_BIN/pg_ctl" stop -D "$PG_CLUSTER" -m fast -w -t "$STOP_TIMEOUT" -s </dev/null; then
    log "fast shutdown did not finish; trying immediate"
    pg_run timeout 20 "$PG_BIN/pg_ctl" stop -D "$PG_CLUSTER" -m immediate -w -t 15 -s </dev/null || rc=1
  fi
  if pg_ours_running; then log "PostgreSQL is still running"; rc=1; else log "PostgreSQL stopped"; fi
else
  log "PostgreSQL: no cluster started by our scripts is running (nothing to stop)"
fi
exit "$rc"
