package testenv

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// The leak check's view of the process's memory mappings, from
// /proc/self/smaps. Most mappings belong to the Go runtime, whose heap
// grows and shrinks on its own, so only the library's are summed:
//
//   - a file under /dev/infiniband: the queues and doorbells a provider
//     maps from the uverbs fd;
//   - an anonymous mapping with the "dc" flag (MADV_DONTFORK): mr.Alloc's
//     memory. The runtime never sets the flag, so the kernel does not merge
//     these mappings with its own.
//
// Adjacent mappings of one kind may merge into one, so their number may
// change while nothing leaked; the bytes may not.

// allocKind names mr.Alloc's mappings in a mapSums.
const allocKind = "mr.Alloc memory"

// mapSum is the number and total size of a kind of mapping.
type mapSum struct {
	N     int
	Bytes uint64
}

// mapSums holds the sums by kind: a path under /dev/infiniband, or
// allocKind.
type mapSums map[string]mapSum

// readMaps reads /proc/self/smaps.
func readMaps() (mapSums, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseSmaps(f)
}

// parseSmaps sums the mappings the leak check watches in an smaps file:
// each mapping is a header line ("start-end perms offset dev inode
// [path]") followed by "Key: value" lines, VmFlags among them.
func parseSmaps(r io.Reader) (mapSums, error) {
	sums := mapSums{}
	var (
		kind string // of the current mapping; "" when not watched
		anon bool   // the current mapping has no path
		size uint64
	)
	add := func(k string) {
		s := sums[k]
		s.N++
		s.Bytes += size
		sums[k] = s
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) == 0:
		case strings.HasSuffix(fields[0], ":"):
			if fields[0] == "VmFlags:" && anon && slices.Contains(fields[1:], "dc") {
				add(allocKind)
			}
		default:
			start, end, ok := strings.Cut(fields[0], "-")
			a, err1 := strconv.ParseUint(start, 16, 64)
			b, err2 := strconv.ParseUint(end, 16, 64)
			if !ok || err1 != nil || err2 != nil || b < a || len(fields) < 5 {
				return nil, fmt.Errorf("smaps: bad mapping line %q", sc.Text())
			}
			size = b - a
			path := strings.Join(fields[5:], " ")
			kind, anon = "", path == ""
			if strings.HasPrefix(path, "/dev/infiniband/") {
				kind = path
				add(kind)
			}
		}
	}
	return sums, sc.Err()
}

// diff describes how now differs from m, one line a kind.
func (m mapSums) diff(now mapSums, b *strings.Builder) {
	for _, k := range sortedKeys(m, now) {
		was, is := m[k], now[k]
		if was.Bytes != is.Bytes {
			fmt.Fprintf(b, "\tmappings of %s: %d bytes in %d -> %d bytes in %d (%+d bytes)\n",
				k, was.Bytes, was.N, is.Bytes, is.N, int64(is.Bytes-was.Bytes))
		}
	}
}
