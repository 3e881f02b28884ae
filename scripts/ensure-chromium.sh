#!/usr/bin/env bash
# Make sure a headless Chromium is available for the browser test of the
# built-in demo game (demogame/browser_test.go drives it with chromedp).
#
# 1. PITBOSS_CHROMIUM, `chromium` or `chromium-browser` on PATH: use it.
# 2. Otherwise install Debian's `chromium` package (plus fonts so the
#    screenshots have text).
# Prints what it did; exits non-zero if it cannot provide a working browser.
set -euo pipefail
PITBOSS_LOG_TAG=chromium
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source=scripts/lib.sh
source "$SCRIPT_DIR/lib.sh"

find_browser() {
  if [ -n "${PITBOSS_CHROMIUM:-}" ] && [ -x "${PITBOSS_CHROMIUM}" ]; then
    printf '%s\n' "$PITBOSS_CHROMIUM"
    return 0
  fi
  command -v chromium 2>/dev/null || command -v chromium-browser 2>/dev/null
}

if ! browser="$(find_browser)"; then
  log "no chromium on PATH; installing Debian's chromium package"
  apt_install chromium fonts-dejavu-core
  hash -r
  browser="$(find_browser)" || die "chromium is still not on PATH after installing it"
fi

if ! version="$(timeout 60 "$browser" --headless --no-sandbox --disable-gpu --version 2>/dev/null)"; then
  die "$browser does not start (try: $browser --headless --no-sandbox --version)"
fi
log "using $browser: $version"
