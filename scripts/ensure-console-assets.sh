#!/usr/bin/env bash
# Vendor the console's charting library (uPlot) at build time.
#
# console/web/package.json and package-lock.json pin the exact version; this
# script installs them with `npm ci --ignore-scripts` into
# $PITBOSS_CACHE_DIR/console-web (never into the source tree) and copies
# uPlot's dist/uPlot.iife.min.js and dist/uPlot.min.css into
# console/assets/vendor/, which is git-ignored apart from its README.txt.
# `go build` embeds whatever is there; without uPlot the console shows its
# tables and says the charts are unavailable (docs/console.md).
#
# Idempotent: nothing is fetched when the vendored files already match the
# lock file; npm is installed from Debian's packages when missing. Prints what
# it did; exits non-zero if npm cannot be installed or fails.
set -euo pipefail
PITBOSS_LOG_TAG=console-assets
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source=scripts/lib.sh
source "$SCRIPT_DIR/lib.sh"
cd "$PITBOSS_ROOT"

web=console/web
vendor=console/assets/vendor
cache="$PITBOSS_CACHE_DIR/console-web"
files=(uPlot.iife.min.js uPlot.min.css)

lock_sum="$(sha256sum "$web/package-lock.json" | cut -d' ' -f1)"
stamp="$vendor/.lock-sha256"
all_there=1
for f in "${files[@]}"; do [ -s "$vendor/$f" ] || all_there=0; done
if [ "$all_there" = 1 ] && [ "$(cat "$stamp" 2>/dev/null)" = "$lock_sum" ]; then
  log "uPlot already vendored in $vendor (lock file unchanged)"
  exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
  log "no npm on PATH; installing Debian's nodejs and npm packages"
  apt_install nodejs npm
  hash -r
  command -v npm >/dev/null 2>&1 || die "npm is needed to vendor uPlot, or put ${files[*]} into $vendor yourself"
fi

if [ "$(cat "$cache/.lock-sha256" 2>/dev/null)" != "$lock_sum" ] || [ ! -d "$cache/node_modules/uplot/dist" ]; then
  log "npm ci --ignore-scripts in $cache (from $web/package-lock.json)"
  rm -rf "$cache"
  mkdir -p "$cache"
  cp "$web/package.json" "$web/package-lock.json" "$cache/"
  (cd "$cache" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2) || die "npm ci failed in $cache"
  printf '%s\n' "$lock_sum" >"$cache/.lock-sha256"
fi

version="$(sed -nE 's/^[[:space:]]*"version":[[:space:]]*"([^"]+)".*/\1/p' "$cache/node_modules/uplot/package.json" | head -n 1)"
mkdir -p "$vendor"
for f in "${files[@]}"; do
  [ -s "$cache/node_modules/uplot/dist/$f" ] || die "uplot $version has no dist/$f"
  cp "$cache/node_modules/uplot/dist/$f" "$vendor/$f"
done
cp "$cache/node_modules/uplot/LICENSE" "$vendor/uPlot.LICENSE" 2>/dev/null || true
printf '%s\n' "$lock_sum" >"$stamp"
log "vendored uPlot $version into $vendor: ${files[*]}"
