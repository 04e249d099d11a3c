# What scripts/kafka-local.sh and scripts/ferretdb-local.sh share: a server of this checkout on
# loopback, found by its pid file, started on free ports (retried when a port is taken between
# the probe and the bind), waited for, and stopped. Sourced; the script sets first:
#   NAME (log prefix), PROCESS_PATTERN (what `ps` shows for the real server), STATE_DIR,
#   PID_FILE, PORT_FILE, LOG_FILE, START_TIMEOUT and STOP_TIMEOUT (seconds); optionally
#   STOP_SIGNAL (default TERM).

die() {
  echo "$NAME: $*" >&2
  exit 1
}

# True when something accepts TCP connections on 127.0.0.1:$1.
listening() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# The pid of this checkout's server when it is alive (and really that server).
running_pid() {
  [[ -f "$PID_FILE" ]] || return 1
  local pid
  pid="$(cat "$PID_FILE")"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
  ps -p "$pid" -o args= 2>/dev/null | grep -q "$PROCESS_PATTERN" || return 1
  echo "$pid"
}

# The first of $2 consecutive free ports on 127.0.0.1, from $1 on.
free_ports() {
  local first="$1" width="$2" port offset free
  for ((port = first; port < first + 200; port += width)); do
    free=1
    for ((offset = 0; offset < width; offset++)); do
      if listening "$((port + offset))"; then free=0; fi
    done
    if ((free)); then
      echo "$port"
      return 0
    fi
  done
  die "no $width free port(s) on 127.0.0.1 from $1"
}

# Runs `$3 PORT` (which starts the server and returns 0 once it is ready, 1 when its port was
# taken) on free ports from $1, $2 ports wide, up to 3 times. A port is probed, then bound by the
# server a moment later: another start on this machine may take it in between. Prints the port.
start_on_free_ports() {
  local first="$1" width="$2" launch="$3" attempt port
  for attempt in 1 2 3; do
    port="$(free_ports "$first" "$width")"
    if "$launch" "$port"; then
      echo "$port"
      return 0
    fi
    echo "$NAME: port $port was taken meanwhile (attempt $attempt), trying further on" >&2
    first=$((port + width))
  done
  die "no free port could be bound after 3 attempts"
}

# Records the started server ($1 pid, $2 port) and waits until `$3 PORT` says it is ready.
# Returns 1 when it exited because its port was taken; any other failure ends the script.
await_ready() {
  local pid="$1" port="$2" ready="$3"
  echo "$pid" >"$PID_FILE"
  echo "$port" >"$PORT_FILE"
  local deadline=$((SECONDS + START_TIMEOUT))
  until "$ready" "$port" && kill -0 "$pid" 2>/dev/null; do
    if ! kill -0 "$pid" 2>/dev/null; then
      if grep -qi 'address already in use' "$LOG_FILE"; then
        rm -rf "$STATE_DIR"
        return 1
      fi
      tail -n 40 "$LOG_FILE" >&2 || true
      die "the server exited during start-up (log: $LOG_FILE)"
    fi
    if ((SECONDS > deadline)); then
      tail -n 40 "$LOG_FILE" >&2 || true
      stop_server >/dev/null 2>&1 || true
      die "the server did not start within ${START_TIMEOUT}s"
    fi
    sleep 0.1
  done
}

# Stops this checkout's server (STOP_SIGNAL, then KILL after STOP_TIMEOUT) and removes its state.
stop_server() {
  local pid waited=0
  if pid="$(running_pid)"; then
    kill -"${STOP_SIGNAL:-TERM}" "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do
      if ((waited >= STOP_TIMEOUT * 10)); then
        kill -KILL "$pid" 2>/dev/null || true
        break
      fi
      sleep 0.1
      waited=$((waited + 1))
    done
    echo "$NAME: stopped (pid $pid)" >&2
  fi
  rm -rf "$STATE_DIR"
}
