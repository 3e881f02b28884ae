# shellcheck shell=bash
# Kafka helpers shared by kafka-up.sh and infra-down.sh. Sourced after lib.sh.

KAFKA_DIR="$PITBOSS_DATA_DIR/kafka"          # server.properties, log4j2, pid, cluster id
KAFKA_LOG_DIRS="$KAFKA_DIR/data"             # log.dirs (topic data + KRaft metadata)
KAFKA_PIDFILE="$KAFKA_DIR/kafka.pid"
KAFKA_LOGFILE="$PITBOSS_DATA_DIR/kafka.log"
KAFKA_HOME="$PITBOSS_CACHE_DIR/kafka-$PITBOSS_KAFKA_VERSION"
KAFKA_LIBS="$KAFKA_HOME/libs"

# Print the pid of the broker our scripts started, if it is still running.
kafka_ours_pid() {
  local pid
  [ -r "$KAFKA_PIDFILE" ] || return 1
  pid="$(cat "$KAFKA_PIDFILE" 2>/dev/null || true)"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  # Guard against a recycled pid: it must be a JVM running kafka.Kafka with our config.
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "kafka.Kafka $KAFKA_DIR/server.properties" || return 1
  echo "$pid"
}
kafka_ours_running() { kafka_ours_pid >/dev/null; }

# True when a broker at host:port answers a metadata request and lists a broker.
kafka_metadata_ok() { # [host:port]
  local out
  out="$(timeout 15 kcat -b "${1:-$PITBOSS_KAFKA_BROKERS}" -L -m 5 2>/dev/null </dev/null)" || return 1
  grep -qE 'broker [0-9]+ at ' <<<"$out"
}
