#!/usr/bin/env bash
# Runs the jest suites against a throwaway PostgreSQL: initdb into a temp dir, start it on a free port,
# export TEST_DATABASE_URL, run `npm run jest -- "$@"`, then stop it and delete the dir.
#   npm run test:pg                  # every suite, PostgreSQL variants and PostgreSQL-only suites included
#   npm run test:pg -- test/crash    # a subset (jest arguments)
# Needs PostgreSQL's server binaries (Debian: apt-get install postgresql; or set PG_BIN). initdb refuses
# to run as root, so as root the server runs as the `postgres` user.
set -euo pipefail
cd "$(dirname "$0")/.."

PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
if [ -z "$PG_BIN" ] || [ ! -x "$PG_BIN/initdb" ]; then
  PG_BIN=$(dirname "$(command -v initdb || true)")
fi
if [ ! -x "$PG_BIN/initdb" ]; then
  echo "test-postgres: no initdb found; install PostgreSQL (apt-get install postgresql) or set PG_BIN" >&2
  exit 1
fi

as_owner() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

dir=$(mktemp -d /tmp/keel-pg.XXXXXX)
[ "$(id -u)" = 0 ] && chown postgres "$dir"
port=$(node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")

cleanup() {
  as_owner "$PG_BIN/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT

as_owner "$PG_BIN/initdb" -D "$dir/data" -U keel --auth=trust --no-sync >/dev/null
# fsync off: a test database that dies with the run needs no durability, and the run is faster.
as_owner "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
  -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >/dev/null
as_owner "$PG_BIN/createdb" -h 127.0.0.1 -p "$port" -U keel keel_test

export TEST_DATABASE_URL="postgres://keel@127.0.0.1:$port/keel_test"
echo "test-postgres: PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on port $port (TEST_DATABASE_URL=$TEST_DATABASE_URL)" >&2
npm run jest -- "$@"
