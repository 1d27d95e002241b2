#!/bin/sh
# fuzz.sh TIME: run every fuzz target of the module for TIME each and
# print the executions each one ran. `go test -fuzz` takes one package and
# one target at a time, so the targets are found here, from the FuzzXxx
# functions in the test files, and never listed by hand.
#
# GO names the go command; FUZZFLAGS are more flags for go test, such as
# -parallel 1 on a shared machine.
set -eu
time=${1:-30s}
go=${GO:-go}
cd "$(dirname "$0")/.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT

grep -r -o --include='*_test.go' --exclude-dir=.cache --exclude-dir=.git '^func Fuzz[A-Za-z0-9_]*' . |
	sed 's|^\./||; s|/[^/]*:func | |' | sort >"$out.list"
trap 'rm -f "$out" "$out.list"' EXIT

status=0
printf '%-28s %-30s %s\n' package target executions
while read -r dir target; do
	if CGO_ENABLED=0 "$go" test -run '^$' -fuzz "^$target\$" -fuzztime "$time" ${FUZZFLAGS:-} "./$dir" >"$out" 2>&1; then
		execs=$(sed -n 's/^fuzz: elapsed: .*, execs: \([0-9]*\) .*/\1/p' "$out" | tail -n 1)
		printf '%-28s %-30s %s\n' "$dir" "$target" "${execs:-?}"
	else
		printf '%-28s %-30s FAILED\n' "$dir" "$target"
		cat "$out"
		status=1
	fi
done <"$out.list"
exit $status
