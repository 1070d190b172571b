#!/usr/bin/env bash
# Starts Debian bookworm's PostgreSQL 15 (no pgvector) on 127.0.0.1:$PG15_PORT, for the test
# that start-up refuses a server without pgvector. Prints the URL last. `pg15.sh stop` stops it.
set -euo pipefail
PORT=${PG15_PORT:-55415}
DIR=${PG15_DIR:-/var/tmp/agentbase-pg15}
BIN=/usr/lib/postgresql/15/bin
if [ "${1:-}" = stop ]; then
  [ -d "$DIR/data" ] && su postgres -s /bin/bash -c "$BIN/pg_ctl -D $DIR/data -m fast stop" >&2 || true
  exit 0
fi
if [ ! -x "$BIN/initdb" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends postgresql-15 >&2 || { apt-get update >&2 && apt-get install -y --no-install-recommends postgresql-15 >&2; }
fi
id postgres >/dev/null 2>&1 || useradd --system --home /var/lib/postgresql postgres
mkdir -p "$DIR" && chown postgres "$DIR"
if [ ! -f "$DIR/data/PG_VERSION" ]; then
  su postgres -s /bin/bash -c "$BIN/initdb -D $DIR/data -A trust -U postgres" >&2
fi
if ! su postgres -s /bin/bash -c "$BIN/pg_ctl -D $DIR/data status" >/dev/null 2>&1; then
  su postgres -s /bin/bash -c "$BIN/pg_ctl -D $DIR/data -o '-p $PORT -k /tmp -c listen_addresses=127.0.0.1' -l $DIR/log -w start" >&2
fi
echo "postgres://postgres@127.0.0.1:$PORT/postgres"
