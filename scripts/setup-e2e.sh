#!/usr/bin/env bash
# setup-e2e.sh installs what the browser tests in e2e/ need, and nothing else:
#   - Chromium from Debian (/usr/bin/chromium), because Playwright's own
#     browser downloads come from a CDN this network cannot reach;
#   - the Playwright driver that playwright-go v0.5200.1 pins (Playwright
#     1.52.0), taken from the npm tarball of playwright-core and laid out the
#     way playwright-go expects: $DRIVER_DIR/package/cli.js and $DRIVER_DIR/node.
# It is idempotent and does no network work when everything is in place, so
# `make test` can call it every time.
set -euo pipefail

PLAYWRIGHT_VERSION=1.52.0
CHROMIUM=${QUARRY_CHROMIUM:-/usr/bin/chromium}
DRIVER_DIR=${PLAYWRIGHT_DRIVER_PATH:-${XDG_CACHE_HOME:-$HOME/.cache}/ms-playwright-go/$PLAYWRIGHT_VERSION}

log() { printf 'setup-e2e: %s\n' "$*" >&2; }

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

# 1. Chromium.
if [ ! -x "$CHROMIUM" ]; then
	log "installing chromium with apt-get (missing $CHROMIUM)"
	export DEBIAN_FRONTEND=noninteractive
	as_root apt-get update -qq
	as_root apt-get install -y -qq --no-install-recommends chromium </dev/null
	[ -x "$CHROMIUM" ] || { log "chromium still missing at $CHROMIUM after apt-get install"; exit 1; }
fi

# 2. Node, which runs the Playwright driver.
NODE=$(command -v node || true)
if [ -z "$NODE" ] || ! command -v npm >/dev/null 2>&1; then
	log "installing nodejs and npm with apt-get"
	export DEBIAN_FRONTEND=noninteractive
	as_root apt-get update -qq
	as_root apt-get install -y -qq --no-install-recommends nodejs npm </dev/null
	NODE=$(command -v node)
fi

# 3. The Playwright driver (playwright-core from npm), unpacked into a temporary
#    directory first and moved into place, so an interrupted run never leaves
#    a half-written driver that playwright-go would then try to use.
mkdir -p "$DRIVER_DIR"
if [ ! -f "$DRIVER_DIR/package/cli.js" ]; then
	log "installing playwright-core@$PLAYWRIGHT_VERSION into $DRIVER_DIR"
	tmp=$(mktemp -d "$DRIVER_DIR/.tmp.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && npm pack --silent "playwright-core@$PLAYWRIGHT_VERSION" >/dev/null </dev/null)
	tar -xzf "$tmp/playwright-core-$PLAYWRIGHT_VERSION.tgz" -C "$tmp"
	rm -rf "$DRIVER_DIR/package"
	mv "$tmp/package" "$DRIVER_DIR/package"
fi
ln -sfn "$NODE" "$DRIVER_DIR/node"

# 4. Prove the driver runs and has the version playwright-go pins; playwright-go
#    refuses (rather than downloads) a driver with another version.
got=$("$DRIVER_DIR/node" "$DRIVER_DIR/package/cli.js" --version </dev/null)
case "$got" in
*"$PLAYWRIGHT_VERSION"*) ;;
*) log "driver in $DRIVER_DIR reports '$got', want $PLAYWRIGHT_VERSION"; exit 1 ;;
esac
log "ready: chromium=$CHROMIUM ($("$CHROMIUM" --version 2>/dev/null || echo unknown)), driver=$DRIVER_DIR ($got)"
