#!/usr/bin/env bash
# Fault hooks for a drill against an OpenAI-compatible server this script
# starts and owns (see README.md here and docs/q8.md#hooks).
#
#   server.sh start | stop | status
#   server.sh kill | restart | pause | resume | slowdown FACTOR
#
# The server runs in its own session (setsid), its output in a log file, so
# a hook that starts it returns at once and the drill's process-group kill
# of a timed-out hook cannot reach it; its session id is kept in a pid file,
# and every signal goes to the whole session (the server and its children).
#
#   DRILL_SERVER_CMD  the server's command line (default: sagebench serve
#                     with this directory's stack.yaml on 127.0.0.1:8000)
#   DRILL_HEALTH_URL  start waits until this answers (default
#                     http://127.0.0.1:8000/health; empty: no wait)
#   DRILL_RUN_DIR     pid files and log (default /tmp/sagebench-drill)
#
# slowdown FACTOR: a background cycler (its own session and pid file) lets
# the server run 1/FACTOR of every 100 ms (SIGCONT), stopped the rest
# (SIGSTOP). FACTOR ≤ 1 stops the cycler and resumes the server: that is
# how a drill undoes a timed slowdown (it calls the hook again with factor
# 1 when the duration is over). FACTOR is printed by the drill as a plain
# decimal (4, 2.5, 0.75).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
run=${DRILL_RUN_DIR:-/tmp/sagebench-drill}
cmd=${DRILL_SERVER_CMD:-sagebench serve --config $here/stack.yaml --listen 127.0.0.1:8000}
health=${DRILL_HEALTH_URL-http://127.0.0.1:8000/health}
pidfile=$run/server.pid
cyclefile=$run/slowdown.pid
mkdir -p "$run"

pid() { [ -s "$pidfile" ] && cat "$pidfile"; }
running() { local p; p=$(pid) && kill -0 "$p" 2>/dev/null; }
signal() { local p; p=$(pid) || { echo "no server (no $pidfile)" >&2; exit 1; }; kill "-$1" -- "-$p"; }

stop_cycle() {
  if [ -s "$cyclefile" ]; then
    kill -KILL -- "-$(cat "$cyclefile")" 2>/dev/null || true
    rm -f "$cyclefile"
  fi
}

start() {
  if running; then echo "running: $(pid)"; return; fi
  setsid sh -c "exec $cmd" </dev/null >>"$run/server.log" 2>&1 &
  echo $! >"$pidfile"
  if [ -n "$health" ]; then
    for _ in $(seq 300); do
      if curl -fsS -o /dev/null --max-time 1 "$health" 2>/dev/null; then echo "started: $(pid)"; return; fi
      running || { echo "the server exited; see $run/server.log" >&2; exit 1; }
      sleep 0.1
    done
    echo "the server did not answer $health in 30 s" >&2; exit 1
  fi
  echo "started: $(pid)"
}

kill_server() {
  stop_cycle
  if running; then
    signal KILL
    for _ in $(seq 50); do running || break; sleep 0.1; done
  fi
}

case ${1:-} in
  start) start ;;
  kill) kill_server; echo "killed" ;;
  restart) kill_server; start ;;
  pause) stop_cycle; signal STOP; echo "paused" ;;
  resume) stop_cycle; signal CONT; echo "resumed" ;;
  slowdown)
    factor=${2:?slowdown FACTOR}
    stop_cycle
    if awk -v f="$factor" 'BEGIN { exit !(f <= 1) }'; then signal CONT; echo "full speed"; exit 0; fi
    p=$(pid) || { echo "no server" >&2; exit 1; }
    on=$(awk -v f="$factor" 'BEGIN { printf "%.4f", 0.1 / f }')
    off=$(awk -v f="$factor" 'BEGIN { printf "%.4f", 0.1 - 0.1 / f }')
    setsid sh -c "trap 'kill -CONT -- -$p 2>/dev/null; exit 0' TERM; while :; do kill -CONT -- -$p; sleep $on; kill -STOP -- -$p; sleep $off; done" </dev/null >/dev/null 2>&1 &
    echo $! >"$cyclefile"
    echo "slowed down x$factor" ;;
  stop)
    stop_cycle
    if running; then
      signal CONT; signal TERM
      for _ in $(seq 100); do running || break; sleep 0.1; done
      running && signal KILL
    fi
    rm -f "$pidfile"; echo "stopped" ;;
  status) if running; then echo "running: $(pid)"; else echo "not running"; exit 1; fi ;;
  *) echo "usage: $0 start|stop|status|kill|restart|pause|resume|slowdown FACTOR" >&2; exit 2 ;;
esac
