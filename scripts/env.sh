# shellcheck shell=bash
# Pitboss local-infrastructure settings.
#
# Source it (it does not exit or change shell options):
#     source scripts/env.sh
# Every variable keeps a value that is already set in the environment; only
# missing ones get the defaults below. All of them are exported.
#
#   PITBOSS_ROOT                   repo root (derived from this file's location)
#   PITBOSS_DATA_DIR               <repo>/.data   postgres cluster, kafka logs, pid files
#   PITBOSS_CACHE_DIR              <repo>/.cache  kafka jars (safe to delete, re-downloaded)
#   PITBOSS_PG_HOST                127.0.0.1
#   PITBOSS_PG_PORT                5433
#   PITBOSS_PG_USER                pitboss
#   PITBOSS_PG_PASSWORD            pitboss
#   PITBOSS_PG_DB                  pitboss
#   PITBOSS_KAFKA_HOST             127.0.0.1
#   PITBOSS_KAFKA_PORT             9092           client (PLAINTEXT) listener
#   PITBOSS_KAFKA_CONTROLLER_PORT  9093           KRaft controller listener
#   PITBOSS_KAFKA_VERSION          4.3.1          org.apache.kafka:kafka_2.13 on Maven Central
#   PITBOSS_KAFKA_HEAP_OPTS        -Xms256m -Xmx512m
#   PITBOSS_DATABASE_URL           postgres://USER:PASSWORD@HOST:PORT/DB?sslmode=disable
#   PITBOSS_KAFKA_BROKERS          HOST:PORT
#   optional knobs (defaults live in the scripts):
#   PITBOSS_PG_READY_TIMEOUT       30  seconds to wait for PostgreSQL to accept connections
#   PITBOSS_KAFKA_READY_TIMEOUT    60  seconds to wait for a Kafka metadata response
#   PITBOSS_STOP_TIMEOUT           30  seconds infra-down.sh waits before forcing a stop
#   GOTOOLCHAIN                    auto (Debian's go sets "local" in go.env; auto lets
#                                  go fetch the toolchain go.mod asks for from the proxy)

if [ -z "${PITBOSS_ROOT:-}" ]; then
  PITBOSS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
fi
export PITBOSS_ROOT

export PITBOSS_DATA_DIR="${PITBOSS_DATA_DIR:-$PITBOSS_ROOT/.data}"
export PITBOSS_CACHE_DIR="${PITBOSS_CACHE_DIR:-$PITBOSS_ROOT/.cache}"
case "$PITBOSS_DATA_DIR" in /*) ;; *) PITBOSS_DATA_DIR="$PWD/$PITBOSS_DATA_DIR" ;; esac
case "$PITBOSS_CACHE_DIR" in /*) ;; *) PITBOSS_CACHE_DIR="$PWD/$PITBOSS_CACHE_DIR" ;; esac

export PITBOSS_PG_HOST="${PITBOSS_PG_HOST:-127.0.0.1}"
export PITBOSS_PG_PORT="${PITBOSS_PG_PORT:-5433}"
export PITBOSS_PG_USER="${PITBOSS_PG_USER:-pitboss}"
export PITBOSS_PG_PASSWORD="${PITBOSS_PG_PASSWORD:-pitboss}"
export PITBOSS_PG_DB="${PITBOSS_PG_DB:-pitboss}"

export PITBOSS_KAFKA_HOST="${PITBOSS_KAFKA_HOST:-127.0.0.1}"
export PITBOSS_KAFKA_PORT="${PITBOSS_KAFKA_PORT:-9092}"
export PITBOSS_KAFKA_CONTROLLER_PORT="${PITBOSS_KAFKA_CONTROLLER_PORT:-9093}"
export PITBOSS_KAFKA_VERSION="${PITBOSS_KAFKA_VERSION:-4.3.1}"
export PITBOSS_KAFKA_HEAP_OPTS="${PITBOSS_KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}"

# Percent-encode user/password/db for the URL (a no-op for the defaults).
_pitboss_urlenc() {
  local LC_ALL=C s="$1" out="" c i
  for (( i = 0; i < ${#s}; i++ )); do
    c="${s:i:1}"
    case "$c" in
      [a-zA-Z0-9._~-]) out+="$c" ;;
      *) out+="$(printf '%%%02X' "'$c")" ;;
    esac
  done
  printf '%s' "$out"
}
if [ -z "${PITBOSS_DATABASE_URL:-}" ]; then
  PITBOSS_DATABASE_URL="postgres://$(_pitboss_urlenc "$PITBOSS_PG_USER"):$(_pitboss_urlenc "$PITBOSS_PG_PASSWORD")@${PITBOSS_PG_HOST}:${PITBOSS_PG_PORT}/$(_pitboss_urlenc "$PITBOSS_PG_DB")?sslmode=disable"
fi
export PITBOSS_DATABASE_URL
unset -f _pitboss_urlenc
export PITBOSS_KAFKA_BROKERS="${PITBOSS_KAFKA_BROKERS:-${PITBOSS_KAFKA_HOST}:${PITBOSS_KAFKA_PORT}}"

# Go: Debian's packaged go pins GOTOOLCHAIN=local; we want go.mod's toolchain.
export GOTOOLCHAIN="${GOTOOLCHAIN:-auto}"
# Make a tarball-installed Go visible even when the caller's PATH lacks it.
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  export PATH="/usr/local/go/bin:$PATH"
fi
