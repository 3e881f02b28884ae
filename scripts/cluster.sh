#!/usr/bin/env bash
# A local cluster (docs/operations.md, "Local cluster"): three Kafka brokers,
# a PostgreSQL primary with a synchronous streaming standby, and Pitboss as
# separate role processes, all from the same Debian packages and Maven jars
# as `make infra` (the install steps live in kafka-lib.sh and pg-lib.sh).
#
#   scripts/cluster.sh up          start (or reuse) everything, print the settings (make cluster)
#   scripts/cluster.sh down        stop everything this script started (make cluster-down); data is kept
#   scripts/cluster.sh status      what runs, who leads, replication state
#   scripts/cluster.sh env         the settings a client of the cluster uses
#   scripts/cluster.sh kafka-start N     start broker N (1-3) again, e.g. after a kill -9
#   scripts/cluster.sh pg-promote        promote the standby (the operator's act after losing the primary)
#   scripts/cluster.sh pg-rebuild        rebuild the node that is not the primary as a standby of it
#
# Layout, all under $PITBOSS_CLUSTER_DIR (default $PITBOSS_DATA_DIR/cluster):
#   kafka-N/        server.properties, log4j2.properties, data/, kafka.pid;  log: kafka-N.log
#   pg-a/, pg-b/    the two PostgreSQL data directories;                   log: pg-a.log, pg-b.log
#   pitboss/        the service's data folder (master key, sandbox key);   logs: <role>.log, pids: <role>.pid
#
# Kafka: three nodes in KRaft combined mode (each process is broker and
# controller; the three controllers are the quorum voters): clients on
# 19092-19094, controllers on 19192-19194. Defaults for every topic:
# replication factor 3, min.insync.replicas 2, no unclean leader election.
# PostgreSQL: pg-a on 5434 starts as primary, pg-b on 5435 is its standby
# (pg_basebackup, streaming, synchronous_commit=on with
# synchronous_standby_names='FIRST 1 (*)').
#
# Knobs: PITBOSS_CLUSTER_DIR, PITBOSS_CLUSTER_KAFKA_PORTS (19092,19093,19094),
# PITBOSS_CLUSTER_CONTROLLER_PORTS (19192,19193,19194), PITBOSS_CLUSTER_PG_PORTS
# (5434,5435), PITBOSS_CLUSTER_HTTP_PORTS (18080,18081), PITBOSS_CLUSTER_KAFKA_HEAP
# (-Xms128m -Xmx384m), PITBOSS_CLUSTER_ROLES (1; 0 starts Kafka and PostgreSQL
# only, as the cluster chaos test does).
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
PITBOSS_LOG_TAG=cluster
# shellcheck source=scripts/lib.sh
source "$SCRIPT_DIR/lib.sh"
# shellcheck source=scripts/kafka-lib.sh
source "$SCRIPT_DIR/kafka-lib.sh"
# shellcheck source=scripts/pg-lib.sh
source "$SCRIPT_DIR/pg-lib.sh"

CDIR="${PITBOSS_CLUSTER_DIR:-$PITBOSS_DATA_DIR/cluster}"
case "$CDIR" in /*) ;; *) CDIR="$PWD/$CDIR" ;; esac
IFS=, read -r -a KPORTS <<<"${PITBOSS_CLUSTER_KAFKA_PORTS:-19092,19093,19094}"
IFS=, read -r -a CPORTS <<<"${PITBOSS_CLUSTER_CONTROLLER_PORTS:-19192,19193,19194}"
IFS=, read -r -a PGPORTS <<<"${PITBOSS_CLUSTER_PG_PORTS:-5434,5435}"
IFS=, read -r -a HTTPPORTS <<<"${PITBOSS_CLUSTER_HTTP_PORTS:-18080,18081}"
KHEAP="${PITBOSS_CLUSTER_KAFKA_HEAP:--Xms128m -Xmx384m}"
ROLES="${PITBOSS_CLUSTER_ROLES:-1}"
STOP_TIMEOUT="${PITBOSS_STOP_TIMEOUT:-30}"
H=127.0.0.1
U="$PITBOSS_PG_USER" W="$PITBOSS_PG_PASSWORD" D="$PITBOSS_PG_DB"
REPL_USER=replicator REPL_PASSWORD=replicator
PG_NODES=(a b)
export PGCONNECT_TIMEOUT=3

brokers() { local i out=""; for i in 0 1 2; do out+="${out:+,}$H:${KPORTS[$i]}"; done; echo "$out"; }
database_url() {
  echo "postgres://$U:$W@$H:${PGPORTS[0]},$H:${PGPORTS[1]}/$D?sslmode=disable&target_session_attrs=read-write&connect_timeout=3"
}
# read_database_url prefers the standby: the read models' queries of api-relay-2.
read_database_url() {
  echo "postgres://$U:$W@$H:${PGPORTS[0]},$H:${PGPORTS[1]}/$D?sslmode=disable&target_session_attrs=prefer-standby&connect_timeout=3&application_name=pitboss-reads"
}

# ------------------------------------------------------------- processes --
# pid_alive PIDFILE PATTERN : prints the pid when it runs and its command line has PATTERN.
pid_alive() {
  local pid
  [ -r "$1" ] || return 1
  pid="$(cat "$1" 2>/dev/null || true)"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$2" || return 1
  echo "$pid"
}

# daemon PIDFILE LOGFILE CMD... : start CMD detached (own session, no inherited fds).
daemon() {
  local pidfile="$1" logfile="$2"; shift 2
  rm -f "$pidfile"
  ( exec setsid nohup bash -c '
      for fd in /proc/$$/fd/*; do
        fd="${fd##*/}"
        if [ "$fd" -gt 2 ] 2>/dev/null; then eval "exec $fd>&-" 2>/dev/null || true; fi
      done
      echo $$ >"$0"
      exec "$@"' "$pidfile" "$@" </dev/null >>"$logfile" 2>&1 ) &
  local i
  for i in $(seq 1 50); do [ -s "$pidfile" ] && return 0; sleep 0.1; done
  die "$* did not start (no pid file $pidfile)"
}

# stop_pid PID NAME : SIGCONT (a stopped process cannot exit), SIGTERM, SIGKILL after the timeout.
stop_pid() {
  local pid="$1" name="$2" deadline
  log "stopping $name (pid $pid)"
  kill -CONT "$pid" 2>/dev/null || true
  kill -TERM "$pid" 2>/dev/null || true
  deadline=$(( $(date +%s) + STOP_TIMEOUT ))
  while kill -0 "$pid" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.3; done
  if kill -0 "$pid" 2>/dev/null; then
    log "$name did not stop within ${STOP_TIMEOUT}s; SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
}

# ----------------------------------------------------------------- kafka --
kdir() { echo "$CDIR/kafka-$1"; }
kafka_pid() { pid_alive "$(kdir "$1")/kafka.pid" "kafka.Kafka $(kdir "$1")/server.properties"; }

kafka_write_config() { # N
  local n="$1" d voters="" i
  d="$(kdir "$n")"
  for i in 1 2 3; do voters+="${voters:+,}$i@$H:${CPORTS[$((i - 1))]}"; done
  mkdir -p "$d/data"
  cat >"$d/server.properties" <<EOF
# Written by scripts/cluster.sh on every start; edit the script, not this file.
# KRaft combined mode: this process is broker $n and one of three controller voters.
process.roles=broker,controller
node.id=$n
controller.quorum.voters=$voters
controller.listener.names=CONTROLLER
listeners=PLAINTEXT://$H:${KPORTS[$((n - 1))]},CONTROLLER://$H:${CPORTS[$((n - 1))]}
advertised.listeners=PLAINTEXT://$H:${KPORTS[$((n - 1))]}
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$d/data

# Every topic (the ledger topic included, which the relay creates with the
# broker's defaults): three replicas, a write needs two of them (acks=all).
num.partitions=6
default.replication.factor=3
min.insync.replicas=2
unclean.leader.election.enable=false
auto.create.topics.enable=true
delete.topic.enable=true
offsets.topic.replication.factor=3
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=3
transaction.state.log.min.isr=2
transaction.state.log.num.partitions=10
share.coordinator.state.topic.replication.factor=3
share.coordinator.state.topic.min.isr=2
group.initial.rebalance.delay.ms=0

# Failure detection: a broker that stops heartbeating to the controller is
# fenced after broker.session.timeout.ms (9 s, the default) and leaves every
# ISR; a follower that stops fetching leaves the ISR after
# replica.lag.time.max.ms (10 s here, 30 s by default), which bounds how long
# an acks=all write waits for a frozen follower.
broker.session.timeout.ms=9000
broker.heartbeat.interval.ms=2000
replica.lag.time.max.ms=10000

num.network.threads=2
num.io.threads=2
num.replica.fetchers=1
log.retention.hours=168
log.segment.bytes=268435456
EOF
  cat >"$d/log4j2.properties" <<EOF
status = warn
name = pitboss-cluster-kafka-$n
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = $CDIR/kafka-$n.log
appender.file.append = true
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.statechange.name = state.change.logger
logger.statechange.level = WARN
EOF
}

kafka_jvm() { # N
  # shellcheck disable=SC2206
  KJVM=($KHEAP -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError
    -XX:TieredStopAtLevel=1 -Djava.awt.headless=true
    "-Dlog4j2.configurationFile=$(kdir "$1")/log4j2.properties" "-Dkafka.logs.dir=$(kdir "$1")")
}

kafka_cluster_id() {
  if [ ! -s "$CDIR/kafka.cluster.id" ]; then
    local out cid
    kafka_jvm 1
    out="$(timeout 60 "$JAVA" "${KJVM[@]}" -cp "$KAFKA_LIBS/*" kafka.tools.StorageTool random-uuid </dev/null 2>&1)" || true
    cid="$(printf '%s\n' "$out" | grep -E '^[A-Za-z0-9_][A-Za-z0-9_-]{21}$' | tail -n 1 || true)"
    [ -n "$cid" ] || die "could not generate a Kafka cluster id: $out"
    echo "$cid" >"$CDIR/kafka.cluster.id"
  fi
  cat "$CDIR/kafka.cluster.id"
}

kafka_start() { # N
  local n="$1" d pid
  d="$(kdir "$n")"
  if pid="$(kafka_pid "$n")"; then
    kill -CONT "$pid" 2>/dev/null || true
    log "broker $n running (pid $pid)"
    return 0
  fi
  for p in "${KPORTS[$((n - 1))]}" "${CPORTS[$((n - 1))]}"; do
    tcp_open "$H" "$p" && die "port $H:$p is taken by something else; set PITBOSS_CLUSTER_KAFKA_PORTS / PITBOSS_CLUSTER_CONTROLLER_PORTS"
  done
  kafka_write_config "$n"
  kafka_jvm "$n"
  if [ ! -f "$d/data/meta.properties" ]; then
    log "formatting broker $n storage"
    timeout 120 "$JAVA" "${KJVM[@]}" -cp "$KAFKA_LIBS/*" kafka.tools.StorageTool format \
      -t "$(kafka_cluster_id)" -c "$d/server.properties" </dev/null >>"$CDIR/kafka-$n.log" 2>&1 \
      || { show_log_tail "$CDIR/kafka-$n.log" 30; die "formatting broker $n failed"; }
  fi
  printf '===== %s scripts/cluster.sh: starting broker %s on %s:%s =====\n' \
    "$(date -u +%FT%TZ)" "$n" "$H" "${KPORTS[$((n - 1))]}" >>"$CDIR/kafka-$n.log"
  log "starting broker $n on $H:${KPORTS[$((n - 1))]} (controller ${CPORTS[$((n - 1))]})"
  ( cd "$d" && daemon "$d/kafka.pid" "$CDIR/kafka-$n.log" "$JAVA" "${KJVM[@]}" -cp "$KAFKA_LIBS/*" kafka.Kafka "$d/server.properties" )
}

# kafka_wait_brokers SECONDS : until each of the three brokers answers a
# metadata request itself, listing all three. Asking one broker is not
# enough: after an unclean stop the controllers still list a broker whose
# old registration has not expired (broker.session.timeout.ms) while the
# restarted process waits to register again, not yet listening.
kafka_wait_brokers() {
  local deadline=$(( $(date +%s) + $1 )) out n i ok
  while [ "$(date +%s)" -lt "$deadline" ]; do
    ok=1
    for i in 0 1 2; do
      if ! tcp_open "$H" "${KPORTS[$i]}"; then ok=0; break; fi
      out="$(timeout 10 kcat -b "$H:${KPORTS[$i]}" -L -m 5 2>/dev/null </dev/null || true)"
      n="$(grep -cE '^ +broker [0-9]+ at ' <<<"$out" || true)"
      if [ "${n:-0}" -lt 3 ]; then ok=0; break; fi
    done
    [ "$ok" = 1 ] && return 0
    sleep 0.5
  done
  return 1
}

kafka_up() {
  command -v kcat >/dev/null 2>&1 || apt_install kcat
  ensure_java
  ensure_libs
  local n
  for n in 1 2 3; do kafka_start "$n"; done
  kafka_wait_brokers 120 || { for n in 1 2 3; do show_log_tail "$CDIR/kafka-$n.log" 15; done; die "the three brokers did not all answer within 120 s"; }
  log "Kafka: 3 brokers at $(brokers)"
}

# ------------------------------------------------------------ postgresql --
pgdir() { echo "$CDIR/pg-$1"; }
pgport() { [ "$1" = a ] && echo "${PGPORTS[0]}" || echo "${PGPORTS[1]}"; }
other() { [ "$1" = a ] && echo b || echo a; }
pg_node_pid() {
  local d pid
  d="$(pgdir "$1")"
  [ -r "$d/postmaster.pid" ] || return 1
  pid="$(head -n 1 "$d/postmaster.pid" 2>/dev/null || true)"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  grep -qE '^(postgres|postmaster)$' "/proc/$pid/comm" 2>/dev/null || return 1
  echo "$pid"
}
PG_SOCK="$CDIR/pg-run"
[ "${#PG_SOCK}" -gt 88 ] && PG_SOCK="/tmp/pitboss-cluster-$(printf '%s' "$CDIR" | sha1sum | cut -c1-12)"
psql_node() { # NODE SQL : as the bootstrap superuser over the unix socket
  timeout 20 "$PG_BIN/psql" -X -w -q -At -v ON_ERROR_STOP=1 -h "$PG_SOCK" -p "$(pgport "$1")" -U postgres -d postgres -c "$2" </dev/null
}
pg_is_primary() { [ "$(psql_node "$1" 'SELECT pg_is_in_recovery()' 2>/dev/null)" = f ]; }
pg_is_standby() { [ "$(psql_node "$1" 'SELECT pg_is_in_recovery()' 2>/dev/null)" = t ]; }
pg_primary() { local n; for n in "${PG_NODES[@]}"; do if pg_node_pid "$n" >/dev/null && pg_is_primary "$n"; then echo "$n"; return 0; fi; done; return 1; }

pg_write_node_conf() { # NODE
  local n="$1"
  pg_run tee "$(pgdir "$n")/pitboss-node.conf" >/dev/null <<EOF
# Written by scripts/cluster.sh on every start; edit the script, not this file.
listen_addresses = '$H'
port = $(pgport "$n")
unix_socket_directories = '$PG_SOCK'
max_connections = 200
shared_buffers = 128MB
fsync = on
full_page_writes = on
# Commit waits for the synchronous standby to flush the WAL (on, not
# remote_apply: read-your-writes comes from min_position, not from replay).
# synchronous_standby_names is set on the primary only (ALTER SYSTEM), once
# a standby streams: a promoted standby starts without one.
synchronous_commit = on
wal_level = replica
max_wal_senders = 10
max_replication_slots = 10
wal_keep_size = 512MB
wal_log_hints = on
hot_standby = on
hot_standby_feedback = on
wal_receiver_status_interval = 1s
password_encryption = scram-sha-256
timezone = 'UTC'
log_timezone = 'UTC'
log_line_prefix = '%m [%p] %q%u@%d '
logging_collector = off
EOF
}

pg_prepare() {
  mkdir -p "$CDIR" "$PG_SOCK"
  if is_root; then
    id -u postgres >/dev/null 2>&1 || useradd --system --user-group --home-dir /var/lib/postgresql --shell /bin/bash postgres
    runuser -u postgres -- test -x "$CDIR" || die "the postgres OS user cannot enter $CDIR; set PITBOSS_CLUSTER_DIR to a folder it can reach"
    chown "$PG_OS_USER:" "$PG_SOCK"
  fi
  chmod 755 "$PG_SOCK"
  local n
  for n in "${PG_NODES[@]}"; do
    touch "$CDIR/pg-$n.log"
    is_root && chown "$PG_OS_USER:" "$CDIR/pg-$n.log"
  done
  return 0
}

pg_start_node() { # NODE
  local n="$1" pid
  if pid="$(pg_node_pid "$n")"; then log "PostgreSQL pg-$n running (pid $pid)"; return 0; fi
  tcp_open "$H" "$(pgport "$n")" && die "port $H:$(pgport "$n") is taken by something else; set PITBOSS_CLUSTER_PG_PORTS"
  pg_write_node_conf "$n"
  log "starting PostgreSQL pg-$n on $H:$(pgport "$n")"
  run_closefds "${PG_AS[@]}" timeout 90 "$PG_BIN/pg_ctl" start -D "$(pgdir "$n")" -l "$CDIR/pg-$n.log" -w -t 60 -s \
    </dev/null >/dev/null 2>&1 || { show_log_tail "$CDIR/pg-$n.log" 30; die "pg-$n did not start"; }
}

pg_init_primary() { # NODE
  local n="$1" d
  d="$(pgdir "$n")"
  log "initdb pg-$n (the first primary)"
  mkdir -p "$d"; is_root && chown "$PG_OS_USER:" "$d"; chmod 700 "$d"
  pg_run "$PG_BIN/initdb" -D "$d" -U postgres -E UTF8 --locale=C.UTF-8 --auth-local=trust \
    --auth-host=scram-sha-256 >/dev/null || die "initdb pg-$n failed"
  pg_run tee "$d/pg_hba.conf" >/dev/null <<'EOF'
# Written by scripts/cluster.sh (local cluster).
local   all          all                  trust
local   replication  all                  trust
host    all          all   127.0.0.1/32   scram-sha-256
host    replication  all   127.0.0.1/32   scram-sha-256
EOF
  printf "\n# pitboss: settings managed by scripts/cluster.sh\ninclude_if_exists = 'pitboss-node.conf'\n" \
    | pg_run tee -a "$d/postgresql.conf" >/dev/null
  pg_start_node "$n"
  timeout 30 "$PG_BIN/psql" -X -w -q -At -v ON_ERROR_STOP=1 -h "$PG_SOCK" -p "$(pgport "$n")" -U postgres -d postgres \
      -v role="$U" -v pw="$W" -v db="$D" -v repl="$REPL_USER" -v replpw="$REPL_PASSWORD" >/dev/null <<'SQL' || die "could not create roles in pg-$n"
SELECT format('CREATE ROLE %I', :'role') WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'role')
\gexec
SELECT format('ALTER ROLE %I WITH LOGIN SUPERUSER CREATEDB PASSWORD %L', :'role', :'pw')
\gexec
SELECT format('CREATE ROLE %I', :'repl') WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'repl')
\gexec
SELECT format('ALTER ROLE %I WITH LOGIN REPLICATION PASSWORD %L', :'repl', :'replpw')
\gexec
SELECT format('CREATE DATABASE %I OWNER %I', :'db', :'role') WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'db')
\gexec
SQL
}

# pg_make_standby NODE PRIMARY : a fresh copy of PRIMARY (pg_basebackup), streaming from it.
pg_make_standby() {
  local n="$1" p="$2" d
  d="$(pgdir "$n")"
  if pg_node_pid "$n" >/dev/null; then die "pg-$n is running; stop it (or it is the primary) before rebuilding it"; fi
  log "pg_basebackup pg-$p -> pg-$n (standby)"
  rm -rf "$d"; mkdir -p "$d"; is_root && chown "$PG_OS_USER:" "$d"; chmod 700 "$d"
  pg_run env PGPASSWORD="$REPL_PASSWORD" timeout 600 "$PG_BIN/pg_basebackup" -D "$d" -X stream -R -c fast -w \
    -d "host=$H port=$(pgport "$p") user=$REPL_USER password=$REPL_PASSWORD application_name=pg-$n" \
    >>"$CDIR/pg-$n.log" 2>&1 || { show_log_tail "$CDIR/pg-$n.log" 20; die "pg_basebackup from pg-$p failed"; }
  # The copy carries the primary's ALTER SYSTEM settings: a standby waits for nobody.
  pg_run sed -i '/^synchronous_standby_names/d' "$d/postgresql.auto.conf"
  pg_start_node "$n"
  pg_wait_streaming "$p" "pg-$n" 60 || die "pg-$n does not stream from pg-$p"
  pg_set_sync "$p"
}

pg_wait_streaming() { # PRIMARY APPNAME SECONDS
  local deadline=$(( $(date +%s) + $3 ))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    [ "$(psql_node "$1" "SELECT count(*) FROM pg_stat_replication WHERE application_name = '$2' AND state = 'streaming'" 2>/dev/null)" = 1 ] && return 0
    sleep 0.3
  done
  return 1
}

pg_set_sync() { # PRIMARY
  psql_node "$1" "ALTER SYSTEM SET synchronous_standby_names = 'FIRST 1 (*)'" >/dev/null
  psql_node "$1" "SELECT pg_reload_conf()" >/dev/null
  log "pg-$1 is the primary; commits wait for its synchronous standby"
}

pg_up() {
  ensure_pg_packages
  PG_BIN="$(pg_bin_dir)"
  pg_prepare
  if [ ! -f "$(pgdir a)/PG_VERSION" ] && [ ! -f "$(pgdir b)/PG_VERSION" ]; then
    pg_init_primary a
    pg_make_standby b a
  else
    local n
    for n in "${PG_NODES[@]}"; do
      [ -f "$(pgdir "$n")/PG_VERSION" ] && pg_start_node "$n"
    done
    local p
    p="$(pg_primary)" || die "neither PostgreSQL node is a primary: promote one (scripts/cluster.sh pg-promote)"
    if [ ! -f "$(pgdir "$(other "$p")")/PG_VERSION" ]; then pg_make_standby "$(other "$p")" "$p"; fi
  fi
  log "PostgreSQL: primary pg-$(pg_primary) ($(database_url))"
}

pg_promote() {
  PG_BIN="$(pg_bin_dir)"
  local n
  for n in "${PG_NODES[@]}"; do
    if pg_node_pid "$n" >/dev/null && pg_is_standby "$n"; then
      log "promoting pg-$n (pg_ctl promote)"
      pg_run timeout 90 "$PG_BIN/pg_ctl" promote -D "$(pgdir "$n")" -w -t 60 -s </dev/null \
        || die "pg_ctl promote pg-$n failed"
      log "pg-$n is the primary; it has no synchronous standby until: scripts/cluster.sh pg-rebuild"
      return 0
    fi
  done
  die "no running standby to promote"
}

pg_rebuild() {
  PG_BIN="$(pg_bin_dir)"
  pg_prepare
  local p o pid
  p="$(pg_primary)" || die "no running primary to copy"
  o="$(other "$p")"
  if pid="$(pg_node_pid "$o")"; then
    log "stopping pg-$o (pid $pid) to rebuild it"
    pg_run timeout 60 "$PG_BIN/pg_ctl" stop -D "$(pgdir "$o")" -m fast -w -t 45 -s </dev/null || true
  fi
  pg_make_standby "$o" "$p"
}

# ------------------------------------------------------------ the service --
ROLE_NAMES=(api-relay-1 api-relay-2 projector-1 projector-2 forwarder)
role_args() {
  case "$1" in
    api-relay-1) echo "api,relay ${HTTPPORTS[0]}" ;;
    api-relay-2) echo "api,relay ${HTTPPORTS[1]}" ;;
    projector-*) echo "projector 0" ;;
    forwarder) echo "forwarder 0" ;;
  esac
}
BIN="$PITBOSS_ROOT/bin/pitboss"
service_env() {
  echo "PITBOSS_DATABASE_URL=$(database_url)"
  echo "PITBOSS_KAFKA_BROKERS=$(brokers)"
  echo "PITBOSS_DATA_DIR=$CDIR/pitboss"
  echo "PITBOSS_PRIVATE_CALLBACKS=sandbox"
  echo "PITBOSS_LOG_FORMAT=text"
}

roles_up() {
  log "building bin/pitboss"
  ( cd "$PITBOSS_ROOT" && go build -o "$BIN" ./cmd/pitboss ) || die "go build failed"
  mkdir -p "$CDIR/pitboss"
  local -a envs
  mapfile -t envs < <(service_env)
  env "${envs[@]}" "$BIN" migrate >>"$CDIR/migrate.log" 2>&1 || { show_log_tail "$CDIR/migrate.log" 20; die "pitboss migrate failed"; }
  env "${envs[@]}" "$BIN" sandbox >"$CDIR/sandbox.txt" 2>>"$CDIR/migrate.log" || { show_log_tail "$CDIR/migrate.log" 20; die "pitboss sandbox failed"; }
  local r roles port pid before
  for r in "${ROLE_NAMES[@]}"; do
    read -r roles port <<<"$(role_args "$r")"
    if pid="$(pid_alive "$CDIR/$r.pid" "$BIN serve")"; then log "$r running (pid $pid)"; continue; fi
    local addr="$H:$port"
    [ "$port" = 0 ] && addr="$H:0"
    before="$(grep -c 'pitboss started' "$CDIR/$r.log" 2>/dev/null || true)"
    log "starting $r (--roles $roles, $addr)"
    # api-relay-2 reads the read models from the standby (docs/operations.md).
    local reads=()
    [ "$r" = api-relay-2 ] && reads=(PITBOSS_READ_DATABASE_URL="$(read_database_url)")
    ( cd "$CDIR" && daemon "$CDIR/$r.pid" "$CDIR/$r.log" env "${envs[@]}" "${reads[@]}" PITBOSS_HTTP_ADDR="$addr" "$BIN" serve --roles "$roles" )
    local deadline=$(( $(date +%s) + 90 ))
    until [ "$(grep -c 'pitboss started' "$CDIR/$r.log" 2>/dev/null || true)" -gt "${before:-0}" ]; do
      pid_alive "$CDIR/$r.pid" "$BIN serve" >/dev/null || { show_log_tail "$CDIR/$r.log" 30; die "$r exited during startup"; }
      [ "$(date +%s)" -lt "$deadline" ] || { show_log_tail "$CDIR/$r.log" 30; die "$r did not start within 90 s"; }
      sleep 0.3
    done
  done
}

print_env() {
  cat <<EOF
# The local cluster (scripts/cluster.sh). Use it with:  eval "\$(bash scripts/cluster.sh env)"
export PITBOSS_DATABASE_URL='$(database_url)'
export PITBOSS_KAFKA_BROKERS='$(brokers)'
export PITBOSS_DATA_DIR='$CDIR/pitboss'
# API (two api,relay processes; either answers, one relay is active):
#   http://$H:${HTTPPORTS[0]}   http://$H:${HTTPPORTS[1]}
# Logs: $CDIR/*.log   Sandbox key: $CDIR/pitboss/sandbox.key
# e.g. curl -s -H "Authorization: Bearer \$(cat $CDIR/pitboss/sandbox.key)" http://$H:${HTTPPORTS[0]}/api/v1/wallet/balance
EOF
}

status() {
  PG_BIN="$(pg_bin_dir || true)"
  local n pid r
  for n in 1 2 3; do
    if pid="$(kafka_pid "$n")"; then
      printf 'kafka-%s  %-7s pid %-7s %s:%s  (%s)\n' "$n" up "$pid" "$H" "${KPORTS[$((n - 1))]}" "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null | sed 's/T/stopped/;s/[SR]/running/')"
    else printf 'kafka-%s  down\n' "$n"; fi
  done
  for n in "${PG_NODES[@]}"; do
    if pid="$(pg_node_pid "$n")"; then
      local kind=standby; pg_is_primary "$n" && kind=primary
      printf 'pg-%s     %-7s pid %-7s %s:%s  %s\n' "$n" up "$pid" "$H" "$(pgport "$n")" "$kind"
      [ "$kind" = primary ] && psql_node "$n" "SELECT '          replica ' || application_name || ' ' || state || ' ' || sync_state FROM pg_stat_replication" || true
    else printf 'pg-%s     down\n' "$n"; fi
  done
  for r in "${ROLE_NAMES[@]}"; do
    if pid="$(pid_alive "$CDIR/$r.pid" "$BIN serve")"; then printf '%-12s up pid %s\n' "$r" "$pid"
    else printf '%-12s down\n' "$r"; fi
  done
}

down() {
  local r pid n rc=0
  for r in "${ROLE_NAMES[@]}"; do
    if pid="$(pid_alive "$CDIR/$r.pid" "$BIN serve")"; then stop_pid "$pid" "$r"; fi
    rm -f "$CDIR/$r.pid"
  done
  # One broker at a time, so each hands its partitions over (controlled
  # shutdown). The last one has no controller quorum left to ask and would
  # wait for it: it gets a short timeout, then SIGKILL (its log is recovered
  # at the next start).
  local left=0
  for n in 3 2 1; do kafka_pid "$n" >/dev/null && left=$((left + 1)); done
  for n in 3 2 1; do
    if pid="$(kafka_pid "$n")"; then
      if [ "$left" -eq 1 ]; then STOP_TIMEOUT=8 stop_pid "$pid" "broker $n (the last)"; else stop_pid "$pid" "broker $n"; fi
      left=$((left - 1))
    fi
  done
  for n in 1 2 3; do kafka_pid "$n" >/dev/null && { log "broker $n still runs"; rc=1; }; done
  PG_BIN="$(pg_bin_dir || true)"
  # The standby first: a primary whose synchronous standby is gone waits for it.
  local order=(b a)
  if pg_node_pid b >/dev/null && pg_is_primary b 2>/dev/null; then order=(a b); fi
  for n in "${order[@]}"; do
    if pid="$(pg_node_pid "$n")"; then
      log "stopping PostgreSQL pg-$n (pid $pid)"
      pg_run timeout 60 "$PG_BIN/pg_ctl" stop -D "$(pgdir "$n")" -m fast -w -t 45 -s </dev/null \
        || pg_run timeout 30 "$PG_BIN/pg_ctl" stop -D "$(pgdir "$n")" -m immediate -w -t 20 -s </dev/null || rc=1
    fi
  done
  log "cluster stopped (data kept in $CDIR; rm -rf it for a clean slate)"
  return "$rc"
}

case "${1:-up}" in
  up)
    start=$(date +%s)
    mkdir -p "$CDIR"
    kafka_up
    pg_up
    [ "$ROLES" = 1 ] && roles_up
    log "cluster ready in $(secs_since "$start")s"
    [ "$ROLES" = 1 ] && status >&2
    print_env
    ;;
  down) down ;;
  status) status ;;
  env) print_env ;;
  kafka-start)
    [[ "${2:-}" =~ ^[123]$ ]] || die "usage: scripts/cluster.sh kafka-start 1|2|3"
    ensure_java; kafka_start "$2"
    kafka_wait_brokers 120 || die "broker $2 did not come back within 120 s"
    ;;
  pg-promote) pg_promote ;;
  pg-rebuild) pg_rebuild ;;
  *) die "usage: scripts/cluster.sh [up | down | status | env | kafka-start N | pg-promote | pg-rebuild]" ;;
esac
