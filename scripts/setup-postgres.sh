#!/usr/bin/env bash
# setup-postgres.sh installs what the PostgreSQL tests (internal/pgtest and
# the tests that use it) need: Debian's postgresql server package, whose
# initdb and postgres land in /usr/lib/postgresql/<major>/bin. The tests
# start their own throwaway servers from those binaries, each in a temporary
# directory; they never use the cluster or service the package may set up.
# It is idempotent and prints nothing when PostgreSQL is already installed,
# so `make test` can call it every time.
set -euo pipefail

log() { printf 'setup-postgres: %s\n' "$*" >&2; }

as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo -n "$@"
	else
		log "need root to run: $* (no sudo available)"
		return 1
	fi
}

installed() {
	local d
	for d in /usr/lib/postgresql/*/bin; do
		[ -x "$d/initdb" ] && [ -x "$d/postgres" ] && return 0
	done
	return 1
}

# QUARRY_PG_BIN points the tests at another installation; then there is
# nothing to install, only to check.
if [ -n "${QUARRY_PG_BIN:-}" ]; then
	[ -x "$QUARRY_PG_BIN/initdb" ] && [ -x "$QUARRY_PG_BIN/postgres" ] && exit 0
	log "QUARRY_PG_BIN=$QUARRY_PG_BIN has no executable initdb and postgres"
	exit 1
fi

installed && exit 0

log "installing postgresql with apt-get (no /usr/lib/postgresql/*/bin/initdb)"
export DEBIAN_FRONTEND=noninteractive
as_root apt-get update -qq
as_root apt-get install -y -qq --no-install-recommends postgresql </dev/null
installed || { log "still no /usr/lib/postgresql/*/bin/initdb after apt-get install"; exit 1; }
log "ready: $(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
