#!/usr/bin/env bash
# Starts a real PostgreSQL 17 with pgvector on 127.0.0.1:$PORT, for CI and local test runs.
#
# Debian bookworm has no pgvector, so the server runs from a Debian trixie root made by
# debootstrap (cached in $ROOT between runs; a cold build takes a few minutes, a cached start
# a few seconds). Progress goes to stderr; the LAST line of stdout is the connection URL:
#     postgres://postgres@127.0.0.1:$PORT/postgres
#
# Usage:  .ci/pg17.sh [start]   start (or reuse) the server, print the URL
#         .ci/pg17.sh stop      stop the server if it runs
#         .ci/pg17.sh status    say whether it runs (exit 0 if so, 3 if not)
# Env:    PG17_ROOT (default /var/cache/agentbase/pg17-trixie), PG17_PORT (default 55432)
set -euo pipefail

ROOT=${PG17_ROOT:-/var/cache/agentbase/pg17-trixie}
PORT=${PG17_PORT:-55432}
CMD=${1:-start}
BIN=/usr/lib/postgresql/17/bin
DATA=/var/pg/data
URL="postgres://postgres@127.0.0.1:$PORT/postgres"
START_TS=$SECONDS

log() { printf 'pg17: %s\n' "$*" >&2; }
die() { printf 'pg17: ERROR: %s\n' "$*" >&2; exit 1; }
elapsed() { log "$1 in $((SECONDS - START_TS))s"; }

case "$CMD" in start | stop | status) ;; *) die "unknown subcommand '$CMD' (use start, stop or status)" ;; esac
[ "$(id -u)" = 0 ] || die "must run as root (needs debootstrap and chroot)"
case "$PORT" in '' | *[!0-9]*) die "PG17_PORT must be a number, got '$PORT'" ;; esac
case "$ROOT" in /?*) ;; *) die "PG17_ROOT must be an absolute path, got '$ROOT'" ;; esac
ROOT=${ROOT%/}

# One run at a time per root (parallel test jobs may call this together). as_pg closes fd 9
# so that the server never inherits (and keeps holding) the lock.
mkdir -p "$(dirname "$ROOT")"
exec 9>"$ROOT.lock"
flock -w 900 9 || die "timed out waiting for the lock $ROOT.lock"

# Run a shell snippet inside the root as the postgres user, with a clean environment.
as_pg() {
  local uid gid
  uid=$(awk -F: '$1=="postgres"{print $3}' "$ROOT/etc/passwd")
  gid=$(awk -F: '$1=="postgres"{print $4}' "$ROOT/etc/passwd")
  [ -n "$uid" ] && [ -n "$gid" ] || die "no postgres user in $ROOT/etc/passwd (broken root? remove $ROOT)"
  chroot --userspec="$uid:$gid" "$ROOT" /usr/bin/env -i \
    HOME=/var/lib/postgresql USER=postgres LOGNAME=postgres SHELL=/bin/bash \
    PATH="$BIN:/usr/local/bin:/usr/bin:/bin" LANG=C.UTF-8 LC_ALL=C.UTF-8 \
    /bin/bash -c "$1" 9>&-
}

have_root() { [ -x "$ROOT/usr/lib/postgresql/17/bin/postgres" ]; }

# pg_ctl status: 0 = running, 3 = not running, 4 = no data dir.
pg_status() {
  local rc=0
  as_pg "pg_ctl -D $DATA status" >/dev/null 2>&1 || rc=$?
  return "$rc"
}

# Port the running server listens on (line 4 of postmaster.pid).
running_port() { sed -n 4p "$ROOT$DATA/postmaster.pid" 2>/dev/null || true; }

stop_server() {
  if ! have_root; then log "no root at $ROOT, nothing to stop"; return 0; fi
  if pg_status; then
    log "stopping server (port $(running_port))"
    as_pg "pg_ctl -D $DATA -m fast -w -t 60 stop" >&2 || die "pg_ctl stop failed"
  else
    log "server not running"
  fi
}

if [ "$CMD" = stop ]; then stop_server; exit 0; fi
if [ "$CMD" = status ]; then
  if have_root && pg_status; then log "running on port $(running_port)"; exit 0; fi
  log "not running"; exit 3
fi

# ---- 1. the trixie root ---------------------------------------------------------------

# Unmount anything left mounted under the root (a debootstrap killed halfway may leave
# proc/sys there) so that removing it cannot reach outside.
umount_under_root() {
  local m
  awk -v r="$ROOT/" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do
    umount -l "$m" 2>/dev/null || true
  done
}

remove_root() {
  umount_under_root
  rm -rf --one-file-system -- "$ROOT"
}

if have_root; then
  log "using cached trixie root $ROOT"
else
  if ! command -v debootstrap >/dev/null 2>&1; then
    log "installing debootstrap"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -q debootstrap >&2; then
      log "apt-get install failed; running apt-get update and retrying"
      apt-get update -q >&2 || die "apt-get update failed"
      apt-get install -y -q debootstrap >&2 || die "could not install debootstrap"
    fi
  fi
  for attempt in 1 2; do
    if [ -e "$ROOT" ]; then log "removing partial root $ROOT"; remove_root; fi
    log "debootstrap trixie into $ROOT (attempt $attempt; takes a few minutes)"
    if debootstrap --variant=minbase --include=postgresql-17,postgresql-17-pgvector \
      trixie "$ROOT" >&2 9>&- && have_root; then
      break
    fi
    log "debootstrap failed (attempt $attempt)"
    remove_root
    [ "$attempt" = 2 ] && die "debootstrap of trixie failed twice; see the output above"
  done
  umount_under_root
  # Free some space: the package cache is not needed any more.
  rm -f "$ROOT"/var/cache/apt/archives/*.deb
  elapsed "root ready"
fi
[ -f "$ROOT/usr/share/postgresql/17/extension/vector.control" ] ||
  die "pgvector is missing from $ROOT (remove $ROOT to rebuild it)"

# What postgres needs from /dev inside the root, without mounting anything.
[ -c "$ROOT/dev/null" ] || { rm -f "$ROOT/dev/null"; mknod -m 666 "$ROOT/dev/null" c 1 3; }
[ -c "$ROOT/dev/zero" ] || { rm -f "$ROOT/dev/zero"; mknod -m 666 "$ROOT/dev/zero" c 1 5; }
[ -c "$ROOT/dev/urandom" ] || { rm -f "$ROOT/dev/urandom"; mknod -m 666 "$ROOT/dev/urandom" c 1 9; }
mkdir -p "$ROOT/dev/shm" "$ROOT/tmp"
chmod 1777 "$ROOT/dev/shm" "$ROOT/tmp"

# ---- 2. the data directory ------------------------------------------------------------

mkdir -p "$ROOT/var/pg"
as_pg true # checks the postgres user exists
chroot "$ROOT" chown postgres:postgres /var/pg
chmod 700 "$ROOT/var/pg"

running=0
if [ -f "$ROOT$DATA/PG_VERSION" ] && pg_status; then
  running=1
  if [ "$(running_port)" != "$PORT" ]; then
    log "server is running on port $(running_port), not $PORT: restarting it"
    as_pg "pg_ctl -D $DATA -m fast -w -t 60 stop" >&2 || die "could not stop the running server"
    running=0
  else
    log "server already running on port $PORT: reusing it"
  fi
fi

if [ ! -f "$ROOT$DATA/PG_VERSION" ]; then
  log "initdb $DATA"
  rm -rf --one-file-system -- "${ROOT:?}$DATA"
  as_pg "initdb -D $DATA -A trust -U postgres -E UTF8 --locale=C.UTF-8" >&2 || die "initdb failed"
fi

# ---- 3. start -------------------------------------------------------------------------

if [ "$running" = 0 ]; then
  log "starting PostgreSQL 17 on 127.0.0.1:$PORT"
  OPTS="-p $PORT -k /tmp -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
  if ! as_pg "pg_ctl -D $DATA -o '$OPTS' -l /var/pg/log -w -t 60 start" >&2; then
    log "last lines of $ROOT/var/pg/log:"
    tail -n 30 "$ROOT/var/pg/log" >&2 || true
    die "pg_ctl start failed (port $PORT in use by something else? see the log above)"
  fi
fi

# ---- 4. wait for connections, prove pgvector ------------------------------------------

if command -v psql >/dev/null 2>&1; then
  sql() { PGCONNECT_TIMEOUT=5 psql "$URL" -X -q -At -v ON_ERROR_STOP=1 -c "$1"; }
else
  sql() { as_pg "psql -h /tmp -p $PORT -U postgres -d postgres -X -q -At -v ON_ERROR_STOP=1 -f -" <<<"$1"; }
fi
ready() {
  if command -v psql >/dev/null 2>&1; then
    sql 'select 1' >/dev/null 2>&1
  else
    as_pg "pg_isready -q -h 127.0.0.1 -p $PORT"
  fi
}
for i in $(seq 1 60); do
  ready && break
  [ "$i" = 60 ] && { tail -n 30 "$ROOT/var/pg/log" >&2 || true; die "server does not accept connections on 127.0.0.1:$PORT after 30s"; }
  sleep 0.5
done

sql 'set client_min_messages = warning; create extension if not exists vector' >&2 || die "create extension vector failed"
version=$(sql "select extversion from pg_extension where extname = 'vector'") ||
  die "could not read the pgvector version"
log "$(sql 'show server_version' | head -n1), pgvector $version"
elapsed "ready"
echo "$URL"
