#!/bin/sh
# benchhost.sh: the host cost table, Go against rdma-core's librxe, libsiw
# and libmlx5 over the same fake memory (docs/benchmarks-host.md, "Against
# C"). Builds the C harnesses (hack/conformance.sh, which installs
# libibverbs-dev, gcc and pkg-config through `go run ./hack/vm apt
# install` when they are missing), runs the
# TestHostCost* tests of uverbs and cq (rounds alternate C and Go;
# medians), and writes the table between the markers in
# docs/benchmarks-host.md. GO names the go command.
set -eu
go=${GO:-go}
cd "$(dirname "$0")/.."
h=$(GO="$go" sh hack/conformance.sh)
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
PURERDMA_BENCH_HOST=1 PURERDMA_BENCH_HOST_OUT="$rows" PURERDMA_CONFORMANCE_C="$PWD/$h" CGO_ENABLED=0 \
	"$go" test -p 1 -count=1 -run '^TestHostCost' ./uverbs ./cq

doc=docs/benchmarks-host.md
table=$(mktemp)
trap 'rm -f "$rows" "$table"' EXIT
{
	echo "<!-- host-cost:begin (make bench-host writes this table) -->"
	echo "$(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs, $("$go" version | cut -d' ' -f3), rdma-core $(dpkg -s libibverbs-dev | sed -n 's/^Version: //p'); medians of 5 rounds."
	echo
	echo "| Row | One operation | Go ns/op | C ns/op | Go/C | Go allocs/op |"
	echo "|---|---|---:|---:|---:|---:|"
	awk -F '\t' '{ printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6 }' "$rows"
	echo "<!-- host-cost:end -->"
} >"$table"
if grep -q '^<!-- host-cost:begin' "$doc"; then
	awk -v t="$table" '
		/^<!-- host-cost:begin/ { while ((getline l < t) > 0) print l; skip = 1; next }
		/^<!-- host-cost:end/ { skip = 0; next }
		!skip { print }' "$doc" >"$doc.tmp"
	mv "$doc.tmp" "$doc"
else
	{ echo; echo "## Against C"; echo; cat "$table"; } >>"$doc"
fi
cat "$table"
