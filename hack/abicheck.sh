#!/bin/sh
# abicheck.sh SERIES... checks internal/abi's generated tables against the
# RDMA headers of each kernel series (hack/abigen -check). The headers come
# from Debian's linux-source-SERIES, installed when absent (as hack/vm does
# to build siw) through the repository's one apt path, `go run ./hack/vm
# apt install`, which refreshes the package lists once when the install
# fails: lists a few months old may not know a newer series yet, or name
# a version the mirror has dropped. Only the files the probe reads are extracted,
# once per package version, into .cache/abi/SERIES/ (ignored by git).
# ABIGEN_GENERATE=1 writes the tables from the first series instead.
# With a cross gcc for arm64 and its kernel headers (gcc-aarch64-linux-gnu,
# linux-libc-dev-arm64-cross), each series is also checked for arm64.
set -eu
GO=${GO:-go}
cd "$(dirname "$0")/.."
mkdir -p .cache/abi
bin=.cache/abi/abigen
$GO build -o "$bin" ./hack/abigen

headers() {
	series=$1
	pkg=linux-source-$series
	tarball=/usr/src/$pkg.tar.xz
	if ! [ -f "$tarball" ]; then
		echo "abicheck: installing $pkg" >&2
		$GO run ./hack/vm apt install "$pkg" xz-utils >&2
	fi
	version=$(dpkg-query -W -f '${Version}' "$pkg" 2>/dev/null || echo unknown)
	dir=.cache/abi/$series
	if [ -f "$dir/VERSION" ] && [ "$(cat "$dir/VERSION")" = "$version" ]; then
		return
	fi
	echo "abicheck: extracting the RDMA headers of $pkg $version" >&2
	rm -rf "$dir" "$dir.tmp"
	mkdir -p "$dir.tmp"
	# shellcheck disable=SC2046 # one pattern per line, none with spaces
	tar -xJf "$tarball" -C "$dir.tmp" --strip-components=1 --wildcards \
		$("$bin" -files | sed 's|^|*/|')
	echo "$version" >"$dir.tmp/VERSION"
	mv "$dir.tmp" "$dir"
}

for series in "$@"; do
	headers "$series"
	if [ "${ABIGEN_GENERATE:-}" = 1 ]; then
		"$bin" -headers ".cache/abi/$series/include/uapi"
		exit
	fi
	"$bin" -headers ".cache/abi/$series/include/uapi" -check
	if echo '#include <linux/types.h>' | aarch64-linux-gnu-gcc -E - >/dev/null 2>&1; then
		"$bin" -headers ".cache/abi/$series/include/uapi" -check -arch arm64
	fi
done
