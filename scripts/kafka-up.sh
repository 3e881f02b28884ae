#!/usr/bin/env bash
# Ensure a single-node Apache Kafka broker (KRaft, combined broker+controller)
# answers on $PITBOSS_KAFKA_HOST:$PITBOSS_KAFKA_PORT, then print
# PITBOSS_KAFKA_BROKERS=... on stdout.
#
# - A broker already answering metadata requests there is reused.
# - Otherwise the broker jars (org.apache.kafka:kafka_2.13:$PITBOSS_KAFKA_VERSION
#   + log4j2) are fetched from Maven Central once into
#   $PITBOSS_CACHE_DIR/kafka-<version>/libs (scripts/kafka/pom.xml), the storage
#   in $PITBOSS_DATA_DIR/kafka/data is formatted once, and kafka.Kafka is started
#   in the background (log: $PITBOSS_DATA_DIR/kafka.log, pid: $PITBOSS_DATA_DIR/kafka/kafka.pid).
# - Missing packages (JRE 17, maven, kcat) are installed with apt.
# Idempotent; every wait is bounded. Diagnostics go to stderr, only the result to stdout.
set -euo pipefail
PITBOSS_LOG_TAG=kafka
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source=scripts/lib.sh
source "$SCRIPT_DIR/lib.sh"
# shellcheck source=scripts/kafka-lib.sh
source "$SCRIPT_DIR/kafka-lib.sh"

START_TS=$(date +%s)
READY_TIMEOUT="${PITBOSS_KAFKA_READY_TIMEOUT:-60}"
HOSTNAME_="$PITBOSS_KAFKA_HOST"
PORT="$PITBOSS_KAFKA_PORT"
CPORT="$PITBOSS_KAFKA_CONTROLLER_PORT"
V="$PITBOSS_KAFKA_VERSION"

fail_start() {
  log "$1"
  log "port: $HOSTNAME_:$PORT (controller $CPORT)   log file: $KAFKA_LOGFILE"
  show_log_tail "$KAFKA_LOGFILE" 60
  exit 1
}

finish() {
  log "ready after $(secs_since "$START_TS")s"
  echo "PITBOSS_KAFKA_BROKERS=$PITBOSS_KAFKA_BROKERS"
  exit 0
}

wait_ready() { # seconds [pid]
  local deadline=$(( $(date +%s) + $1 )) pid="${2:-}"
  while [ "$(date +%s)" -lt "$deadline" ]; do
    # Cheap TCP probe first: kcat blocks for its whole -m timeout while the port is closed.
    if tcp_open "$HOSTNAME_" "$PORT" && kafka_metadata_ok "$HOSTNAME_:$PORT"; then
      return 0
    fi
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
      fail_start "the broker process (pid $pid) exited during startup"
    fi
    sleep 0.5
  done
  return 1
}

write_config() {
  mkdir -p "$KAFKA_DIR" "$KAFKA_LOG_DIRS"
  cat >"$KAFKA_DIR/server.properties" <<EOF
# Written by scripts/kafka-up.sh on every start; edit the script, not this file.
# Single-node KRaft: this process is both broker and controller.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOSTNAME_:$CPORT
controller.listener.names=CONTROLLER
listeners=PLAINTEXT://$HOSTNAME_:$PORT,CONTROLLER://$HOSTNAME_:$CPORT
advertised.listeners=PLAINTEXT://$HOSTNAME_:$PORT
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT

log.dirs=$KAFKA_LOG_DIRS
num.partitions=6
default.replication.factor=1
min.insync.replicas=1
auto.create.topics.enable=true
delete.topic.enable=true

# Internal topics: one replica, fewer partitions (faster first consumer group / transaction).
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=10
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0

num.network.threads=3
num.io.threads=4
log.retention.hours=168
log.segment.bytes=268435456
EOF
  cat >"$KAFKA_DIR/log4j2.properties" <<EOF
# Written by scripts/kafka-up.sh. Everything goes to $KAFKA_LOGFILE, nothing to the console.
status = warn
name = pitboss-kafka
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = $KAFKA_LOGFILE
appender.file.append = true
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.statechange.name = state.change.logger
logger.statechange.level = WARN
logger.authorizer.name = kafka.authorizer.logger
logger.authorizer.level = WARN
EOF
}

jvm_opts() {
  # shellcheck disable=SC2206
  JVM_OPTS=($PITBOSS_KAFKA_HEAP_OPTS -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20
    -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent
    -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true
    "-Dlog4j2.configurationFile=$KAFKA_DIR/log4j2.properties"
    "-Dkafka.logs.dir=$KAFKA_DIR")
}

format_storage() {
  [ -f "$KAFKA_LOG_DIRS/meta.properties" ] && return 0
  local cid
  if [ -s "$KAFKA_DIR/cluster.id" ]; then
    cid="$(cat "$KAFKA_DIR/cluster.id")"
  else
    local out
    out="$(timeout 60 "$JAVA" "${JVM_OPTS[@]}" -cp "$KAFKA_LIBS/*" kafka.tools.StorageTool random-uuid </dev/null 2>&1)" || true
    cid="$(printf '%s\n' "$out" | grep -E '^[A-Za-z0-9_-]{22}$' | tail -n 1 || true)"
    if [ -z "$cid" ]; then
      printf '%s\n' "$out" >>"$KAFKA_LOGFILE"
      fail_start "could not generate a cluster id (kafka.tools.StorageTool random-uuid)"
    fi
    echo "$cid" >"$KAFKA_DIR/cluster.id"
  fi
  log "formatting $KAFKA_LOG_DIRS (cluster id $cid)"
  if ! timeout 120 "$JAVA" "${JVM_OPTS[@]}" -cp "$KAFKA_LIBS/*" kafka.tools.StorageTool format \
        -t "$cid" -c "$KAFKA_DIR/server.properties" </dev/null >>"$KAFKA_LOGFILE" 2>&1; then
    fail_start "kafka storage format failed"
  fi
}

# Close inherited descriptors above 2 so the daemon never holds a caller's pipe
# (a CI runner waiting for EOF would otherwise hang).
start_broker() {
  local sz
  sz="$(stat -c %s "$KAFKA_LOGFILE" 2>/dev/null || echo 0)"
  [ "$sz" -gt $(( 50 * 1024 * 1024 )) ] && mv -f "$KAFKA_LOGFILE" "$KAFKA_LOGFILE.1"
  printf '===== %s scripts/kafka-up.sh: starting Kafka %s on %s:%s =====\n' \
    "$(date -u +%FT%TZ)" "$V" "$HOSTNAME_" "$PORT" >>"$KAFKA_LOGFILE"
  rm -f "$KAFKA_PIDFILE"
  ( cd "$KAFKA_DIR" && exec setsid nohup bash -c '
      for fd in /proc/$$/fd/*; do
        fd="${fd##*/}"
        if [ "$fd" -gt 2 ] 2>/dev/null; then eval "exec $fd>&-" 2>/dev/null || true; fi
      done
      echo $$ >"$0"
      exec "$@"' "$KAFKA_PIDFILE" \
      "$JAVA" "${JVM_OPTS[@]}" -cp "$KAFKA_LIBS/*" kafka.Kafka "$KAFKA_DIR/server.properties" \
      </dev/null >>"$KAFKA_LOGFILE" 2>&1 ) &
  local i
  for i in $(seq 1 50); do [ -s "$KAFKA_PIDFILE" ] && break; sleep 0.1; done
  [ -s "$KAFKA_PIDFILE" ] || fail_start "the broker did not start (no pid file)"
}

# ------------------------------------------------------------------- main --
command -v kcat >/dev/null 2>&1 || apt_install kcat
# The jars are needed even when a running broker is reused: the chaos suite
# starts a private broker from them. Fetched once, then cached.
ensure_java
ensure_libs

if tcp_open "$HOSTNAME_" "$PORT" && kafka_metadata_ok "$HOSTNAME_:$PORT"; then
  if kafka_ours_running; then log "reusing our broker (pid $(kafka_ours_pid)) on $HOSTNAME_:$PORT"
  else log "reusing the Kafka broker already answering on $HOSTNAME_:$PORT"; fi
  finish
fi

if pid="$(kafka_ours_pid)"; then
  log "our broker (pid $pid) is running but not answering yet; waiting up to ${READY_TIMEOUT}s"
  wait_ready "$READY_TIMEOUT" "$pid" \
    || fail_start "our broker (pid $pid) does not answer on $HOSTNAME_:$PORT (started with another port? run scripts/infra-down.sh)"
  finish
fi

for p in "$PORT" "$CPORT"; do
  if tcp_open "$HOSTNAME_" "$p"; then
    die "port $HOSTNAME_:$p is taken by something that is not a working Kafka broker; stop it or set PITBOSS_KAFKA_PORT / PITBOSS_KAFKA_CONTROLLER_PORT"
  fi
done

mkdir -p "$PITBOSS_DATA_DIR"
write_config
jvm_opts
format_storage
log "starting Kafka $V (java $(java_major "$JAVA")) on $HOSTNAME_:$PORT, controller $CPORT (log: $KAFKA_LOGFILE)"
start_broker
pid="$(cat "$KAFKA_PIDFILE")"
wait_ready "$READY_TIMEOUT" "$pid" \
  || fail_start "the broker (pid $pid) did not answer a metadata request within ${READY_TIMEOUT}s"
finish
