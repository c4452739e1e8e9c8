#!/usr/bin/env bash
# Local Redis (Debian's redis-server) on loopback, without persistence: snapshots are a cache (DESIGN.md).
#   deploy/local/redis.sh install   apt-get install redis-server when it is missing
#   deploy/local/redis.sh start     start and wait for PING
#   deploy/local/redis.sh stop      SHUTDOWN NOSAVE, then SIGTERM/SIGKILL if it lingers
#   deploy/local/redis.sh status    exit 0 when it answers PING
# Environment: MELDSTREAM_REDIS_PORT [16379], MELDSTREAM_REDIS_STATE [.local/redis] (pid, log),
# MELDSTREAM_WATCH_PID (stop when that process is gone).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
port=${MELDSTREAM_REDIS_PORT:-16379}
state=${MELDSTREAM_REDIS_STATE:-$root/.local/redis}
pidfile=$state/redis.pid

install() {
  if command -v redis-server >/dev/null && command -v redis-cli >/dev/null; then
    echo "redis: $(redis-server --version | cut -d' ' -f1-3) present"
    return
  fi
  local sudo=()
  [[ $(id -u) -eq 0 ]] || sudo=(sudo)
  echo "redis: installing Debian redis-server"
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq redis-server >/dev/null
}

ping() { [[ $(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null) == PONG ]]; }

# When MELDSTREAM_WATCH_PID is set (the test harness sets its own pid), a detached watchdog stops the
# server once that process is gone, so a killed test run leaves nothing running.
watch() {
  [[ -n ${MELDSTREAM_WATCH_PID:-} ]] || return 0
  setsid bash -c 'while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 1; done
                  if kill -0 "$2" 2>/dev/null; then exec "$3" stop; fi' \
    watchdog "$MELDSTREAM_WATCH_PID" "$1" "$2" </dev/null >/dev/null 2>&1 &
}

running() { [[ -f $pidfile ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

start() {
  install >/dev/null
  if running; then
    echo "redis: already running (pid $(cat "$pidfile"))"
    return
  fi
  mkdir -p "$state"
  # No RDB, no AOF: nothing is written to disk; protected mode on loopback only. MELDSTREAM_CHECKOUT in
  # its environment tells which checkout started it (.ci/run checks that nothing is left running).
  MELDSTREAM_CHECKOUT=$root setsid redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no --protected-mode yes \
    --dir "$state" --daemonize no --logfile "$state/redis.log" </dev/null >/dev/null 2>&1 &
  echo $! >"$pidfile"
  watch "$(cat "$pidfile")" "$here/redis.sh"
  for _ in $(seq 100); do
    if ping; then
      echo "redis: answers on 127.0.0.1:$port"
      return
    fi
    running || break
    sleep 0.1
  done
  echo "redis: did not answer on 127.0.0.1:$port" >&2
  tail -n 20 "$state/redis.log" >&2 || true
  stop
  exit 1
}

stop() {
  if ! running; then
    rm -f "$pidfile"
    echo "redis: not running"
    return
  fi
  local pid
  pid=$(cat "$pidfile")
  redis-cli -h 127.0.0.1 -p "$port" shutdown nosave >/dev/null 2>&1 || kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
  rm -f "$pidfile"
  echo "redis: stopped"
}

status() {
  if running && ping; then
    echo "redis: answers on 127.0.0.1:$port"
  else
    echo "redis: not running"
    exit 1
  fi
}

case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 {install|start|stop|status}" >&2; exit 2 ;;
esac
