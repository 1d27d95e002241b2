package testenv

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/mr"
)

// smapsSample is an smaps file in the kernel's format, cut down to the
// lines parseSmaps reads.
const smapsSample = `00400000-0060c000 r-xp 00000000 00:13 12                                 /tmp/x.test
Size:               2096 kB
VmFlags: rd ex mr mw me
c000000000-c004000000 rw-p 00000000 00:00 0 
Size:              65536 kB
VmFlags: rd wr mr mw me ac
7f0000000000-7f0000003000 rw-p 00000000 00:00 0 
Size:                 12 kB
VmFlags: rd wr mr mw me dc ac
7f0000010000-7f0000011000 rw-p 00000000 00:00 0 
Size:                  4 kB
VmFlags: rd wr mr mw me dc ac
7f0000020000-7f0000030000 rw-s 00000000 00:05 301                        /dev/infiniband/uverbs0
Size:                 64 kB
VmFlags: rd wr sh mr mw me ms dc
7f0000040000-7f0000041000 rw-s 00001000 00:05 301                        /dev/infiniband/uverbs0
Size:                  4 kB
VmFlags: rd wr sh mr mw me ms dc
7f0000050000-7f0000051000 rw-s 00000000 00:05 302                        /dev/infiniband/uverbs1
VmFlags: rd wr sh mr mw me ms dc
7ffd00000000-7ffd00002000 r--p 00000000 00:00 0                          [vvar]
VmFlags: rd mr pf io de dd dc sd
`

func TestParseSmaps(t *testing.T) {
	got, err := parseSmaps(strings.NewReader(smapsSample))
	if err != nil {
		t.Fatal(err)
	}
	want := mapSums{
		allocKind:                 {N: 2, Bytes: 0x4000},
		"/dev/infiniband/uverbs0": {N: 2, Bytes: 0x11000},
		"/dev/infiniband/uverbs1": {N: 1, Bytes: 0x1000},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sums (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"zzzz-7f00 rw-p 0 00:00 0\n", "7f01-7f00 rw-p 0 00:00 0\n", "7f00-7f01 rw-p\n"} {
		if _, err := parseSmaps(strings.NewReader(bad)); err == nil {
			t.Errorf("parseSmaps(%q) succeeded", bad)
		}
	}
}

func TestMapSumsDiff(t *testing.T) {
	base := mapSums{allocKind: {N: 2, Bytes: 8192}, "/dev/infiniband/uverbs0": {N: 3, Bytes: 12288}}
	for _, tt := range []struct {
		name string
		now  mapSums
		want string
	}{
		{"same", mapSums{allocKind: {N: 2, Bytes: 8192}, "/dev/infiniband/uverbs0": {N: 3, Bytes: 12288}}, ""},
		{"merged, same bytes", mapSums{allocKind: {N: 1, Bytes: 8192}, "/dev/infiniband/uverbs0": {N: 3, Bytes: 12288}}, ""},
		{"alloc leaked", mapSums{allocKind: {N: 3, Bytes: 12288}, "/dev/infiniband/uverbs0": {N: 3, Bytes: 12288}},
			"\tmappings of mr.Alloc memory: 8192 bytes in 2 -> 12288 bytes in 3 (+4096 bytes)\n"},
		{"queue unmapped, new device", mapSums{allocKind: {N: 2, Bytes: 8192}, "/dev/infiniband/uverbs0": {N: 2, Bytes: 8192},
			"/dev/infiniband/uverbs1": {N: 1, Bytes: 4096}},
			"\tmappings of /dev/infiniband/uverbs0: 12288 bytes in 3 -> 8192 bytes in 2 (-4096 bytes)\n" +
				"\tmappings of /dev/infiniband/uverbs1: 0 bytes in 0 -> 4096 bytes in 1 (+4096 bytes)\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			base.diff(tt.now, &b)
			if b.String() != tt.want {
				t.Errorf("diff:\n%s\nwant:\n%s", b.String(), tt.want)
			}
		})
	}
}

// TestReadMapsAlloc checks on this process that mr.Alloc's memory shows up
// on its own, and that Go heap growth does not.
func TestReadMapsAlloc(t *testing.T) {
	before, err := readMaps()
	if err != nil {
		t.Skip(err) // no /proc
	}
	b, err := mr.Alloc(3 * 4096)
	if err != nil {
		t.Fatal(err)
	}
	heap := make([]byte, 64<<20) // a new heap arena
	heap[len(heap)-1] = 1
	during, err := readMaps()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := during[allocKind].Bytes-before[allocKind].Bytes, uint64(3*4096); got != want {
		t.Errorf("mr.Alloc(3 pages) grew the sum by %d bytes, want %d", got, want)
	}
	if err := mr.Free(b); err != nil {
		t.Fatal(err)
	}
	after, err := readMaps()
	if err != nil {
		t.Fatal(err)
	}
	var d strings.Builder
	before.diff(after, &d)
	if d.Len() != 0 {
		t.Errorf("after Free:\n%s", d.String())
	}
	_ = heap[0]
}
