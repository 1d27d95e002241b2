#!/bin/sh
# fuzz.sh TIME: run every fuzz target of the module for TIME each and
# print the executions each one ran. `go test -fuzz` takes one package and
# one target at a time, so the targets are found here, from the FuzzXxx
# functions in the test files, and never listed by hand.
#
# GO names the go command; FUZZFLAGS are more flags for go test, such as
# -parallel=1 on a shared machine.
set -eu
time=${1:-30s}
go=${GO:-go}
cd "$(dirname "$0")/.."
out=$(mktemp)
list=$(mktemp)
trap 'rm -f "$out" "$list"' EXIT

grep -r -o --include='*_test.go' --exclude-dir=.cache --exclude-dir=.git '^func Fuzz[A-Za-z0-9_]*' . |
	sed 's|^\./||; s|/[^/]*:func | |' | sort >"$list"

status=0
printf '%-28s %-30s %s\n' package target executions
while read -r dir target; do
	result=
	if ! CGO_ENABLED=0 "$go" test -run '^$' -fuzz "^$target\$" -fuzztime "$time" ${FUZZFLAGS:-} "./$dir" >"$out" 2>&1; then
		# Go before 1.27 may fail a target with a bare "context deadline
		# exceeded" when -fuzztime ends under load (go.dev/issue/75804).
		# A finding always writes its input or reports a panic or failure
		# of its own; without one, the run ended cleanly.
		if grep -q '^    context deadline exceeded$' "$out" &&
			! grep -q -e 'Failing input written' -e '^panic:' -e '_test\.go:[0-9]*:' "$out"; then
			result=" (stopped by go.dev/issue/75804)"
		else
			printf '%-28s %-30s FAILED\n' "$dir" "$target"
			cat "$out"
			status=1
			continue
		fi
	fi
	execs=$(sed -n 's/^fuzz: elapsed: .*, execs: \([0-9]*\) .*/\1/p' "$out" | tail -n 1)
	printf '%-28s %-30s %s%s\n' "$dir" "$target" "${execs:-?}" "$result"
done <"$list"
exit $status
