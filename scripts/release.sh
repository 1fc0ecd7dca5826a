#!/usr/bin/env bash
# release.sh builds Quarry's static release binaries into dist/: one per
# OS and architecture in PLATFORMS, with the version stamped into
# main.version, then dist/SHA256SUMS over them. CGO is off: the SQLite
# driver (modernc.org/sqlite) is pure Go, so every binary is static and
# cross-compiles without a C toolchain. Binaries are named
# quarry-VERSION-OS-ARCH (plus .exe on Windows).
set -euo pipefail

GO=${GO:-go}
VERSION=${VERSION:-$(git describe --tags --always --dirty)}
PLATFORMS=${PLATFORMS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"}
DIST=${DIST:-dist}

rm -rf "$DIST"
mkdir -p "$DIST"
for platform in $PLATFORMS; do
	os=${platform%/*}
	arch=${platform#*/}
	out="$DIST/quarry-$VERSION-$os-$arch"
	if [ "$os" = windows ]; then out="$out.exe"; fi
	echo "building $out"
	# -trimpath keeps the builder's paths out of the binary, so a release
	# is the same wherever it was built; -buildvcs=auto records the
	# revision (quarry version) even where GOFLAGS turns it off.
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch "$GO" build -buildvcs=auto -trimpath \
		-ldflags "-s -w -X main.version=$VERSION" -o "$out" ./cmd/web
done
(cd "$DIST" && sha256sum quarry-* >SHA256SUMS)
echo "wrote $DIST/SHA256SUMS"
