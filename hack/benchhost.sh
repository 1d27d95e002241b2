#!/bin/sh
# benchhost.sh: the host cost table, Go against rdma-core's librxe, libsiw
# and libmlx5 over the same fake memory (docs/benchmarks-host.md, "Against
# C"). Builds the C harnesses (hack/conformance.sh, which installs
# libibverbs-dev, gcc and pkg-config through `go run ./hack/vm apt
# install` when they are missing), installs valgrind the same way, runs
# the TestHostCost* tests of uverbs and cq (time: rounds alternate C and
# Go, medians; instructions: each side's loop under callgrind), and
# writes the table between the markers in docs/benchmarks-host.md. GO
# names the go command.
set -eu
go=${GO:-go}
cd "$(dirname "$0")/.."
h=$(GO="$go" sh hack/conformance.sh)
"$go" run ./hack/vm apt install valgrind >&2
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
# -s=false: go test strips the binaries it runs, and callgrind finds the
# Go loops it counts by their symbols.
PURERDMA_BENCH_HOST=1 PURERDMA_BENCH_HOST_OUT="$rows" PURERDMA_CONFORMANCE_C="$PWD/$h" CGO_ENABLED=0 \
	"$go" test -p 1 -count=1 -timeout 30m -ldflags=-s=false -run '^TestHostCost' ./uverbs ./cq

doc=docs/benchmarks-host.md
table=$(mktemp)
trap 'rm -f "$rows" "$table"' EXIT
{
	echo "<!-- host-cost:begin (make bench-host writes this table) -->"
	echo "$(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs, $("$go" version | cut -d' ' -f3), rdma-core $(dpkg -s libibverbs-dev | sed -n 's/^Version: //p'), gcc $(${CC:-gcc} -dumpfullversion); time: medians of 5 rounds; instructions: $(valgrind --version) callgrind."
	echo
	echo "| Row | One operation | Go ns/op | C ns/op | Go/C ns | Go instr/op | C instr/op | Go/C instr | Go allocs/op |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
	awk -F '\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9 }' "$rows"
	echo
	echo "Where the instructions per operation run: the row's loop (hostLoop*, hostloop_*; libibverbs' dispatch is inline in C's), the layer between it and the provider (Go: uverbs, cq, their locks, the runtime; C: the pthread spin lock), and the provider (Go: internal/provider; C: the provider library and the libc it calls). NOPs: how many of each side's instructions per operation are NOPs (0x90, 0x0f 0x1f /0, with 0x66/0x2e prefixes), counted by address: Go's jump padding (the JCC erratum) and inline marks; gcc's alignment."
	echo
	echo "| Row | Go loop | Go layer | Go provider | C loop | C layer | C provider | Go NOPs | C NOPs |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
	awk -F '\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $10, $11, $12, $13, $14, $15, $16, $17 }' "$rows"
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
