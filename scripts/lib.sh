# shellcheck shell=bash
# Helpers shared by the scripts in this folder. Sourced, never run.

# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

PITBOSS_LOG_TAG="${PITBOSS_LOG_TAG:-pitboss}"

# Never die silently under `set -e`: name the command and line that failed.
set -E
trap 'printf "[%s] ERROR: unexpected failure (exit %s) at %s:%s: %s\n" "${PITBOSS_LOG_TAG:-pitboss}" "$?" "${BASH_SOURCE[0]##*/}" "$LINENO" "$BASH_COMMAND" >&2' ERR

log() { printf '[%s] %s\n' "$PITBOSS_LOG_TAG" "$*" >&2; }
die() { printf '[%s] ERROR: %s\n' "$PITBOSS_LOG_TAG" "$*" >&2; exit 1; }

is_root() { [ "$(id -u)" = 0 ]; }

# Run a command as root (directly, or through passwordless sudo).
as_root() {
  if is_root; then
    "$@"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo -n "$@"
  else
    die "need root to run: $* (run as root, or install the packages yourself)"
  fi
}

# apt_update [force] : `apt-get update`, at most once per CI run / make invocation.
# A stamp younger than an hour (or PITBOSS_APT_UPDATED=1) means it already ran,
# so ensure-go.sh, postgres-up.sh and kafka-up.sh don't each refresh the lists.
APT_STAMP="${TMPDIR:-/tmp}/pitboss-apt-update.stamp"
apt_update() {
  if [ "${1:-}" != force ]; then
    [ "${PITBOSS_APT_UPDATED:-}" = 1 ] && return 0
    if [ -n "$(find "$APT_STAMP" -mmin -60 2>/dev/null)" ]; then return 0; fi
  fi
  log "apt-get update"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=300 update >/dev/null \
    || die "apt-get update failed"
  export PITBOSS_APT_UPDATED=1
  touch "$APT_STAMP" 2>/dev/null || true
}

# apt_get_install [apt-get options...] PKG... : non-interactive, keeps existing config files.
apt_get_install() {
  as_root env DEBIAN_FRONTEND=noninteractive UCF_FORCE_CONFFOLD=1 apt-get -q -y \
    -o DPkg::Lock::Timeout=300 \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
    --no-install-recommends install "$@" >/dev/null
}

# apt_install PKG... : install the packages that are not installed yet.
apt_install() {
  local missing=() p
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$p")
    fi
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install manually: ${missing[*]}"
  apt_update
  log "apt-get install -y ${missing[*]}"
  if ! apt_get_install "${missing[@]}"; then
    # Package lists may be stale (404 on an old version): refresh once and retry.
    apt_update force
    apt_get_install "${missing[@]}" || die "apt-get install ${missing[*]} failed"
  fi
}

# tcp_open HOST PORT : true if something accepts TCP connections there.
tcp_open() {
  timeout 3 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$1" "$2" 2>/dev/null
}

# run_closefds CMD... : run the external command CMD with every descriptor above
# 2 closed, so a daemon it starts cannot hold a caller's pipe open (a CI runner
# or a "$(...)" waiting for EOF would hang). Put the redirections for 0/1/2 on
# the run_closefds call. A fresh bash does the closing: inside the current
# shell, bash's own saved copies of redirected fds get in the way.
run_closefds() {
  bash -c 'for fd in /proc/$$/fd/*; do
             fd="${fd##*/}"
             if [ "$fd" -gt 2 ] 2>/dev/null; then eval "exec $fd>&-" 2>/dev/null || true; fi
           done
           exec "$@"' run_closefds "$@"
}

# show_log_tail FILE [LINES]
show_log_tail() {
  local f="$1" n="${2:-40}"
  if [ -r "$f" ]; then
    printf -- '----- last %s lines of %s -----\n' "$n" "$f" >&2
    tail -n "$n" "$f" >&2 || true
    printf -- '----- end of %s -----\n' "$f" >&2
  else
    printf -- '(log file %s does not exist or is not readable)\n' "$f" >&2
  fi
}

# secs_since START_EPOCH
secs_since() { echo $(( $(date +%s) - $1 )); }
