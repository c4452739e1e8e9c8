#!/usr/bin/env bash
# Local Apache Kafka (KRaft, combined broker+controller nodes on loopback) from its Maven Central jars.
#   deploy/local/kafka.sh fetch    resolve the jars into $MELDSTREAM_KAFKA_LIBS (skipped when present)
#   deploy/local/kafka.sh start    format storage if new, start, wait until a metadata request answers
#   deploy/local/kafka.sh stop     SIGTERM (controlled shutdown), wait, then SIGKILL
#   deploy/local/kafka.sh status   exit 0 and print the address when it answers
# Environment (defaults in brackets): MELDSTREAM_KAFKA_PORT [19092], MELDSTREAM_KAFKA_CONTROLLER_PORT [19093],
# MELDSTREAM_KAFKA_STATE [.local/kafka] (config, data/, logs/, pid), MELDSTREAM_KAFKA_LIBS [.local/kafka/libs],
# MELDSTREAM_KAFKA_HEAP [512m], MELDSTREAM_WATCH_PID (stop when that process is gone). The test harness
# (rummy_infra) runs this with its own ports, state dir and pid.
# One node of a cluster (run once per node, each with its own ports and state; every node is a voter):
# MELDSTREAM_KAFKA_NODE_ID [1], MELDSTREAM_KAFKA_VOTERS (id@127.0.0.1:controller-port,... of every node;
# unset = a single node), MELDSTREAM_KAFKA_CLUSTER_ID (the same on every node; required with voters).
# Internal topics get min(3, nodes) replicas, min ISR 2 from 3 replicas; `start` returns once the node
# answers and sees every node registered (a lone voter waits for a majority: start the nodes together).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
port=${MELDSTREAM_KAFKA_PORT:-19092}
controller_port=${MELDSTREAM_KAFKA_CONTROLLER_PORT:-19093}
state=${MELDSTREAM_KAFKA_STATE:-$root/.local/kafka}
libs=${MELDSTREAM_KAFKA_LIBS:-$root/.local/kafka/libs}
heap=${MELDSTREAM_KAFKA_HEAP:-512m}
node_id=${MELDSTREAM_KAFKA_NODE_ID:-1}
voters=${MELDSTREAM_KAFKA_VOTERS:-}
nodes=1
[[ -z $voters ]] || nodes=$(tr ',' '\n' <<<"$voters" | wc -l)
replication=$((nodes < 3 ? nodes : 3))
min_isr=$((replication >= 3 ? 2 : 1))
pidfile=$state/kafka.pid
java_opts=(-Dlog4j2.configurationFile="$here/kafka/log4j2.properties" -Dkafka.logs.dir="$state/logs")
# The short-lived tools (format, probe) start faster with the client compiler and one GC thread: three
# nodes start at once on a small machine.
tool_opts=(-XX:TieredStopAtLevel=1 -XX:+UseSerialGC "${java_opts[@]}")

fetch() {
  if compgen -G "$libs/kafka_2.13-*.jar" >/dev/null; then
    echo "kafka: jars present in $libs"
    return
  fi
  command -v mvn >/dev/null || { echo "kafka: mvn (Maven) is required to fetch the jars" >&2; exit 1; }
  echo "kafka: resolving org.apache.kafka:kafka_2.13 from Maven Central into $libs"
  mkdir -p "$libs.tmp"
  mvn -B -q -f "$here/kafka/pom.xml" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$libs.tmp"
  rm -rf "$libs" && mv "$libs.tmp" "$libs"   # only a complete download counts as present
}

# When MELDSTREAM_WATCH_PID is set (the test harness sets its own pid), a detached watchdog stops the
# server once that process is gone, so a killed test run leaves nothing running.
watch() {
  [[ -n ${MELDSTREAM_WATCH_PID:-} ]] || return 0
  setsid bash -c 'while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 1; done
                  if kill -0 "$2" 2>/dev/null; then exec "$3" stop; fi' \
    watchdog "$MELDSTREAM_WATCH_PID" "$1" "$2" </dev/null >/dev/null 2>&1 &
}

running() { [[ -f $pidfile ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

probe() {  # $1 = seconds to wait for a DescribeCluster answer naming every node
  java -cp "$libs/*" "${tool_opts[@]}" "$here/kafka/Probe.java" "127.0.0.1:$port" "$1" "$nodes"
}

quorum() {  # the server.properties line that says how this node finds the controllers
  if [[ -n $voters ]]; then
    echo "controller.quorum.voters=$voters"
  else
    echo "controller.quorum.bootstrap.servers=127.0.0.1:$controller_port"
  fi
}

start() {
  fetch >/dev/null
  if running; then
    echo "kafka: already running (pid $(cat "$pidfile"))"
    probe 60
    return
  fi
  mkdir -p "$state/data" "$state/logs"
  sed -e "s|@NODE_ID@|$node_id|g" -e "s|@QUORUM@|$(quorum)|g" -e "s|@PORT@|$port|g" \
    -e "s|@CONTROLLER_PORT@|$controller_port|g" -e "s|@DATA_DIR@|$state/data|g" \
    -e "s|@REPLICATION@|$replication|g" -e "s|@MIN_ISR@|$min_isr|g" \
    "$here/kafka/server.properties.in" >"$state/server.properties"
  if [[ ! -f $state/data/meta.properties ]]; then
    local cluster_id=${MELDSTREAM_KAFKA_CLUSTER_ID:-}
    local mode=(--standalone)
    if [[ -n $voters ]]; then
      [[ -n $cluster_id ]] || { echo "kafka: MELDSTREAM_KAFKA_VOTERS needs MELDSTREAM_KAFKA_CLUSTER_ID" >&2; exit 2; }
      mode=()  # static voters: every node is formatted with the same cluster id, none bootstraps alone
    fi
    [[ -n $cluster_id ]] || cluster_id=$(java -cp "$libs/*" "${tool_opts[@]}" kafka.tools.StorageTool random-uuid)
    java -cp "$libs/*" "${tool_opts[@]}" kafka.tools.StorageTool format "${mode[@]}" \
      -t "$cluster_id" -c "$state/server.properties" >"$state/logs/format.log"
  fi
  # setsid: the broker outlives this script and ignores the terminal's signals; stop() ends it.
  # MELDSTREAM_CHECKOUT in its environment tells which checkout started it (see .ci/run).
  MELDSTREAM_CHECKOUT=$root setsid java -Xms256m -Xmx"$heap" -cp "$libs/*" "${java_opts[@]}" kafka.Kafka "$state/server.properties" \
    >"$state/logs/server.out" 2>&1 </dev/null &
  echo $! >"$pidfile"
  watch "$(cat "$pidfile")" "$here/kafka.sh"
  if ! probe 90; then
    tail -n 30 "$state/logs/server.out" >&2
    stop
    exit 1
  fi
}

stop() {
  if ! running; then
    rm -f "$pidfile"
    echo "kafka: not running"
    return
  fi
  local pid
  pid=$(cat "$pidfile")
  kill -TERM "$pid"
  for _ in $(seq 150); do   # a controlled shutdown takes 1-3 s; give it 30 s
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "kafka: pid $pid ignored SIGTERM, sending SIGKILL" >&2
    kill -KILL "$pid"
  fi
  rm -f "$pidfile"
  echo "kafka: stopped"
}

status() {
  running || { echo "kafka: not running"; exit 1; }
  probe 5
}

case "${1:-}" in
  fetch) fetch ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 {fetch|start|stop|status}" >&2; exit 2 ;;
esac
