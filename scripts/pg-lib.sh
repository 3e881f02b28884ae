# shellcheck shell=bash
# PostgreSQL helpers shared by postgres-up.sh, cluster.sh and infra-down.sh. Sourced after lib.sh.

# Highest-versioned Debian server bin dir (/usr/lib/postgresql/N/bin), else
# wherever pg_ctl is on PATH.
pg_bin_dir() {
  local d
  d="$( { ls -d /usr/lib/postgresql/*/bin 2>/dev/null || true; } | sort -V | while read -r x; do
         if [ -x "$x/pg_ctl" ] && [ -x "$x/initdb" ]; then echo "$x"; fi; done | tail -n 1)"
  if [ -z "$d" ] && command -v pg_ctl >/dev/null 2>&1; then
    d="$(dirname "$(readlink -f "$(command -v pg_ctl)")")"
  fi
  [ -n "$d" ] && echo "$d"
}

# PostgreSQL refuses to run as root: as root we use the `postgres` OS user.
if is_root; then PG_OS_USER=postgres; else PG_OS_USER="$(id -un)"; fi

if is_root; then PG_AS=(runuser -u "$PG_OS_USER" --); else PG_AS=(); fi
pg_run() { "${PG_AS[@]}" "$@"; }

# Sets PG_BASE, PG_CLUSTER, PG_LOG, PG_RUN.
# Normally everything lives in $PITBOSS_DATA_DIR. When running as root in a
# tree the postgres user cannot enter (e.g. under /root), the cluster lives in
# /var/lib/pitboss/<hash>/ and $PITBOSS_DATA_DIR/postgres{,.log} are symlinks.
pg_resolve_paths() {
  if [ -L "$PITBOSS_DATA_DIR/postgres" ]; then
    PG_CLUSTER="$(readlink -f "$PITBOSS_DATA_DIR/postgres")"
    PG_BASE="$(dirname "$PG_CLUSTER")"
  else
    PG_BASE="$PITBOSS_DATA_DIR"
    PG_CLUSTER="$PG_BASE/postgres"
  fi
  PG_LOG="$PG_BASE/postgres.log"
  PG_RUN="$PG_BASE/postgres-run"
  # unix socket paths are limited to 107 bytes (".s.PGSQL.NNNNN" included)
  if [ "${#PG_RUN}" -gt 88 ]; then
    PG_RUN="/tmp/pitboss-pg-$(printf '%s' "$PG_CLUSTER" | sha1sum | cut -c1-12)"
  fi
}

pg_ours_pid() {
  local pid
  [ -r "$PG_CLUSTER/postmaster.pid" ] || return 1
  pid="$(head -n 1 "$PG_CLUSTER/postmaster.pid" 2>/dev/null || true)"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  grep -qE '^(postgres|postmaster)$' "/proc/$pid/comm" 2>/dev/null || return 1
  echo "$pid"
}
pg_ours_running() { pg_ours_pid >/dev/null; }

pg_prepare_dirs() {
  mkdir -p "$PITBOSS_DATA_DIR"
  if is_root; then
    if ! id -u postgres >/dev/null 2>&1; then
      log "creating OS user 'postgres'"
      useradd --system --user-group --home-dir /var/lib/postgresql --shell /bin/bash postgres
    fi
    if [ ! -L "$PITBOSS_DATA_DIR/postgres" ] && ! runuser -u postgres -- test -x "$PITBOSS_DATA_DIR"; then
      chmod a+rx "$PITBOSS_DATA_DIR" 2>/dev/null || true
      if ! runuser -u postgres -- test -x "$PITBOSS_DATA_DIR"; then
        local alt
        alt="/var/lib/pitboss/$(printf '%s' "$PITBOSS_DATA_DIR" | sha1sum | cut -c1-12)"
        log "the postgres user cannot enter $PITBOSS_DATA_DIR; putting the cluster in $alt (symlinked)"
        mkdir -p "$alt/postgres"
        chmod 755 /var/lib/pitboss "$alt"
        if [ -d "$PITBOSS_DATA_DIR/postgres" ] && [ -z "$(ls -A "$PITBOSS_DATA_DIR/postgres")" ]; then
          rmdir "$PITBOSS_DATA_DIR/postgres"
        fi
        ln -sfn "$alt/postgres" "$PITBOSS_DATA_DIR/postgres"
        touch "$alt/postgres.log"
        ln -sfn "$alt/postgres.log" "$PITBOSS_DATA_DIR/postgres.log"
        pg_resolve_paths
      fi
    fi
  fi
  mkdir -p "$PG_CLUSTER" "$PG_RUN"
  touch "$PG_LOG"
  if is_root; then
    chown "$PG_OS_USER:" "$PG_CLUSTER" "$PG_RUN" "$PG_LOG"
  fi
  chmod 700 "$PG_CLUSTER"
  chmod 755 "$PG_RUN"
}

# Keep the server log from growing without bound across restarts.
pg_rotate_log() {
  local size
  size="$(stat -c %s "$PG_LOG" 2>/dev/null || echo 0)"
  if [ "$size" -gt $(( 50 * 1024 * 1024 )) ]; then
    mv -f "$PG_LOG" "$PG_LOG.1"
    touch "$PG_LOG"
    is_root && chown "$PG_OS_USER:" "$PG_LOG"
  fi
  return 0
}

# The Debian server packages (postgresql, -contrib, -client), installed with
# apt unless the binaries are there already; pgbench comes with them.
ensure_pg_packages() {
  local bin
  bin="$(pg_bin_dir || true)"
  if [ -n "$bin" ] && [ -x "$bin/pgbench" ] && [ -x "$bin/psql" ] && [ -x "$bin/pg_isready" ]; then
    return 0
  fi
  if command -v dpkg-query >/dev/null 2>&1; then
    # On a machine that has never had PostgreSQL, stop the Debian package from
    # creating and starting its own "main" cluster on 5432: we run our own.
    if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
      as_root mkdir -p /etc/postgresql-common
      printf '%s\n' '# written by pitboss scripts/postgres-up.sh before installing postgresql' \
        'create_main_cluster = false' | as_root tee /etc/postgresql-common/createcluster.conf >/dev/null
    fi
    apt_install postgresql postgresql-contrib postgresql-client
  fi
  bin="$(pg_bin_dir || true)"
  [ -n "$bin" ] || die "PostgreSQL server binaries (initdb, pg_ctl) not found and could not be installed"
  [ -x "$bin/pgbench" ] || die "pgbench not found in $bin"
}
