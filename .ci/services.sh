#!/usr/bin/env bash
# Start a throwaway PostgreSQL server (and install redis-server, which the Celery integration
# tests start themselves, so they can kill it) on loopback for the test suite (no Docker here).
# Installs them from Debian's packages when missing. Prints the env vars to export.
# Usage: eval "$(bash .ci/services.sh)"
set -euo pipefail
PG_PORT="${CTXAUDIT_CI_PG_PORT:-55432}"
ROOT="${CTXAUDIT_CI_DIR:-/tmp/ctxaudit-ci}"

need=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
if [ "${#need[@]}" -gt 0 ]; then
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 "${need[@]}" >&2
fi
PGBIN="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"

mkdir -p "$ROOT"
# PostgreSQL refuses to run as root: the cluster belongs to the postgres user.
if ! id postgres >/dev/null 2>&1; then useradd --system --home "$ROOT" postgres; fi
if [ ! -f "$ROOT/pg/PG_VERSION" ]; then
  install -d -o postgres "$ROOT/pg" "$ROOT/pgsock"
  su postgres -s /bin/sh -c "$PGBIN/initdb -D $ROOT/pg -A trust -U postgres -E UTF8 >/dev/null"
fi
chown -R postgres "$ROOT/pg" "$ROOT/pgsock"
if ! su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D $ROOT/pg status" >/dev/null 2>&1; then
  su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D $ROOT/pg -w -l $ROOT/pgsock/pg.log \
    -o '-p $PG_PORT -k $ROOT/pgsock -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off' start" >&2
fi
psql_() { "$PGBIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -v ON_ERROR_STOP=1 -qtAc "$1"; }
psql_ "SELECT 1 FROM pg_roles WHERE rolname='ctxaudit'" | grep -q 1 || psql_ "CREATE ROLE ctxaudit LOGIN CREATEDB PASSWORD 'ctxaudit'"
psql_ "SELECT 1 FROM pg_database WHERE datname='ctxaudit'" | grep -q 1 || psql_ "CREATE DATABASE ctxaudit OWNER ctxaudit"


echo "export DATABASE_URL=postgres://ctxaudit:ctxaudit@127.0.0.1:$PG_PORT/ctxaudit"
