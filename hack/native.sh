#!/usr/bin/env bash
# native.sh: make test-native. The integration tests on this host's own
# RDMA devices (a ConnectX, or rxe/siw set up by hand) instead of the VM's
# rxe0 and siw0: it picks the devices, checks what the C side needs, builds
# the project's commands and the C test peers as hack/vm does for the
# guest, runs every package with PURERDMA_NATIVE=1, then a short rperf
# against perftest comparison, and ends with a summary and the path of the
# full log. docs/hardware.md says what to expect.
#
# Environment (the Makefile passes its variables of the same names):
#   DEV=mlx5_0        the devices to test, comma-separated; by default the
#                     first mlx5 device whose port 1 is up with an IPv4
#                     address, else every device that is
#   INSTALL=1         install missing packages (go run ./hack/vm apt install:
#                     sudo when not root, the lists refreshed once on a miss)
#   TESTFLAGS=...     passed to go test, e.g. TESTFLAGS='-run Pingpong'
#   BENCH=0           leave out the rperf/perftest comparison
#   BENCHFLAGS=...    benchcmp compare's flags (default: 3 rounds of 64 B, 4 KiB, 64 KiB)
#   RPMA_SRC=dir      a git clone of github.com/pmem/rpma: also build
#                     librpma's own C examples (hack/rpma-cexamples) and
#                     run them against the Go ports (TestCExamples)
#   GO=go             the go command
set -uo pipefail

GO=${GO:-go}
DEV=${DEV:-}
INSTALL=${INSTALL:-0}
TESTFLAGS=${TESTFLAGS:-}
BENCH=${BENCH:-1}
BENCHFLAGS=${BENCHFLAGS:--rounds 3 -sizes 64,4096,65536}
RPMA_SRC=${RPMA_SRC:-}

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
ibdir=/sys/class/infiniband

die() {
	printf 'make test-native: %s\n' "$*" >&2
	exit 1
}

# log writes a line to the terminal and, once it exists, the log file.
log=
say() {
	printf 'native: %s\n' "$*"
	if [ -n "$log" ]; then printf 'native: %s\n' "$*" >>"$log"; fi
}

[ "$(uname -s)" = Linux ] || die "RDMA needs Linux; this is $(uname -s)"

# --- The devices ---------------------------------------------------------

all=()
if [ -d "$ibdir" ]; then
	for p in "$ibdir"/*; do
		[ -e "$p" ] && all+=("$(basename "$p")")
	done
fi
if [ ${#all[@]} -eq 0 ]; then
	die "no RDMA device: $ibdir is empty or missing.
  For a ConnectX: load mlx5_core and mlx5_ib (modprobe mlx5_ib) and bring a port up.
  To try the run without hardware: add a soft-RoCE device, e.g.
    sudo rdma link add rxe0 type rxe netdev eth0
  (see docs/hardware.md)."
fi

# driverOf prints the device's driver as rdma-core names its provider:
# the PCI driver of a hardware device (mlx5_core is mlx5), else what the
# name says (the software devices have no parent device).
driverOf() {
	local d=$1 drv=''
	if [ -e "$ibdir/$d/device/driver" ]; then
		drv=$(basename "$(readlink -f "$ibdir/$d/device/driver")")
	fi
	case $drv in
	mlx5_core) echo mlx5 ;;
	mlx4_core) echo mlx4 ;;
	"")
		case $d in
		rxe*) echo rxe ;;
		siw*) echo siw ;;
		*) echo unknown ;;
		esac
		;;
	*) echo "$drv" ;;
	esac
}

# linkOf prints how port 1 carries RDMA: roce, ib or iwarp.
linkOf() {
	local d=$1
	case $(cat "$ibdir/$d/node_type" 2>/dev/null) in
	4:*) echo iwarp ;;
	*)
		case $(cat "$ibdir/$d/ports/1/link_layer" 2>/dev/null) in
		Ethernet) echo roce ;;
		InfiniBand) echo ib ;;
		*) echo unknown ;;
		esac
		;;
	esac
}

# netdevOf prints the network device under port 1: iproute2's rdma says
# it for RoCE and iWARP ports; rxe names it in its parent attribute; an
# InfiniBand port's IPoIB interfaces hang off the PCI function.
netdevOf() {
	local d=$1 nd='' p
	if command -v rdma >/dev/null 2>&1; then
		nd=$(rdma link show "$d/1" 2>/dev/null | sed -n 's/.* netdev \([^ ]*\).*/\1/p' | head -n 1)
	fi
	if [ -z "$nd" ] && [ -r "$ibdir/$d/parent" ]; then
		nd=$(cat "$ibdir/$d/parent")
	fi
	if [ -z "$nd" ] && [ -r "$ibdir/$d/ports/1/gid_attrs/ndevs/0" ]; then
		nd=$(cat "$ibdir/$d/ports/1/gid_attrs/ndevs/0" 2>/dev/null)
	fi
	if [ -z "$nd" ]; then
		for p in "$ibdir/$d/device/net"/*; do
			[ -e "$p" ] && nd=$(basename "$p") && break
		done
	fi
	echo "$nd"
}

# addrOf prints the first global IPv4 address of a network device.
addrOf() {
	ip -4 -o addr show dev "$1" scope global 2>/dev/null | awk '{ split($4, a, "/"); print a[1]; exit }'
}

# describe sets drv, link, state, nd and addr for device $1, and why to
# what keeps it from being tested ("" when nothing does).
describe() {
	local d=$1
	drv=$(driverOf "$d")
	link=$(linkOf "$d")
	state=$(sed 's/^[0-9]*: *//' "$ibdir/$d/ports/1/state" 2>/dev/null)
	nd=$(netdevOf "$d")
	addr=
	why=
	if [ "$state" != ACTIVE ]; then
		why="port 1 is ${state:-unknown}, not ACTIVE (bring its link up)"
	elif [ -z "$nd" ]; then
		why="no network device found under port 1"
	else
		addr=$(addrOf "$nd")
		[ -n "$addr" ] || why="its network device $nd has no IPv4 address (ip addr add <addr>/<len> dev $nd)"
	fi
}

command -v ip >/dev/null 2>&1 || die "the ip command (iproute2) is missing: go run ./hack/vm apt install iproute2"

devs=()
if [ -n "$DEV" ]; then
	for d in ${DEV//,/ }; do
		[ -e "$ibdir/$d" ] || die "DEV names $d, but $ibdir has only: ${all[*]}"
		describe "$d"
		[ -z "$why" ] || die "$d ($drv): $why"
		devs+=("$d")
	done
else
	usable=()
	for d in "${all[@]}"; do
		describe "$d"
		if [ -n "$why" ]; then
			say "not testing $d ($drv, $link): $why"
			continue
		fi
		usable+=("$d")
		if [ "$drv" = mlx5 ] && [ ${#devs[@]} -eq 0 ]; then
			devs=("$d")
		fi
	done
	if [ ${#devs[@]} -eq 0 ]; then
		devs=("${usable[@]}")
	elif [ ${#usable[@]} -gt 1 ]; then
		others=()
		for d in "${usable[@]}"; do
			[ "$d" = "${devs[0]}" ] || others+=("$d")
		done
		say "also usable, not tested: ${others[*]} (DEV=... picks them)"
	fi
	[ ${#devs[@]} -gt 0 ] || die "no RDMA device to test: none of ${all[*]} has port 1 ACTIVE with an IPv4 address (see above)"
fi

# --- The log ------------------------------------------------------------

out=$top/.cache/native
mkdir -p "$out" || die "cannot create $out"
log=$out/native-$(date +%Y%m%d-%H%M%S).log
: >"$log" || die "cannot write $log"
{
	echo "make test-native, $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "host: $(uname -n), Linux $(uname -r) $(uname -m)"
	[ -r /etc/os-release ] && sed -n 's/^PRETTY_NAME=//p' /etc/os-release | tr -d '"'
	echo "commit: $(git -C "$top" rev-parse HEAD 2>/dev/null || echo unknown)$(git -C "$top" diff --quiet 2>/dev/null || echo ' (with local changes)')"
	echo "go: $("$GO" version 2>&1)"
	echo "DEV=$DEV INSTALL=$INSTALL TESTFLAGS=$TESTFLAGS BENCH=$BENCH BENCHFLAGS=$BENCHFLAGS RPMA_SRC=$RPMA_SRC"
} >>"$log"

roce=
for d in "${devs[@]}"; do
	describe "$d"
	fw=$(cat "$ibdir/$d/fw_ver" 2>/dev/null)
	say "testing $d: driver $drv, $link, port 1 $state, netdev $nd, $addr${fw:+, firmware $fw}"
	if [ "$link" = roce ] && [ -z "$roce" ]; then
		roce=$d
		roce_addr=$addr
	fi
done

# --- What the tests need ------------------------------------------------

command -v "$GO" >/dev/null 2>&1 || die "no go command ($GO): install Go (go.mod names the version) or give GO=/path/to/go"
command -v dpkg-query >/dev/null 2>&1 || die "dpkg-query is missing: the checks below know Debian's and Ubuntu's packages only"

installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q ' installed$'
}

# The packages are hack/vm's list for the guest's C side (the C tools and
# the C test peers), so that the two runs use the same C programs.
debs=$("$GO" run ./hack/vm packages) || die "go run ./hack/vm packages failed"
missing=()
peers=1
for p in $debs; do
	installed "$p" && continue
	if [ "$p" = librpma-dev ] && [ -z "$("$GO" run ./hack/vm apt candidate librpma-dev 2>/dev/null)" ]; then
		# Ubuntu 22.04 has no librpma: its tests against C librpma skip.
		say "librpma-dev is not packaged for this release: the tests against C librpma (the C test peers) will skip"
		peers=0
		continue
	fi
	missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$INSTALL" != 1 ]; then
		die "missing packages: ${missing[*]}
  Install them with
    go run ./hack/vm apt install ${missing[*]}
  or let the run do it: make test-native INSTALL=1"
	fi
	say "installing ${missing[*]}"
	# The repository's one apt path (internal/vm/fetch): sudo when
	# not root, and apt-get update once when the install fails.
	"$GO" run ./hack/vm apt install "${missing[@]}" >>"$log" 2>&1 ||
		die "installing ${missing[*]} failed (see $log)"
fi
for t in ibv_devinfo ibv_rc_pingpong rping mckey ib_send_bw ib_write_lat rdma gcc; do
	command -v "$t" >/dev/null 2>&1 || die "$t is missing although its package is installed: check PATH ($PATH)"
done

# The device nodes: a uverbs node per device, read-write for this user
# (rdma-core's udev rules make them 0666), and the connection manager's.
cm=/dev/infiniband/rdma_cm
[ -e "$cm" ] || die "$cm is missing: load the connection manager (sudo modprobe rdma_ucm)"
{ [ -r "$cm" ] && [ -w "$cm" ]; } || die "$cm is not read-write for $(id -un): run as root, or install rdma-core's udev rules (package rdma-core)"
for d in "${devs[@]}"; do
	node=
	for c in /sys/class/infiniband_verbs/uverbs*; do
		[ "$(cat "$c/ibdev" 2>/dev/null)" = "$d" ] && node=/dev/infiniband/$(basename "$c")
	done
	{ [ -n "$node" ] && [ -e "$node" ]; } || die "$d has no uverbs device node: load ib_uverbs (sudo modprobe ib_uverbs)"
	{ [ -r "$node" ] && [ -w "$node" ]; } || die "$node ($d) is not read-write for $(id -un): run as root, or install rdma-core's udev rules (package rdma-core)"
done

# Locked memory: the kernel pins every registered region against
# RLIMIT_MEMLOCK unless the process may lock memory (root); the suite
# holds tens of MiB registered at times (a hundred rsocket connections,
# hundreds of rpma ones). The soft limit is raised to the hard one; 1 GiB
# leaves room.
if [ "$(id -u)" -ne 0 ]; then
	ulimit -l "$(ulimit -H -l)" 2>/dev/null
	lim=$(ulimit -l)
	if [ "$lim" != unlimited ] && [ "$lim" -lt 1048576 ]; then
		die "ulimit -l is $lim KiB (hard limit $(ulimit -H -l)): the tests register more. Run as root, or allow it (docs/hardware.md):
    echo '$(id -un) - memlock unlimited' | sudo tee /etc/security/limits.d/rdma.conf
  and log in again"
	fi
fi
if [ "$(id -u)" -eq 0 ]; then
	say "running as root: registered memory is not limited"
else
	say "locked memory limit: $(ulimit -l)"
fi

{
	for d in "${devs[@]}"; do
		echo "--- ibv_devinfo -v -d $d"
		ibv_devinfo -v -d "$d" 2>&1
	done
	echo "--- rdma link show"
	rdma link show 2>&1
} >>"$log"

# --- Build --------------------------------------------------------------

say "building the commands into .cache/native/bin"
mkdir -p "$out/bin" || die "cannot create $out/bin"
CGO_ENABLED=0 "$GO" build -o "$out/bin/" ./cmd/... ./hack/benchcmp >>"$log" 2>&1 ||
	die "go build failed (see $log)"
if [ "$peers" = 1 ]; then
	say "building the C test peers into .cache/native/peers (hack/vm peers)"
	rm -rf "$out/peers"
	"$GO" run ./hack/vm peers -out "$out/peers" >>"$log" 2>&1 || die "building the C test peers failed (see $log)"
fi
cexamples=
if [ -n "$RPMA_SRC" ]; then
	say "building librpma's C examples from $RPMA_SRC into .cache/native/cexamples (hack/rpma-cexamples)"
	rm -rf "$out/cexamples"
	"$GO" run ./hack/rpma-cexamples -src "$RPMA_SRC" -out "$out/cexamples" >>"$log" 2>&1 ||
		die "building librpma's C examples failed (see $log)"
	cexamples=$out/cexamples
fi

# --- The environment the tests read ------------------------------------

# testenv (internal/testenv/native.go) reads the rest from the kernel.
export PURERDMA_NATIVE=1
PURERDMA_DEV=$(
	IFS=,
	echo "${devs[*]}"
)
export PURERDMA_DEV
export PURERDMA_CTOOLS=1
export PURERDMA_BIN=$out/bin
unset PURERDMA_VM PURERDMA_TEST_PEERS PURERDMA_EXTRA
if [ "$peers" = 1 ]; then export PURERDMA_TEST_PEERS=$out/peers; fi
if [ -n "$cexamples" ]; then export PURERDMA_EXTRA=$cexamples; fi
# The names the VM's init gives its soft devices, for an rxe or siw
# device under test (cmd/rpma-examples' demo reads them).
for d in "${devs[@]}"; do
	describe "$d"
	case $drv in
	rxe | siw)
		v=PURERDMA_$(echo "$drv" | tr '[:lower:]' '[:upper:]')
		export "$v=$d" "${v}_NETDEV=$nd" "${v}_ADDR=$addr"
		;;
	esac
done
env | grep '^PURERDMA_' | sort >>"$log"

# --- The tests ------------------------------------------------------------

# Every package but test/soak, which runs for as long as it is told and
# only when named (make soak); -p 1 runs the packages one after another,
# as the VM does: they share the devices, and the leak check counts every
# object on them. TESTFLAGS come last and win.
mapfile -t pkgs < <("$GO" list ./... | grep -v '/test/soak$')
[ ${#pkgs[@]} -gt 0 ] || die "go list ./... found no packages"
say "running go test on ${#pkgs[@]} packages on ${devs[*]} (full output in the log)"
start=$(date +%s)
# The flags are words: split, never globbed (-run 'Test.*').
set -f
# shellcheck disable=SC2086 # TESTFLAGS is a list of flags
CGO_ENABLED=0 "$GO" test -count=1 -p 1 -v -timeout 30m $TESTFLAGS "${pkgs[@]}" 2>&1 |
	tee -a "$log" | grep --line-buffered -E '^(ok|FAIL|panic:|--- FAIL)'
test_rc=${PIPESTATUS[0]}
set +f
say "go test exit status $test_rc after $(($(date +%s) - start))s"

bench_result=SKIP
bench_note="BENCH=0"
if [ "$BENCH" != 0 ] && [ -z "$roce" ]; then
	bench_note="no RoCE device under test (benchcmp addresses the device by its IPv4 address's GID)"
elif [ "$BENCH" != 0 ]; then
	rpma_args=(-rpma=false)
	if [ "$peers" = 1 ]; then rpma_args=(-rpma-peer "$out/peers/rpmabench"); fi
	say "rperf against perftest on $roce ($roce_addr): benchcmp compare $BENCHFLAGS"
	echo "--- benchcmp compare" >>"$log"
	set -f
	# shellcheck disable=SC2086 # BENCHFLAGS is a list of flags
	"$out/bin/benchcmp" compare -d "$roce" -addr "$roce_addr" -ctools "$(dirname "$(command -v ib_write_lat)")" \
		-rperf "$out/bin/rperf" "${rpma_args[@]}" $BENCHFLAGS >"$out/bench.out" 2>&1
	bench_rc=$?
	set +f
	cat "$out/bench.out" >>"$log"
	sed -n '/^BENCH-BEGIN/,/^BENCH-END/p' "$out/bench.out" | sed '1d;$d'
	if [ "$bench_rc" -eq 0 ]; then bench_result=PASS; else bench_result=FAIL; fi
	bench_note="rperf and rperf rpma against perftest and C librpma on $roce, exit $bench_rc"
fi

# --- The summary ----------------------------------------------------------

# go test -v prints "--- PASS/FAIL/SKIP" for every test and subtest, then
# the package's "ok" or "FAIL" line: count the former until the latter.
summary=$(awk '
	/^ *--- PASS: / { pass++ }
	/^ *--- FAIL: / { fail++ }
	/^ *--- SKIP: / { skip++ }
	($1 == "ok" || $1 == "FAIL") && NF >= 2 && $2 ~ /\// {
		res = ($1 == "ok") ? "ok" : "FAIL"
		if ($0 ~ /\[build failed\]|\[setup failed\]/) res = "FAIL (build)"
		if (pass + fail + skip > 0 || res != "ok") {
			pkg = $2; sub(/^github.com\/purerdma\/purerdma\/?/, "./", pkg)
			printf "%-34s %6d %6d %6d  %s\n", pkg, pass, fail, skip, res
			tp += pass; tf += fail; ts += skip
			if (res != "ok") bad++
		}
		pass = fail = skip = 0
	}
	END { printf "%-34s %6d %6d %6d  %s\n", "total", tp, tf, ts, (bad ? bad " packages failed" : "all packages ok") }
' "$log")

{
	echo
	echo "=== make test-native summary (${devs[*]}; Linux $(uname -r))"
	printf '%-34s %6s %6s %6s  %s\n' package PASS FAIL SKIP result
	echo "$summary"
	printf '%-34s %s (%s)\n' "rperf vs perftest" "$bench_result" "$bench_note"
	echo "full log: $log"
} | tee -a "$log"

if [ "$test_rc" -ne 0 ] || [ "$bench_result" = FAIL ]; then
	exit 1
fi
