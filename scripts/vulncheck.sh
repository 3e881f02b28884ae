#!/usr/bin/env bash
# `make vulncheck` (run by `make test`): govulncheck over ./..., failing when
# code we call has a known vulnerability.
#
# The database: PITBOSS_VULNDB (a directory in govulncheck's file format),
# else the offline snapshot at ../shared/vulndb beside the repository when
# there is one, else the public vuln.go.dev. The offline snapshot is the
# answer where vuln.go.dev cannot be reached; its date is printed with the
# result ("clean as of" that day). A scan that cannot run at all fails when
# the database is local (nothing outside can be to blame) and only warns
# against vuln.go.dev from an offline machine, unless GOVULNCHECK_STRICT=1.
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
PITBOSS_LOG_TAG=vulncheck
# shellcheck source=scripts/lib.sh
source "$SCRIPT_DIR/lib.sh"
cd "$PITBOSS_ROOT"

GOVULNCHECK="${GOVULNCHECK:-golang.org/x/vuln/cmd/govulncheck@v1.8.0}"
db="${PITBOSS_VULNDB:-}"
if [ -z "$db" ] && [ -f "$PITBOSS_ROOT/../shared/vulndb/index/db.json" ]; then
  db="$(cd "$PITBOSS_ROOT/../shared/vulndb" && pwd -P)"
fi

if [ -n "$db" ]; then
  [ -f "$db/index/db.json" ] || die "PITBOSS_VULNDB=$db has no index/db.json: not a govulncheck database"
  asof="$(sed -n 's/.*"modified": *"\([^"]*\)".*/\1/p' "$db/index/db.json")"
  log "scanning with the offline vulnerability database $db (as of ${asof:-an unknown date})"
  rc=0
  go run "$GOVULNCHECK" -db "file://$db" ./... || rc=$?
  case "$rc" in
    0) log "no known vulnerability in code we call (database as of ${asof:-an unknown date})" ;;
    3) die "vulnerable code is reachable (see above; database as of ${asof:-an unknown date})" ;;
    *) die "govulncheck could not run against $db (exit $rc)" ;;
  esac
  exit 0
fi

log "scanning with vuln.go.dev (no offline database: set PITBOSS_VULNDB, or put one at ../shared/vulndb)"
rc=0
go run "$GOVULNCHECK" ./... || rc=$?
case "$rc" in
  0) log "no known vulnerability in code we call (vuln.go.dev, $(date -u +%Y-%m-%d))" ;;
  3) die "vulnerable code is reachable (see above)" ;;
  *)
    log "govulncheck could not run (exit $rc; offline?)"
    [ "${GOVULNCHECK_STRICT:-0}" != 1 ] || exit 1
    ;;
esac
