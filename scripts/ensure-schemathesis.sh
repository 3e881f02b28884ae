#!/usr/bin/env bash
# Make sure Schemathesis (the OpenAPI-driven API fuzzer, from PyPI) is
# installed for api/schemathesis_test.go, which `make test` runs.
#
# It lives in a virtualenv of its own, $PITBOSS_CACHE_DIR/schemathesis (never
# in the source tree), at the version pinned below. python3 and its venv
# module come from Debian's packages when missing. Idempotent: nothing is
# fetched when the pinned version is already there. Prints what it did.
set -euo pipefail
PITBOSS_LOG_TAG=schemathesis
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source=scripts/lib.sh
source "$SCRIPT_DIR/lib.sh"

version="${PITBOSS_SCHEMATHESIS_VERSION:-4.32.5}"
venv="$PITBOSS_CACHE_DIR/schemathesis"
bin="$venv/bin/schemathesis"

if [ -x "$bin" ] && [ "$("$bin" --version 2>/dev/null)" = "schemathesis, version $version" ]; then
  log "schemathesis $version already in $venv"
  exit 0
fi

if ! command -v python3 >/dev/null 2>&1 || ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  log "no python3 with venv; installing Debian's python3 and python3-venv"
  apt_install python3 python3-venv
  hash -r
fi

log "installing schemathesis $version into $venv (from PyPI)"
rm -rf "$venv"
python3 -m venv "$venv" || die "python3 -m venv $venv failed"
"$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$version" >&2 ||
  die "pip install schemathesis==$version failed"
"$bin" --version >&2 || die "$bin does not run"
log "schemathesis $version ready: $bin"
