#!/usr/bin/env bash
# Run Pitboss locally against the infrastructure from scripts/infra-up.sh
# (`make run` brings that up and builds bin/pitboss first):
#   1. bin/pitboss migrate   apply database migrations
#   2. bin/pitboss sandbox   create a sandbox client + API key if none exists, print it
#                            (and how to receive its callbacks: bin/pitboss receive)
#   3. exec bin/pitboss serve
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source=scripts/env.sh
source "$SCRIPT_DIR/env.sh"
cd "$PITBOSS_ROOT"

BIN="${PITBOSS_BIN:-$PITBOSS_ROOT/bin/pitboss}"
[ -x "$BIN" ] || { echo "[run] $BIN not found; run 'make build' first" >&2; exit 1; }

# The sandbox's callbacks and webhooks may go to a receiver on this machine
# (`pitboss receive`, which `pitboss sandbox` shows); production clients'
# stay on public addresses. A value already set wins, and so does the
# deprecated PITBOSS_ALLOW_PRIVATE_CALLBACKS (setting both differently is
# refused).
if [ -z "${PITBOSS_ALLOW_PRIVATE_CALLBACKS:-}" ]; then
  export PITBOSS_PRIVATE_CALLBACKS="${PITBOSS_PRIVATE_CALLBACKS:-sandbox}"
fi

echo "[run] PITBOSS_DATABASE_URL=$PITBOSS_DATABASE_URL" >&2
echo "[run] PITBOSS_PRIVATE_CALLBACKS=${PITBOSS_PRIVATE_CALLBACKS:-}${PITBOSS_ALLOW_PRIVATE_CALLBACKS:+ PITBOSS_ALLOW_PRIVATE_CALLBACKS=$PITBOSS_ALLOW_PRIVATE_CALLBACKS (deprecated)}" >&2
echo "[run] PITBOSS_KAFKA_BROKERS=$PITBOSS_KAFKA_BROKERS" >&2
echo "[run] $BIN migrate" >&2
"$BIN" migrate
echo "[run] $BIN sandbox" >&2
"$BIN" sandbox
echo "[run] console: ${PITBOSS_PUBLIC_URL:-http://127.0.0.1:8080}/console/ (sign in with the sandbox key above, or PITBOSS_ADMIN_TOKEN)" >&2
echo "[run] exec $BIN serve" >&2
exec "$BIN" serve "$@"
