#!/bin/sh
# conformance.sh: build the C harnesses of the conformance tests from
# Debian's static libibverbs-dev (rdma-core 44), which it installs, with
# gcc and pkg-config, when dpkg says they are missing, through the
# repository's one apt path (`go run ./hack/vm apt install`: it refreshes
# stale package lists once when the install fails; GO names the go
# command):
#   - .cache/conformance/harness: test/conformance/harness.c, rdma-core's
#     own rxe and siw providers over a fake kernel;
#   - .cache/conformance/harness-mlx5: test/conformance/mlx5.c, rdma-core's
#     mlx5 provider over a fake kernel and device.
# Both link test/conformance/fake.c, the fake kernel's plumbing they share.
# Each binary is rebuilt only when its sources (its own, fake.c and
# fake.h) or the package version change (the sha256 of them all is kept
# beside it). Prints the path of the first; the second is beside it.
set -eu
GO=${GO:-go}
cd "$(dirname "$0")/.."
out=.cache/conformance
mkdir -p "$out"

# vm apt install installs only what dpkg does not list as installed, and
# prints nothing on stdout, which is this script's answer.
$GO run ./hack/vm apt install libibverbs-dev gcc libc6-dev pkg-config >&2
version=$(dpkg -s libibverbs-dev | grep '^Version')
shared="test/conformance/fake.c test/conformance/fake.h"

# build NAME SOURCE PROVIDER-ARCHIVES...: link SOURCE and fake.c into
# $out/NAME.
build() {
	name=$1
	src=$2
	shift 2
	# shellcheck disable=SC2086
	sum=$( (sha256sum "$src" $shared; echo "$version") | sha256sum | cut -d' ' -f1)
	if [ -x "$out/$name" ] && [ "$(cat "$out/$name.sum" 2>/dev/null)" = "$sum" ]; then
		return 0
	fi
	# The providers register from constructors, so their archives are
	# linked whole. --wrap puts the fake kernel under libibverbs: open,
	# ioctl, write, mmap and munmap of the command fd, and netlink device
	# discovery (see the harnesses' comments).
	wrap=
	for s in open ioctl write mmap munmap rdmacore44_0_find_sysfs_devs_nl; do
		wrap="$wrap -Wl,--wrap=$s"
	done
	libs=
	for l in "$@"; do
		libs="$libs -l$l"
	done
	# shellcheck disable=SC2046,SC2086
	${CC:-gcc} -O2 -Wall -Werror -static -o "$out/$name.tmp" "$src" test/conformance/fake.c $wrap \
		-Wl,--whole-archive $libs -Wl,--no-whole-archive \
		$(pkg-config --static --libs libibverbs) 2>"$out/$name.log" || {
		cat "$out/$name.log" >&2
		exit 1
	}
	mv "$out/$name.tmp" "$out/$name"
	echo "$sum" >"$out/$name.sum"
}

build harness test/conformance/harness.c rxe-rdmav34 siw-rdmav34
build harness-mlx5 test/conformance/mlx5.c mlx5
echo "$out/harness"
