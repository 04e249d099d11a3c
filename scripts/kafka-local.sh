#!/usr/bin/env bash
# A real Apache Kafka broker on loopback for the Kafka bus contract suite, without Docker: only
# Java 17+ (and Maven for the first download) are needed.
#
#   bash scripts/kafka-local.sh start   # fetches once, formats a fresh KRaft store, starts, waits,
#                                        # prints KAFKA_BROKERS=127.0.0.1:PORT (reuses a running one)
#   bash scripts/kafka-local.sh env     # prints `export KAFKA_BROKERS=127.0.0.1:PORT` of the running one
#   bash scripts/kafka-local.sh stop    # stops it and removes its data
#
# The broker jars (org.apache.kafka:kafka_2.13 and its runtime dependencies, from Maven Central)
# are cached per version outside the checkout, so a fresh clone on the same machine reuses them:
# ${KAFKA_LOCAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/media-gateway/kafka-VERSION}.
# The running broker's state (pid, port, properties, log, data) lives in this checkout's
# .tmp/kafka (git-ignored), so two checkouts run two brokers and `stop` only stops its own.
#
# Settings (environment): KAFKA_LOCAL_VERSION (default below), KAFKA_LOCAL_CACHE, KAFKA_LOCAL_STATE,
# KAFKA_LOCAL_PORT (first port tried; the broker takes a free port from there and the controller
# the one after it), KAFKA_LOCAL_HEAP (default 512m), KAFKA_LOCAL_START_TIMEOUT (seconds, 90).
set -euo pipefail

VERSION="${KAFKA_LOCAL_VERSION:-4.3.1}"
REPO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE_DIR="${KAFKA_LOCAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/media-gateway/kafka-$VERSION}"
STATE_DIR="${KAFKA_LOCAL_STATE:-$REPO_DIR/.tmp/kafka}"
FIRST_PORT="${KAFKA_LOCAL_PORT:-19192}"
HEAP="${KAFKA_LOCAL_HEAP:-512m}"
START_TIMEOUT="${KAFKA_LOCAL_START_TIMEOUT:-90}"
LIB_DIR="$CACHE_DIR/lib"
PID_FILE="$STATE_DIR/pid"
PORT_FILE="$STATE_DIR/port"
LOG_FILE="$STATE_DIR/server.log"
STOP_TIMEOUT=30
NAME=kafka-local
PROCESS_PATTERN='kafka\.Kafka'
# shellcheck source=scripts/lib/local-service.sh
source "$REPO_DIR/scripts/lib/local-service.sh"

need_java() {
  command -v java >/dev/null 2>&1 || die "java not found (Kafka $VERSION needs Java 17 or later)"
  local major
  major="$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)"
  [[ -n "$major" && "$major" -ge 17 ]] || die "Kafka $VERSION needs Java 17 or later; \`java -version\` says ${major:-unknown}"
}

# Downloads the broker's jars once: a generated pom, `mvn dependency:copy-dependencies` into a
# temporary directory, then one rename, so an interrupted download is never taken for a cache.
fetch() {
  [[ -f "$LIB_DIR/.complete" ]] && return 0
  command -v mvn >/dev/null 2>&1 || die "mvn not found: it is needed once to fetch Kafka $VERSION from Maven Central into $CACHE_DIR"
  mkdir -p "$CACHE_DIR"
  FETCH_WORK="$(mktemp -d "$CACHE_DIR/fetch.XXXXXX")"
  trap 'rm -rf "$FETCH_WORK"' EXIT
  local work="$FETCH_WORK"
  echo "kafka-local: fetching org.apache.kafka:kafka_2.13:$VERSION from Maven Central into $LIB_DIR" >&2
  write_pom "$work/pom.xml" ""
  maven "$work" || die "mvn could not fetch Kafka $VERSION"
  # The slf4j binding, at the version of the log4j-api that Kafka depends on.
  local log4j
  log4j="$(cd "$work/lib" && ls log4j-api-*.jar | sed 's/^log4j-api-\(.*\)\.jar$/\1/')"
  [[ -n "$log4j" ]] || die "no log4j-api among Kafka $VERSION's dependencies"
  write_pom "$work/pom.xml" "<dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId><version>$log4j</version></dependency>"
  maven "$work" || die "mvn could not fetch log4j-slf4j-impl $log4j"
  touch "$work/lib/.complete"
  # Another start may have finished the same download meanwhile: keep the first complete one.
  if [[ ! -f "$LIB_DIR/.complete" ]]; then
    rm -rf "$LIB_DIR"
    mv "$work/lib" "$LIB_DIR"
  fi
  rm -rf "$work"
  trap - EXIT
}

# Copies the runtime dependencies of $1/pom.xml into $1/lib; Maven's output is shown only on failure.
maven() {
  if ! mvn -B -q -Dstyle.color=never -f "$1/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
    -DoutputDirectory="$1/lib" >"$1/mvn.log" 2>&1; then
    cat "$1/mvn.log" >&2
    return 1
  fi
}

write_pom() {
  cat >"$1" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.media-gateway</groupId>
  <artifactId>kafka-local</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$VERSION</version></dependency>
    $2
  </dependencies>
</project>
EOF
}

# True when something accepts TCP connections on 127.0.0.1:$1.

write_config() {
  local port="$1" controller="$2"
  cat >"$STATE_DIR/server.properties" <<EOF
# Single-node KRaft broker and controller on loopback, written by scripts/kafka-local.sh.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$controller
advertised.listeners=PLAINTEXT://127.0.0.1:$port
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
log.dirs=$STATE_DIR/data
# As the compose broker: topics exist only when the bus creates them.
auto.create.topics.enable=false
num.partitions=1
offsets.topic.replication.factor=1
# Fewer offsets partitions than the default 50: the first consumer group starts faster.
offsets.topic.num.partitions=8
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
EOF
  cat >"$STATE_DIR/log4j2.properties" <<'EOF'
status = warn
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.out.ref = out
logger.kafka.name = kafka
logger.kafka.level = info
logger.state.name = state.change.logger
logger.state.level = warn
EOF
}

start() {
  if running_pid >/dev/null; then
    echo "KAFKA_BROKERS=127.0.0.1:$(cat "$PORT_FILE")"
    return 0
  fi
  need_java
  fetch
  local began=$SECONDS port
  # Two ports: the broker's clients and, the one after it, its controller.
  port="$(start_on_free_ports "$FIRST_PORT" 2 launch)"
  echo "kafka-local: Kafka $VERSION started in $((SECONDS - began))s on 127.0.0.1:$port (pid $(cat "$PID_FILE"), log $LOG_FILE)" >&2
  echo "KAFKA_BROKERS=127.0.0.1:$port"
}

# Ready once the server says it started and its client listener accepts connections.
broker_ready() {
  grep -q 'Kafka Server started' "$LOG_FILE" 2>/dev/null && listening "$1"
}

# Formats a fresh store and starts the broker on $1 (clients) and $1+1 (controller). Returns 0
# once it is ready, 1 when a port was taken; any other failure ends the script.
launch() {
  local port="$1" controller=$(($1 + 1)) pid cluster_id
  rm -rf "$STATE_DIR"
  mkdir -p "$STATE_DIR"
  write_config "$port" "$controller"
  local classpath="$LIB_DIR/*"
  local jvm=(-Xms128m "-Xmx$HEAP" -XX:+UseG1GC -Djava.awt.headless=true "-Dlog4j2.configurationFile=$STATE_DIR/log4j2.properties")
  # A cluster id is 16 random bytes in URL-safe base64 without padding (what `random-uuid` prints).
  # One starting with '-' reads as an option to the tool's argument parser (about 1 run in 64
  # failed so): drawn again, as Kafka's own Uuid.randomUuid does.
  cluster_id="-"
  while [[ "$cluster_id" == -* ]]; do
    cluster_id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
  done
  java "${jvm[@]}" -cp "$classpath" kafka.tools.StorageTool format --ignore-formatted \
    -t "$cluster_id" -c "$STATE_DIR/server.properties" >"$STATE_DIR/format.log" 2>&1 ||
    die "formatting the KRaft store failed: $(cat "$STATE_DIR/format.log")"
  nohup java "${jvm[@]}" -cp "$classpath" kafka.Kafka "$STATE_DIR/server.properties" \
    </dev/null >"$LOG_FILE" 2>&1 &
  pid=$!
  await_ready "$pid" "$port" broker_ready
}

env_line() {
  running_pid >/dev/null || die "no broker running for this checkout: run \`bash scripts/kafka-local.sh start\`"
  echo "export KAFKA_BROKERS=127.0.0.1:$(cat "$PORT_FILE")"
}

case "${1:-}" in
  start) start ;;
  stop) stop_server ;;
  env) env_line ;;
  *)
    echo "usage: bash scripts/kafka-local.sh start|stop|env" >&2
    exit 2
    ;;
esac
