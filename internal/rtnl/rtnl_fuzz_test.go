//go:build linux

package rtnl

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/internal/netlink"
	"github.com/purerdma/purerdma/internal/netlink/nltest"
)

// FuzzIndex answers RTM_GETLINK with an arbitrary payload. The index
// comes from a struct ifinfomsg that is all there, and only a positive
// one is taken.
func FuzzIndex(f *testing.F) {
	f.Add(ifinfomsg(unix.IfInfomsg{Index: testIndex, Flags: unix.IFF_UP}), true)
	f.Add(ifinfomsg(unix.IfInfomsg{Index: -1}), true)
	f.Add(ifinfomsg(unix.IfInfomsg{Index: 3})[:unix.SizeofIfInfomsg-1], true)
	f.Add(ifinfomsg(unix.IfInfomsg{Index: 3}), false)
	f.Fuzz(func(t *testing.T, b []byte, newlink bool) {
		typ := uint16(unix.RTM_NEWADDR)
		if newlink {
			typ = unix.RTM_NEWLINK
		}
		nl := nltest.Dial(func(req netlink.Message) ([]netlink.Message, error) {
			return []netlink.Message{{Header: unix.NlMsghdr{Type: typ}, Data: b}}, nil
		})
		defer nl.Close()
		got, err := (&Conn{nl: nl}).index("veth0")
		var want int32
		if newlink && len(b) >= unix.SizeofIfInfomsg {
			want = int32(binary.NativeEndian.Uint32(b[4:]))
		}
		switch {
		case want > 0 && (err != nil || got != uint32(want)):
			t.Fatalf("index = %d, %v; want %d", got, err, want)
		case want <= 0 && err == nil:
			t.Fatalf("index = %d from % x", got, b)
		}
	})
}
