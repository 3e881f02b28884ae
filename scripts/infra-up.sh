#!/usr/bin/env bash
# Bring up (or reuse) the local PostgreSQL and Kafka the project needs, then
# print the settings to use:
#     eval "$(bash scripts/infra-up.sh)"
# Progress goes to stderr; stdout carries only the export lines.
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
PITBOSS_LOG_TAG=infra
# shellcheck source=scripts/lib.sh
source "$SCRIPT_DIR/lib.sh"

start=$(date +%s)
# The scripts explain their own failures; just stop with their exit code.
pg_out="$(bash "$SCRIPT_DIR/postgres-up.sh")" || exit
kafka_out="$(bash "$SCRIPT_DIR/kafka-up.sh")" || exit
log "infrastructure ready in $(secs_since "$start")s (data: $PITBOSS_DATA_DIR; logs: postgres.log, kafka.log there)"

db_url="$(sed -n 's/^PITBOSS_DATABASE_URL=//p' <<<"$pg_out" | tail -n 1)"
brokers="$(sed -n 's/^PITBOSS_KAFKA_BROKERS=//p' <<<"$kafka_out" | tail -n 1)"
printf "export PITBOSS_DATABASE_URL='%s'\n" "${db_url:-$PITBOSS_DATABASE_URL}"
printf "export PITBOSS_KAFKA_BROKERS='%s'\n" "${brokers:-$PITBOSS_KAFKA_BROKERS}"
