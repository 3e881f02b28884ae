# shellcheck shell=bash
# Kafka helpers shared by kafka-up.sh, cluster.sh and infra-down.sh. Sourced after lib.sh.

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

# The install steps kafka-up.sh and cluster.sh share: a JRE >= 17 (apt) and
# the broker jars (Maven Central, once, into $KAFKA_LIBS).

# java_major JAVA : prints the feature version (8, 11, 17, 21, ...)
java_major() {
  "$1" -version 2>&1 | awk -F'"' '/version/ {print $2; exit}' \
    | awk -F. '{ if ($1 == "1") print $2; else print $1 }' | sed 's/[^0-9].*//'
}

# Sets JAVA to a java >= 17 (JAVA_HOME, PATH, /usr/lib/jvm/*), installing one if needed.
find_java() {
  local c m
  for c in ${JAVA_HOME:+"$JAVA_HOME/bin/java"} "$(command -v java 2>/dev/null || true)" \
           $(ls -d /usr/lib/jvm/*/bin/java 2>/dev/null | sort -rV || true); do
    [ -n "$c" ] && [ -x "$c" ] || continue
    m="$(java_major "$c" || true)"
    if [ -n "$m" ] && [ "$m" -ge 17 ]; then JAVA="$c"; return 0; fi
  done
  return 1
}

ensure_java() {
  if ! find_java; then
    local pkgs=(openjdk-17-jre-headless)
    # Fetch maven in the same apt run when the jar cache will need it.
    if [ ! -f "$KAFKA_LIBS/kafka_2.13-$PITBOSS_KAFKA_VERSION.jar" ] && ! command -v mvn >/dev/null 2>&1; then pkgs+=(maven); fi
    apt_install "${pkgs[@]}"
    find_java || die "no Java >= 17 found after installing openjdk-17-jre-headless"
  fi
  JAVA_HOME="$(dirname "$(dirname "$(readlink -f "$JAVA")")")"
  export JAVA_HOME
}

ensure_libs() {
  if [ -f "$KAFKA_LIBS/kafka_2.13-$PITBOSS_KAFKA_VERSION.jar" ]; then
    return 0
  fi
  command -v mvn >/dev/null 2>&1 || apt_install maven
  log "fetching Kafka $PITBOSS_KAFKA_VERSION jars from Maven Central into $KAFKA_LIBS (one-time)"
  local tmp="$KAFKA_HOME/libs.tmp.$$" out
  out="$(mktemp)"
  rm -rf "$tmp"; mkdir -p "$KAFKA_HOME"
  if ! timeout 900 mvn -q -B -Dstyle.color=never -f "$(dirname "${BASH_SOURCE[0]}")/kafka/pom.xml" \
        -Dkafka.version="$PITBOSS_KAFKA_VERSION" -DincludeScope=runtime -DoutputDirectory="$tmp" \
        dependency:copy-dependencies </dev/null >"$out" 2>&1; then
    cat "$out" >&2; rm -f "$out"; rm -rf "$tmp"
    die "maven could not fetch org.apache.kafka:kafka_2.13:$PITBOSS_KAFKA_VERSION (see above)"
  fi
  rm -f "$out"
  [ -f "$tmp/kafka_2.13-$PITBOSS_KAFKA_VERSION.jar" ] || { rm -rf "$tmp"; die "kafka_2.13-$PITBOSS_KAFKA_VERSION.jar missing after maven run"; }
  rm -rf "$KAFKA_LIBS"
  mv "$tmp" "$KAFKA_LIBS"
}
