package netlink

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// dialRoute opens a real rtnetlink socket. Reading links needs no
// privilege, so this runs on any Linux host whose sandbox allows netlink.
func dialRoute(t *testing.T) *Conn {
	t.Helper()
	c, err := Dial(unix.NETLINK_ROUTE)
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.EAFNOSUPPORT) {
		t.Skipf("no netlink here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// ifinfomsg returns an empty struct ifinfomsg for family AF_UNSPEC.
func ifinfomsg() []byte { return make([]byte, unix.SizeofIfInfomsg) }

func TestKernelDump(t *testing.T) {
	t.Run("default buffer", func(t *testing.T) { testKernelDump(t, dialRoute(t)) })
	t.Run("buffer grows", func(t *testing.T) {
		c := dialRoute(t)
		// Smaller than any reply: every datagram must be sized by a
		// MSG_PEEK|MSG_TRUNC and the buffer grown.
		c.sock.(*socket).buf = make([]byte, 16)
		testKernelDump(t, c)
	})
}

func testKernelDump(t *testing.T, c *Conn) {
	for i := range 2 { // the second request checks that the first left nothing behind
		msgs, err := c.Execute(Message{
			Header: unix.NlMsghdr{Type: unix.RTM_GETLINK, Flags: unix.NLM_F_DUMP},
			Data:   ifinfomsg(),
		})
		if err != nil {
			t.Fatalf("dump #%d: %v", i+1, err)
		}
		var names []string
		for _, m := range msgs {
			if m.Header.Type != unix.RTM_NEWLINK || len(m.Data) < unix.SizeofIfInfomsg {
				t.Fatalf("unexpected reply type %d, %d bytes", m.Header.Type, len(m.Data))
			}
			d := NewAttributeDecoder(m.Data[unix.SizeofIfInfomsg:])
			for d.Next() {
				if d.Type() == unix.IFLA_IFNAME {
					names = append(names, d.String())
				}
			}
			if err := d.Err(); err != nil {
				t.Fatal(err)
			}
		}
		if len(names) == 0 {
			t.Fatal("dump returned no link with a name")
		}
		t.Logf("links: %q", names)
	}
}

func TestKernelError(t *testing.T) {
	c := dialRoute(t)
	e := NewAttributeEncoder()
	e.String(unix.IFLA_IFNAME, "nosuchlink0")
	attrs, err := e.Encode()
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Execute(Message{
		Header: unix.NlMsghdr{Type: unix.RTM_GETLINK},
		Data:   append(ifinfomsg(), attrs...),
	})
	if !errors.Is(err, unix.ENODEV) {
		t.Fatalf("RTM_GETLINK of a missing link: %v, want ENODEV", err)
	}
	t.Logf("kernel said: %v", err)

	// The Conn is still in step after a refusal.
	if _, err := c.Execute(Message{Header: unix.NlMsghdr{Type: unix.RTM_GETLINK, Flags: unix.NLM_F_DUMP}, Data: ifinfomsg()}); err != nil {
		t.Fatalf("dump after an error: %v", err)
	}
}
