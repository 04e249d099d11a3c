#!/usr/bin/env bash
# A PostgreSQL server on loopback for the PostgreSQL event store and view store suites, without
# Docker: the server binaries of Debian's `postgresql` package (15 here), a fresh cluster per
# start (initdb, trust authentication on loopback only), fsync on as in production.
#
#   bash scripts/postgres-local.sh start   # starts on a fresh cluster, waits, creates the
#                                           # database, prints POSTGRES_URL=postgres://gateway@127.0.0.1:PORT/gateway
#                                           # (reuses a running one)
#   bash scripts/postgres-local.sh env     # prints `export POSTGRES_URL=…`
#   bash scripts/postgres-local.sh stop    # stops it and removes its data
#   bash scripts/postgres-local.sh crash-restart [SECONDS]
#                                           # an immediate shutdown (no checkpoint: as after a
#                                           # crash), SECONDS down (default 0), then the same
#                                           # cluster again on the same port, after WAL recovery
#
# PostgreSQL refuses to run as root: as root, the server runs as the package's `postgres` user,
# its cluster in a directory of /tmp that user owns (named in .tmp/postgres/datadir). The
# running server's pid, port and log live in this checkout's .tmp/postgres (git-ignored), so two
# checkouts run two servers and `stop` only stops its own.
#
# Settings (environment): POSTGRES_LOCAL_BIN (the directory of initdb and postgres; default: the
# newest /usr/lib/postgresql/*/bin), POSTGRES_LOCAL_STATE, POSTGRES_LOCAL_PORT (first port
# tried), POSTGRES_LOCAL_START_TIMEOUT (seconds, 60).
set -euo pipefail

REPO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE_DIR="${POSTGRES_LOCAL_STATE:-$REPO_DIR/.tmp/postgres}"
FIRST_PORT="${POSTGRES_LOCAL_PORT:-55432}"
START_TIMEOUT="${POSTGRES_LOCAL_START_TIMEOUT:-60}"
PID_FILE="$STATE_DIR/pid"
PORT_FILE="$STATE_DIR/port"
LOG_FILE="$STATE_DIR/server.log"
DATADIR_FILE="$STATE_DIR/datadir"
STOP_TIMEOUT=20
# PostgreSQL's fast shutdown (TERM, its smart shutdown, waits for every client to leave).
STOP_SIGNAL=INT
NAME=postgres-local
PROCESS_PATTERN='postgres'
DATABASE=gateway
ROLE=gateway
# shellcheck source=scripts/lib/local-service.sh
source "$REPO_DIR/scripts/lib/local-service.sh"

bin_dir() {
  if [[ -n "${POSTGRES_LOCAL_BIN:-}" ]]; then
    echo "$POSTGRES_LOCAL_BIN"
    return 0
  fi
  local newest
  newest="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
  [[ -n "$newest" && -x "$newest/initdb" ]] || die "no PostgreSQL server found (Debian: apt-get install postgresql; or set POSTGRES_LOCAL_BIN)"
  echo "$newest"
}

# Runs a server program as the user it may run as.
as_server_user() {
  if [[ "$(id -u)" == 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

url() {
  echo "postgres://$ROLE@127.0.0.1:$1/$DATABASE"
}

start() {
  if running_pid >/dev/null; then
    echo "POSTGRES_URL=$(url "$(cat "$PORT_FILE")")"
    return 0
  fi
  local began=$SECONDS port
  port="$(start_on_free_ports "$FIRST_PORT" 1 launch)"
  echo "$NAME: $("$(bin_dir)/postgres" --version) started in $((SECONDS - began))s on 127.0.0.1:$port (pid $(cat "$PID_FILE"), log $LOG_FILE)" >&2
  echo "POSTGRES_URL=$(url "$port")"
}

# A fresh cluster, started on port $1. Returns 0 once it takes queries, 1 when the port was
# taken; any other failure ends the script.
launch() {
  local port="$1" bin data pid
  bin="$(bin_dir)"
  remove_cluster
  mkdir -p "$STATE_DIR"
  data="$(mktemp -d /tmp/postgres-local.XXXXXX)"
  echo "$data" >"$DATADIR_FILE"
  [[ "$(id -u)" == 0 ]] && chown postgres: "$data"
  as_server_user "$bin/initdb" -D "$data/cluster" -U "$ROLE" --auth=trust --encoding=UTF8 --locale=C.UTF-8 >"$STATE_DIR/initdb.log" 2>&1 ||
    {
      cat "$STATE_DIR/initdb.log" >&2
      die "initdb failed"
    }
  : >"$LOG_FILE"
  serve "$data" "$port"
  if ! await_ready "$SERVER_PID" "$port" accepting; then
    rm -rf "$data"
    return 1
  fi
  record_postmaster "$data"
  as_server_user "$bin/createdb" -h 127.0.0.1 -p "$port" -U "$ROLE" "$DATABASE" || die "createdb $DATABASE failed"
}

# Starts the server of cluster $1/cluster on port $2 in the background; sets SERVER_PID.
serve() {
  local data="$1" port="$2"
  # Loopback TCP only; the socket in the cluster's own directory, not /var/run/postgresql.
  as_server_user nohup "$(bin_dir)/postgres" -D "$data/cluster" -p "$port" -c listen_addresses=127.0.0.1 \
    -c "unix_socket_directories=$data" -c max_connections=200 -c fsync=on \
    </dev/null >>"$LOG_FILE" 2>&1 &
  # The pid of the subshell that runs runuser, which runs the postmaster: alive exactly as long
  # as the server, so start-up waits on it; record_postmaster then records the server's own.
  SERVER_PID=$!
}

# The postmaster's pid (the first line of its postmaster.pid), for `stop` and `crash-restart`
# to signal the server itself: a signal to the subshell or to runuser never reaches it.
record_postmaster() {
  head -n 1 "$1/cluster/postmaster.pid" >"$PID_FILE"
}

# SIGQUIT is PostgreSQL's immediate shutdown: every backend ends at once, nothing is flushed or
# checkpointed, and the next start replays the WAL, as after a crash. Unlike SIGKILL of the
# postmaster it leaves no orphaned backends holding the cluster.
crash_restart() {
  local down="${1:-0}" pid port data waited=0 began=$SECONDS
  pid="$(running_pid)" || die "no PostgreSQL running for this checkout: run \`bash scripts/postgres-local.sh start\`"
  port="$(cat "$PORT_FILE")"
  data="$(cat "$DATADIR_FILE")"
  kill -QUIT "$pid"
  while kill -0 "$pid" 2>/dev/null; do
    ((waited++ < STOP_TIMEOUT * 10)) || die "the server did not end within ${STOP_TIMEOUT}s of SIGQUIT"
    sleep 0.1
  done
  sleep "$down"
  serve "$data" "$port"
  await_ready "$SERVER_PID" "$port" accepting || die "port $port was taken while the server was down"
  record_postmaster "$data"
  echo "$NAME: crashed and restarted on 127.0.0.1:$port in $((SECONDS - began))s (pid $SERVER_PID)" >&2
}

accepting() {
  "$(bin_dir)/pg_isready" -q -h 127.0.0.1 -p "$1" -U "$ROLE" 2>/dev/null
}

remove_cluster() {
  if [[ -f "$DATADIR_FILE" ]]; then
    local data
    data="$(cat "$DATADIR_FILE")"
    [[ "$data" == /tmp/postgres-local.* ]] && rm -rf "$data"
  fi
}

env_lines() {
  running_pid >/dev/null || die "no PostgreSQL running for this checkout: run \`bash scripts/postgres-local.sh start\`"
  echo "export POSTGRES_URL=$(url "$(cat "$PORT_FILE")")"
}

case "${1:-}" in
  start) start ;;
  stop)
    # stop_server removes the state directory, which names the cluster's: read it first.
    data_dir=""
    [[ -f "$DATADIR_FILE" ]] && data_dir="$(cat "$DATADIR_FILE")"
    stop_server
    if [[ "$data_dir" == /tmp/postgres-local.* ]]; then rm -rf "$data_dir"; fi
    ;;
  env) env_lines ;;
  crash-restart) crash_restart "${2:-0}" ;;
  *)
    echo "usage: bash scripts/postgres-local.sh start|stop|env|crash-restart [SECONDS]" >&2
    exit 2
    ;;
esac
