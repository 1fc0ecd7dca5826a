#!/usr/bin/env bash
# fuzz.sh finds every Fuzz target in the module with `go test -list` and runs
# each for FUZZTIME (default 10s). Go can fuzz only one target per run, so
# targets run one after another. New Fuzz functions are picked up without
# editing this script or the Makefile.
set -euo pipefail

FUZZTIME=${FUZZTIME:-10s}
PKGS=${PKGS:-./...}

# `go test -list` prints the matching names of a package, then its "ok" line.
targets=()
names=()
while IFS= read -r line; do
	case "$line" in
	Fuzz*) names+=("$line") ;;
	ok*)
		pkg=$(awk '{print $2}' <<<"$line")
		for n in "${names[@]}"; do targets+=("$pkg $n"); done
		names=()
		;;
	esac
done < <(go test -list '^Fuzz' $PKGS)

if [ ${#targets[@]} -eq 0 ]; then
	echo "no fuzz targets yet"
	exit 0
fi

for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	echo "== fuzz $pkg $name ($FUZZTIME)"
	go test -run "^$" -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime 5s "$pkg"
done
