#!/bin/sh
# conformance.sh: build the C harness of the conformance tests
# (test/conformance/harness.c, rdma-core's own rxe and siw providers over a
# fake kernel) into .cache/conformance/harness, from Debian's static
# libibverbs-dev (rdma-core 44), which it installs with apt-get if dpkg says
# it is missing. The binary is rebuilt only when the source changes (its
# sha256 is kept beside it). Prints the binary's path.
set -eu
cd "$(dirname "$0")/.."
out=.cache/conformance
src=test/conformance/harness.c
mkdir -p "$out"

if ! dpkg -s libibverbs-dev >/dev/null 2>&1; then
	echo "conformance: installing libibverbs-dev" >&2
	apt-get install -y libibverbs-dev >&2
fi

sum=$( (sha256sum "$src"; dpkg -s libibverbs-dev | grep '^Version') | sha256sum | cut -d' ' -f1)
if [ -x "$out/harness" ] && [ "$(cat "$out/harness.sum" 2>/dev/null)" = "$sum" ]; then
	echo "$out/harness"
	exit 0
fi

# The providers register from constructors, so their archives are linked
# whole. --wrap puts the fake kernel under libibverbs: open, ioctl, write,
# mmap and munmap of the command fd, and netlink device discovery (see the
# harness's comment).
wrap=
for s in open ioctl write mmap munmap rdmacore44_0_find_sysfs_devs_nl; do
	wrap="$wrap -Wl,--wrap=$s"
done
# shellcheck disable=SC2046,SC2086
${CC:-gcc} -O2 -Wall -Werror -static -o "$out/harness.tmp" "$src" $wrap \
	-Wl,--whole-archive -lrxe-rdmav34 -lsiw-rdmav34 -Wl,--no-whole-archive \
	$(pkg-config --static --libs libibverbs) 2>"$out/build.log" || {
	cat "$out/build.log" >&2
	exit 1
}
mv "$out/harness.tmp" "$out/harness"
echo "$sum" >"$out/harness.sum"
echo "$out/harness"
