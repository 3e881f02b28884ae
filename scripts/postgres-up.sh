#!/usr/bin/env bash
# Ensure a PostgreSQL server accepts the project's credentials at
# $PITBOSS_PG_HOST:$PITBOSS_PG_PORT, then print PITBOSS_DATABASE_URL=... on stdout.
#
# - Something already answering there with our user/password is reused (the
#   database is created if missing). A server we started earlier is reused too.
# - Otherwise a private cluster is created in $PITBOSS_DATA_DIR/postgres
#   (owned by the `postgres` OS user when running as root) and started with
#   pg_ctl; its log is $PITBOSS_DATA_DIR/postgres.log.
# - Missing packages (postgresql, postgresql-contrib, postgresql-client) are
#   installed with apt. pgbench comes with them.
# Idempotent; every wait is bounded. Diagnostics go to stderr, only the DSN to stdout.
set -euo pipefail
PITBOSS_LOG_TAG=postgres
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=scripts/pg-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/pg-lib.sh"

START_TS=$(date +%s)
READY_TIMEOUT="${PITBOSS_PG_READY_TIMEOUT:-30}"
export PGCONNECT_TIMEOUT=5

H="$PITBOSS_PG_HOST" P="$PITBOSS_PG_PORT" U="$PITBOSS_PG_USER" W="$PITBOSS_PG_PASSWORD" D="$PITBOSS_PG_DB"

# --------------------------------------------------------------- checks --
# All connection attempts: no password prompt (-w), bounded by PGCONNECT_TIMEOUT,
# no stdin, and a hard `timeout` as a backstop.
psql_tcp() { # DB SQL
  PGPASSWORD="$W" timeout 20 "$PG_BIN/psql" -X -w -q -At -v ON_ERROR_STOP=1 \
    -h "$H" -p "$P" -U "$U" -d "$1" -c "$2" </dev/null
}
tcp_ready() { timeout 10 "$PG_BIN/pg_isready" -q -h "$H" -p "$P" -t 3 </dev/null >/dev/null 2>&1; }
creds_ok()  { psql_tcp "$D" 'select 1' >/dev/null 2>&1; }

wait_ready() { # seconds
  local deadline=$(( $(date +%s) + $1 ))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    tcp_ready && return 0
    sleep 0.5
  done
  return 1
}

fail_start() {
  log "$1"
  log "port: $H:$P   cluster: $PG_CLUSTER   log file: $PG_LOG"
  show_log_tail "$PG_LOG" 40
  exit 1
}

# Create/refresh our role and database through the cluster's unix socket as the
# bootstrap superuser (trust auth on the socket). Only for a cluster we own.
bootstrap_role_db() {
  log "ensuring role '$U' and database '$D'"
  timeout 30 "$PG_BIN/psql" -X -w -q -At -v ON_ERROR_STOP=1 \
      -h "$PG_RUN" -p "$P" -U postgres -d postgres \
      -v role="$U" -v pw="$W" -v db="$D" >/dev/null <<'SQL' || fail_start "could not create role/database in our cluster"
SELECT format('CREATE ROLE %I', :'role') WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'role')
\gexec
-- Superuser like POSTGRES_USER in the postgres docker image (CREATE EXTENSION, test DBs, ...).
SELECT format('ALTER ROLE %I WITH LOGIN SUPERUSER CREATEDB PASSWORD %L', :'role', :'pw')
\gexec
SELECT format('CREATE DATABASE %I OWNER %I', :'db', :'role') WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'db')
\gexec
SQL
}

finish() {
  creds_ok || fail_start "server is up but '$U' cannot log in to database '$D' over TCP"
  log "ready after $(secs_since "$START_TS")s ($("$PG_BIN/psql" --version | head -1); pgbench: $PG_BIN/pgbench)"
  echo "PITBOSS_DATABASE_URL=$PITBOSS_DATABASE_URL"
  exit 0
}

# ------------------------------------------------------------------- main --
ensure_pg_packages
PG_BIN="$(pg_bin_dir)"
pg_resolve_paths

# 1. Something is already there?
if tcp_ready; then
  if creds_ok; then
    if pg_ours_running; then log "reusing our cluster $PG_CLUSTER on $H:$P"
    else log "reusing the PostgreSQL server already listening on $H:$P"; fi
    finish
  fi
  if pg_ours_running; then
    log "our cluster is running on $H:$P; fixing role/database"
    bootstrap_role_db
    finish
  fi
  # Foreign server: we may still be allowed to create the database.
  if psql_tcp postgres 'select 1' >/dev/null 2>&1; then
    log "reusing the PostgreSQL server on $H:$P; creating database '$D'"
    psql_tcp postgres "CREATE DATABASE \"$D\"" >/dev/null \
      || die "user '$U' cannot create database '$D' on the server at $H:$P"
    finish
  fi
  die "a PostgreSQL server on $H:$P does not accept user '$U' with the configured password." \
      "Stop it, fix its credentials, or choose another PITBOSS_PG_PORT."
fi

if pg_ours_running; then
  log "our cluster (pid $(pg_ours_pid)) is running but not ready on $H:$P yet; waiting up to ${READY_TIMEOUT}s"
  wait_ready "$READY_TIMEOUT" \
    || fail_start "our cluster is running but does not accept connections on $H:$P (started with another port? run scripts/infra-down.sh)"
  bootstrap_role_db
  finish
fi

if tcp_open "$H" "$P"; then
  die "port $H:$P is taken by something that is not a PostgreSQL server; choose another PITBOSS_PG_PORT"
fi

# 2. Create the cluster once.
pg_prepare_dirs
if [ ! -f "$PG_CLUSTER/PG_VERSION" ]; then
  if [ -n "$(ls -A "$PG_CLUSTER" 2>/dev/null)" ]; then
    log "removing incomplete cluster directory $PG_CLUSTER (no PG_VERSION)"
    find "$PG_CLUSTER" -mindepth 1 -delete
  fi
  log "initdb $PG_CLUSTER (PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}'), as OS user $PG_OS_USER)"
  initlog="$(mktemp)"
  if ! pg_run "$PG_BIN/initdb" -D "$PG_CLUSTER" -U postgres -E UTF8 --locale=C.UTF-8 \
        --auth-local=trust --auth-host=scram-sha-256 >"$initlog" 2>&1; then
    cat "$initlog" >&2; rm -f "$initlog"
    die "initdb failed for $PG_CLUSTER"
  fi
  rm -f "$initlog"
  pg_run tee "$PG_CLUSTER/pg_hba.conf" >/dev/null <<'EOF'
# Written by scripts/postgres-up.sh (dev/test cluster).
# TYPE  DATABASE     USER  ADDRESS        METHOD
local   all          all                  trust
local   replication  all                  trust
host    all          all   127.0.0.1/32   scram-sha-256
host    all          all   ::1/128        scram-sha-256
host    replication  all   127.0.0.1/32   scram-sha-256
host    replication  all   ::1/128        scram-sha-256
EOF
  printf "\n# pitboss: settings managed by scripts/postgres-up.sh\ninclude_if_exists = 'pitboss.conf'\n" \
    | pg_run tee -a "$PG_CLUSTER/postgresql.conf" >/dev/null
fi

# The cluster may have been created by another PostgreSQL major version.
cluster_ver="$(cat "$PG_CLUSTER/PG_VERSION")"
if [ -x "/usr/lib/postgresql/$cluster_ver/bin/pg_ctl" ]; then
  PG_BIN="/usr/lib/postgresql/$cluster_ver/bin"
elif [ "$("$PG_BIN/postgres" --version | awk '{print $3}' | cut -d. -f1)" != "$cluster_ver" ]; then
  die "cluster $PG_CLUSTER is PostgreSQL $cluster_ver but only $("$PG_BIN/postgres" --version) is installed; remove $PG_CLUSTER or install postgresql-$cluster_ver"
fi

# 3. (Re)write our settings every start, so port/host changes take effect.
case "$H" in
  localhost|127.*|::1|0.0.0.0|'*') listen="$H" ;;
  *) listen="$H" ; log "note: listening on $H (not a loopback address)" ;;
esac
# Each statement's calls and time, for make bench's moderate step
# (cmd/pitboss-bench/moderate.go), where the server has the module (a
# preload library that is missing would stop it from starting). Loaded at
# start: a running server takes it at its next restart.
pgss_conf="# pg_stat_statements: not installed with this server"
if [ -f "$(dirname "$PG_BIN")/lib/pg_stat_statements.so" ]; then
  pgss_conf="shared_preload_libraries = 'pg_stat_statements'
pg_stat_statements.track = top"
fi
pg_run tee "$PG_CLUSTER/pitboss.conf" >/dev/null <<EOF
# Written by scripts/postgres-up.sh on every start; edit the script, not this file.
listen_addresses = '$listen'
port = $P
unix_socket_directories = '$PG_RUN'
max_connections = 200
shared_buffers = 256MB
# A ledger: keep durability on even in dev/test.
fsync = on
synchronous_commit = on
full_page_writes = on
wal_level = replica
max_wal_size = 1GB
password_encryption = scram-sha-256
timezone = 'UTC'
log_timezone = 'UTC'
log_line_prefix = '%m [%p] %q%u@%d '
logging_collector = off
$pgss_conf
EOF

# 4. Start.
pg_rotate_log
log "starting PostgreSQL on $H:$P (log: $PG_LOG)"
if ! run_closefds "${PG_AS[@]}" timeout $(( READY_TIMEOUT + 15 )) "$PG_BIN/pg_ctl" start -D "$PG_CLUSTER" -l "$PG_LOG" \
      -w -t "$READY_TIMEOUT" -s </dev/null >/dev/null 2>&1; then
  fail_start "pg_ctl start failed or the server did not become ready within ${READY_TIMEOUT}s"
fi
wait_ready "$READY_TIMEOUT" || fail_start "server started but is not accepting connections on $H:$P"
bootstrap_role_db
finish
