#!/usr/bin/env bash
# Schemathesis (property-based tests generated from the OpenAPI document) against a gateway of
# this checkout: `npm start` on a free loopback port with a fresh temporary DATA_DIR and the
# built-in simulator, an administrator whose account gets credit and an API key (as README.md
# shows), then `st run http://127.0.0.1:PORT/openapi.json` with the default checks and that key
# as a bearer header, configured by schemathesis.toml (read it: what it allows and why). Exits
# with schemathesis's status (any finding fails it); the gateway and its data go away. CI
# (.ci/run) runs it after the tests.
#
#   npm run schemathesis                               # default budget (1 to 3 minutes on 2 cores)
#   SCHEMATHESIS_MAX_EXAMPLES=20 bash scripts/schemathesis.sh --phases fuzzing
#   bash scripts/schemathesis.sh --install             # only make the venv (CI does it during npm ci)
#
# Extra arguments go to `st run`. Settings (environment): SCHEMATHESIS_MAX_EXAMPLES (per
# operation, default 50), SCHEMATHESIS_SEED (default 1, for a repeatable run),
# SCHEMATHESIS_WORKERS (threads per `st run`, default 2), SCHEMATHESIS_SHARDS (default 2: two
# `st run` processes at once, one for the image edits and async image operations, the costliest to
# generate, one for all the others; 1 runs them all in one process), SCHEMATHESIS_PYTHON (the interpreter of the venv; default
# pyenv's newest 3.13 or 3.12 when there is one, else python3: CPython 3.11.7 fails some of
# schemathesis's cases with `SystemError: AST constructor recursion depth mismatch` from
# hypothesis, 3.12 and 3.13 do not). The venv (schemathesis 4.32.5, from PyPI) is cached in
# .tmp/schemathesis-venv; the gateway's log is .tmp/schemathesis-gateway.log and the reports
# (JUnit, NDJSON) go to .tmp/schemathesis-report, its example database to .tmp/.schemathesis
# (`cd .tmp && schemathesis-venv/bin/st replay <id>`).
set -euo pipefail

VERSION=4.32.5
REPO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$REPO_DIR/.tmp/schemathesis-venv"
REPORT_DIR="$REPO_DIR/.tmp/schemathesis-report"
LOG="$REPO_DIR/.tmp/schemathesis-gateway.log"
MAX_EXAMPLES="${SCHEMATHESIS_MAX_EXAMPLES:-50}"
SEED="${SCHEMATHESIS_SEED:-1}"
WORKERS="${SCHEMATHESIS_WORKERS:-2}"
# The newest 3.13, else 3.12, that pyenv has; else python3.
default_python() {
  local found
  for minor in 13 12; do
    found="$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3."$minor".*/bin/python3 2>/dev/null | sort -V | tail -n 1)"
    if [[ -n "$found" ]]; then
      echo "$found"
      return
    fi
  done
  echo python3
}
PYTHON="${SCHEMATHESIS_PYTHON:-$(default_python)}"

die() {
  echo "schemathesis.sh: $*" >&2
  exit 1
}

mkdir -p "$REPO_DIR/.tmp"
# The venv is reused while it holds this schemathesis on this interpreter.
command -v "$PYTHON" >/dev/null 2>&1 || die "no $PYTHON (set SCHEMATHESIS_PYTHON)"
WANTED="schemathesis==$VERSION on $("$PYTHON" -c 'import sys; print(sys.version.split()[0])')"
if [[ ! -x "$VENV/bin/st" || "$(cat "$VENV/.installed" 2>/dev/null)" != "$WANTED" ]]; then
  echo "installing $WANTED into $VENV …" >&2
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$VERSION"
  echo "$WANTED" >"$VENV/.installed"
fi
if [[ "${1:-}" == "--install" ]]; then exit 0; fi

PORT="$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')"
DATA_DIR="$(mktemp -d "${TMPDIR:-/tmp}/schemathesis-gateway.XXXXXX")"
ADMIN_PASSWORD="st-$(node -e 'console.log(require("crypto").randomBytes(12).toString("hex"))')"
BASE="http://127.0.0.1:$PORT"

gateway_pid=""
cleanup() {
  # The gateway runs in its own process group (setsid): npm, tsx and node stop together.
  if [[ -n "$gateway_pid" ]] && kill -0 "$gateway_pid" 2>/dev/null; then
    kill -TERM -- "-$gateway_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$gateway_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$gateway_pid" 2>/dev/null || true
  fi
  rm -rf "$DATA_DIR"
}
trap cleanup EXIT

echo "starting the gateway at $BASE (data in $DATA_DIR, log in $LOG) …" >&2
(
  cd "$REPO_DIR"
  HOST=127.0.0.1 PORT="$PORT" DATA_DIR="$DATA_DIR" ADMIN_PASSWORD="$ADMIN_PASSWORD" SIMULATOR=1 SIM_STEP_MS=0 LOG_LEVEL=warn \
    exec setsid npm start
) >"$LOG" 2>&1 &
gateway_pid=$!

for _ in $(seq 1 600); do
  if curl -fsS "$BASE/readyz" >/dev/null 2>&1; then break; fi
  kill -0 "$gateway_pid" 2>/dev/null || die "the gateway exited; see $LOG"
  sleep 0.2
done
curl -fsS "$BASE/readyz" >/dev/null || die "the gateway was not ready within 120 s; see $LOG"

# The administrator's account gets credit and an API key (README.md, "Getting started").
field() { node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(eval("JSON.parse(s)" + process.argv[1])))' "$1"; }
JAR="$DATA_DIR/cookies"
curl -fsS -c "$JAR" -H 'content-type: application/json' -d "{\"username\":\"admin\",\"password\":\"$ADMIN_PASSWORD\"}" "$BASE/api/user/login" >/dev/null
USER_ID="$(curl -fsS -b "$JAR" "$BASE/api/user/self" | field .data.id)"
curl -fsS -b "$JAR" -H 'content-type: application/json' -d "{\"user_id\":\"$USER_ID\",\"amount\":1000000000000}" "$BASE/api/admin/credits" >/dev/null
KEY="$(curl -fsS -b "$JAR" -H 'content-type: application/json' -d '{"name":"schemathesis","unlimited_quota":true}' "$BASE/api/token/" | field .data.key)"
[[ -n "$KEY" ]] || die "no API key was created"

SHARDS="${SCHEMATHESIS_SHARDS:-2}"
echo "running schemathesis (max $MAX_EXAMPLES examples per operation, seed $SEED, $WORKERS workers, $SHARDS shards) …" >&2
# From .tmp: schemathesis keeps its example database (what `st replay` reads) in ./.schemathesis.
cd "$REPO_DIR/.tmp"
# The hooks (scripts/schemathesis_hooks.py) add the check that stands in for positive_data_acceptance
# where the document cannot state a rule (schemathesis.toml says which operations).
st_run() {
  local reports="$1"
  shift
  PYTHONPATH="$REPO_DIR/scripts${PYTHONPATH:+:$PYTHONPATH}" SCHEMATHESIS_HOOKS=schemathesis_hooks \
    "$VENV/bin/st" --config-file "$REPO_DIR/schemathesis.toml" run "$BASE/openapi.json" \
    --header "Authorization: Bearer $KEY" \
    --max-examples "$MAX_EXAMPLES" \
    --seed "$SEED" \
    --workers "$WORKERS" \
    --request-timeout 30 \
    --report junit,ndjson \
    --report-dir "$reports" \
    "$@"
}
status=0
if [[ "$SHARDS" == 1 ]]; then
  st_run "$REPORT_DIR" "$@" || status=$?
  exit "$status"
fi
# Generating examples is Python under one interpreter lock: one `st run` keeps one core busy
# whatever its worker count, so two processes split the operations and use both. Each one's
# output is printed whole, one after the other.
SHARD_LOG="$REPO_DIR/.tmp/schemathesis-shard"
st_run "$REPORT_DIR/images" --include-path-regex '^/v1/images/(edits|async)' "$@" >"$SHARD_LOG-images.log" 2>&1 &
images_pid=$!
st_run "$REPORT_DIR/others" --exclude-path-regex '^/v1/images/(edits|async)' "$@" >"$SHARD_LOG-others.log" 2>&1 &
others_pid=$!
wait "$images_pid" || status=$?
wait "$others_pid" || status=$?
for shard in images others; do
  echo "=== schemathesis: the $shard operations"
  cat "$SHARD_LOG-$shard.log"
done
exit "$status"
