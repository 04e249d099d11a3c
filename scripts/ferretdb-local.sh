#!/usr/bin/env bash
# A MongoDB wire-protocol server on loopback for the MongoDB view store and GridFS contract
# suites, without Docker or MongoDB: FerretDB 1.x with its embedded SQLite handler, built from
# source with the installed Go (1.22 or later; the Go module proxy is the only download).
#
#   bash scripts/ferretdb-local.sh start   # builds once, starts on a fresh store, waits,
#                                           # prints MONGO_URL=mongodb://127.0.0.1:PORT/ (reuses a running one)
#   bash scripts/ferretdb-local.sh env     # prints `export MONGO_URL=…` and `export MONGO_STANDIN=ferretdb`
#   bash scripts/ferretdb-local.sh stop    # stops it and removes its data
#
# FerretDB is a stand-in, not MongoDB: what differs is listed in the README ("Tests of the
# distributed adapters"); suites skip such cases by name only when MONGO_STANDIN=ferretdb.
# The 1.x line is the last with an embedded backend (2.x needs PostgreSQL with DocumentDB).
#
# The binary is cached per version outside the checkout, so a fresh clone on the same machine
# reuses it: ${FERRETDB_LOCAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/media-gateway/ferretdb-VERSION}/bin.
# The running server's state (pid, port, log, SQLite files) lives in this checkout's
# .tmp/ferretdb (git-ignored), so two checkouts run two servers and `stop` only stops its own.
#
# Settings (environment): FERRETDB_LOCAL_VERSION (default below), FERRETDB_LOCAL_CACHE,
# FERRETDB_LOCAL_STATE, FERRETDB_LOCAL_PORT (first port tried), FERRETDB_LOCAL_LOG_LEVEL
# (default error: warn logs every error reply in full), FERRETDB_LOCAL_START_TIMEOUT (seconds, 60).
set -euo pipefail

VERSION="${FERRETDB_LOCAL_VERSION:-1.24.0}"
MODULE="github.com/FerretDB/FerretDB"
REPO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE_DIR="${FERRETDB_LOCAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/media-gateway/ferretdb-$VERSION}"
STATE_DIR="${FERRETDB_LOCAL_STATE:-$REPO_DIR/.tmp/ferretdb}"
FIRST_PORT="${FERRETDB_LOCAL_PORT:-27217}"
LOG_LEVEL="${FERRETDB_LOCAL_LOG_LEVEL:-error}"
START_TIMEOUT="${FERRETDB_LOCAL_START_TIMEOUT:-60}"
BINARY="$CACHE_DIR/bin/ferretdb"
PID_FILE="$STATE_DIR/pid"
PORT_FILE="$STATE_DIR/port"
LOG_FILE="$STATE_DIR/server.log"
STOP_TIMEOUT=10
NAME=ferretdb-local
PROCESS_PATTERN='ferretdb'
# shellcheck source=scripts/lib/local-service.sh
source "$REPO_DIR/scripts/lib/local-service.sh"

# Builds the binary once. Not `go install …@vVERSION`: FerretDB's build/version package panics
# at start-up without a version.txt that its own task runner generates, and `go install` also
# lists the module's versions, which some module proxies refuse. So: download the module at
# that exact version, copy its source, write version.txt, build; one rename publishes it, so
# an interrupted build is never taken for a cache.
build() {
  [[ -x "$BINARY" ]] && return 0
  command -v go >/dev/null 2>&1 || die "go not found: Go 1.22 or later is needed once to build FerretDB $VERSION into $CACHE_DIR"
  mkdir -p "$CACHE_DIR"
  BUILD_WORK="$(mktemp -d "$CACHE_DIR/build.XXXXXX")"
  trap 'chmod -R u+w "$BUILD_WORK" 2>/dev/null; rm -rf "$BUILD_WORK"' EXIT
  local work="$BUILD_WORK" began=$SECONDS info dir commit
  echo "ferretdb-local: building FerretDB $VERSION with $(go env GOVERSION) into $BINARY (once per machine)" >&2
  info="$(cd "$work" && go mod download -json "$MODULE@v$VERSION")" || die "could not download $MODULE@v$VERSION from the Go module proxy: $info"
  dir="$(json_field Dir <<<"$info")"
  commit="$(json_field Hash <<<"$info")"
  [[ -n "$dir" && -d "$dir" ]] || die "go mod download did not report the source directory of $MODULE@v$VERSION"
  cp -R "$dir" "$work/src"
  chmod -R u+w "$work/src"
  echo "v$VERSION" >"$work/src/build/version/version.txt"
  [[ -n "$commit" ]] && echo "$commit" >"$work/src/build/version/commit.txt"
  mkdir -p "$work/bin"
  # GOTOOLCHAIN=local: an older Go fails here naming the version it needs, instead of
  # downloading a toolchain behind the caller's back.
  if ! (cd "$work/src" && CGO_ENABLED=0 GOTOOLCHAIN=local go build -buildvcs=false -trimpath -o "$work/bin/ferretdb" ./cmd/ferretdb) >"$work/build.log" 2>&1; then
    cat "$work/build.log" >&2
    die "building FerretDB $VERSION failed (Go 1.22 or later is needed; \`go version\`: $(go env GOVERSION))"
  fi
  "$work/bin/ferretdb" --version >/dev/null 2>&1 || die "the built FerretDB $VERSION does not run"
  # Another start may have finished the same build meanwhile: keep the first one.
  if [[ ! -x "$BINARY" ]]; then
    mkdir -p "$CACHE_DIR/bin"
    mv "$work/bin/ferretdb" "$BINARY"
  fi
  chmod -R u+w "$work"
  rm -rf "$work"
  trap - EXIT
  echo "ferretdb-local: built FerretDB $VERSION in $((SECONDS - began))s" >&2
}

# The string value of the first "$1" key in the JSON on stdin (go mod download -json output).
json_field() {
  sed -n "s/^[[:space:]]*\"$1\": \"\\(.*\\)\",\\{0,1\\}\$/\\1/p" | head -n 1
}

start() {
  if running_pid >/dev/null; then
    echo "MONGO_URL=mongodb://127.0.0.1:$(cat "$PORT_FILE")/"
    return 0
  fi
  build
  local began=$SECONDS port
  port="$(start_on_free_ports "$FIRST_PORT" 1 launch)"
  echo "ferretdb-local: FerretDB $VERSION (SQLite handler) started in $((SECONDS - began))s on 127.0.0.1:$port (pid $(cat "$PID_FILE"), log $LOG_FILE)" >&2
  echo "MONGO_URL=mongodb://127.0.0.1:$port/"
}

# Starts on a fresh store on port $1. Returns 0 once it accepts connections, 1 when the port was
# taken; any other failure ends the script.
launch() {
  local port="$1" pid
  rm -rf "$STATE_DIR"
  mkdir -p "$STATE_DIR/data"
  # Loopback only; no debug/metrics listener; telemetry off (DO_NOT_TRACK as well).
  DO_NOT_TRACK=1 nohup "$BINARY" \
    --handler=sqlite "--sqlite-url=file:$STATE_DIR/data/" "--state-dir=$STATE_DIR" \
    "--listen-addr=127.0.0.1:$port" --debug-addr=- --telemetry=disable \
    "--log-level=$LOG_LEVEL" --log-format=console \
    </dev/null >"$LOG_FILE" 2>&1 &
  pid=$!
  await_ready "$pid" "$port" listening
}

env_lines() {
  running_pid >/dev/null || die "no FerretDB running for this checkout: run \`bash scripts/ferretdb-local.sh start\`"
  echo "export MONGO_URL=mongodb://127.0.0.1:$(cat "$PORT_FILE")/"
  echo "export MONGO_STANDIN=ferretdb"
}

case "${1:-}" in
  start) start ;;
  stop) stop_server ;;
  env) env_lines ;;
  *)
    echo "usage: bash scripts/ferretdb-local.sh start|stop|env" >&2
    exit 2
    ;;
esac
