package errvocab_test

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/rpma"
	"github.com/purerdma/purerdma/rsocket"
	"github.com/purerdma/purerdma/uverbs"
)

// TestSentinels is the vocabulary: every sentinel, the errno and the
// broader kinds it matches, and the kinds it must not match (a sentinel
// that matched everything would pass every other test here). rpma's
// own sentinels, librpma's codes the module has no kind for, are here
// too; its ErrInvalid, ErrClosed and ErrUnsupported are uverbs'
// (TestOneValuePerKind).
func TestSentinels(t *testing.T) {
	for _, tt := range []struct {
		name    string
		err     error
		matches []error // errno first, then broader kinds
		not     []error
	}{
		{"uverbs.ErrClosed", uverbs.ErrClosed, []error{unix.EBADF}, []error{uverbs.ErrInvalid, unix.EINVAL}},
		{"uverbs.ErrBusy", uverbs.ErrBusy, []error{unix.EBUSY}, []error{uverbs.ErrClosed}},
		{"uverbs.ErrInvalid", uverbs.ErrInvalid, []error{unix.EINVAL}, []error{uverbs.ErrClosed, unix.EBADF}},
		{"uverbs.ErrQueueFull", uverbs.ErrQueueFull, []error{unix.ENOMEM}, []error{uverbs.ErrInvalid}},
		{"uverbs.ErrUnsupported", uverbs.ErrUnsupported, []error{unix.EOPNOTSUPP, errors.ErrUnsupported}, []error{uverbs.ErrNoProvider, uverbs.ErrInvalid}},
		{"uverbs.ErrNoProvider", uverbs.ErrNoProvider, []error{unix.EOPNOTSUPP, uverbs.ErrUnsupported}, []error{uverbs.ErrInvalid}},
		{"uverbs.ErrNoDevice", uverbs.ErrNoDevice, []error{unix.ENODEV}, []error{uverbs.ErrInvalid}},
		{"uverbs.ErrNoGID", uverbs.ErrNoGID, nil, []error{uverbs.ErrInvalid, uverbs.ErrNoDevice}},
		{"cq.ErrClosed", cq.ErrClosed, []error{unix.EBADF, uverbs.ErrClosed}, nil},
		{"cq.ErrCompletion", cq.ErrCompletion, nil, []error{uverbs.ErrInvalid}},
		{"mr.ErrNotMapped", mr.ErrNotMapped, []error{unix.EINVAL, uverbs.ErrInvalid}, []error{uverbs.ErrBusy}},
		{"mr.ErrRegistered", mr.ErrRegistered, []error{unix.EBUSY, uverbs.ErrBusy}, []error{uverbs.ErrInvalid}},
		{"rdmacm.ErrClosed", rdmacm.ErrClosed, []error{unix.EBADF, uverbs.ErrClosed}, nil},
		{"rdmacm.ErrNoEvent", rdmacm.ErrNoEvent, []error{unix.EAGAIN}, []error{uverbs.ErrClosed}},
		{"rdmacm.ErrRejected", rdmacm.ErrRejected, []error{unix.ECONNREFUSED}, []error{uverbs.ErrInvalid}},
		{"rdmacm.ErrPrivateData", rdmacm.ErrPrivateData, []error{unix.EINVAL, uverbs.ErrInvalid}, []error{uverbs.ErrQueueFull}},
		{"rdmacm.ErrNotJoined", rdmacm.ErrNotJoined, []error{unix.EADDRNOTAVAIL}, []error{uverbs.ErrInvalid}},
		{"rsocket.ErrNetwork", rsocket.ErrNetwork, []error{unix.EINVAL, uverbs.ErrInvalid}, nil},
		{"rsocket.ErrProtocol", rsocket.ErrProtocol, nil, []error{uverbs.ErrInvalid}},
		{"rpma.ErrProvider", rpma.ErrProvider, nil, []error{uverbs.ErrInvalid, uverbs.ErrClosed}},
		{"rpma.ErrNoCompletion", rpma.ErrNoCompletion, nil, []error{unix.EAGAIN, rpma.ErrNoEvent}},
		{"rpma.ErrNoEvent", rpma.ErrNoEvent, nil, []error{unix.EAGAIN, rdmacm.ErrNoEvent}},
		{"rpma.ErrSharedChannel", rpma.ErrSharedChannel, nil, []error{rpma.ErrNotSharedChannel, uverbs.ErrInvalid}},
		{"rpma.ErrNotSharedChannel", rpma.ErrNotSharedChannel, nil, []error{rpma.ErrSharedChannel, uverbs.ErrInvalid}},
		{"rpma.ErrUnknown", rpma.ErrUnknown, nil, []error{uverbs.ErrInvalid}},
		{"rpma.ErrNoMem", rpma.ErrNoMem, []error{unix.ENOMEM}, []error{uverbs.ErrQueueFull}},
		{"rpma.ErrAgain", rpma.ErrAgain, []error{unix.EAGAIN}, []error{rdmacm.ErrNoEvent}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, want := range tt.matches {
				if !errors.Is(tt.err, want) {
					t.Errorf("errors.Is(%s, %v) = false", tt.name, want)
				}
			}
			for _, not := range tt.not {
				if errors.Is(tt.err, not) {
					t.Errorf("errors.Is(%s, %v) = true", tt.name, not)
				}
			}
			// The wrapper names the package; a sentinel that named one
			// too would read "pkg: ...: pkg: kind".
			if msg := tt.err.Error(); strings.Contains(msg, ": ") || msg == "" {
				t.Errorf("%s reads %q: want the bare kind, no package prefix", tt.name, msg)
			}
		})
	}
}

// TestOneValuePerKind: the packages that re-export a shared sentinel
// re-export the value itself, not a look-alike.
func TestOneValuePerKind(t *testing.T) {
	for _, tt := range []struct {
		name      string
		got, want error
	}{
		{"cq.ErrClosed", cq.ErrClosed, uverbs.ErrClosed},
		{"rdmacm.ErrClosed", rdmacm.ErrClosed, uverbs.ErrClosed},
		{"rpma.ErrClosed", rpma.ErrClosed, uverbs.ErrClosed},
		{"rpma.ErrInvalid", rpma.ErrInvalid, uverbs.ErrInvalid},
		{"rpma.ErrUnsupported", rpma.ErrUnsupported, uverbs.ErrUnsupported},
	} {
		if tt.got != tt.want {
			t.Errorf("%s is not the same value as %v", tt.name, tt.want)
		}
	}
}

// TestNilObjects is use after close without a device: a nil object of
// every package answers like a closed one, with ErrClosed (EBADF); a nil
// rsocket Conn also keeps net.ErrClosed, as a net.Conn must. rpma is the
// exception: a nil object answers ErrInvalid, as librpma answers a NULL
// one with RPMA_E_INVAL (rpma's TestNilReceivers).
func TestNilObjects(t *testing.T) {
	for _, tt := range []struct {
		name string
		call func() error
	}{
		{"uverbs.Context.AllocPD", func() error { _, err := (*uverbs.Context)(nil).AllocPD(); return err }},
		{"uverbs.QP.PostSend", func() error { _, err := (*uverbs.QP)(nil).PostSend(nil); return err }},
		{"cq.CQ.Poll", func() error { _, err := (*cq.CQ)(nil).Poll(nil); return err }},
		{"mr.MR.Close", func() error { return (*mr.MR)(nil).Close() }},
		{"rdmacm.EventChannel.CreateID", func() error { _, err := (*rdmacm.EventChannel)(nil).CreateID(rdmacm.TCP); return err }},
		{"rdmacm.ID.Bind", func() error { return (*rdmacm.ID)(nil).Bind(netip.AddrPort{}) }},
		{"rsocket.Conn.Read", func() error { _, err := (*rsocket.Conn)(nil).Read(nil); return err }},
		{"rsocket.Listener.Accept", func() error { _, err := (*rsocket.Listener)(nil).Accept(); return err }},
	} {
		err := tt.call()
		if !errors.Is(err, uverbs.ErrClosed) || !errors.Is(err, unix.EBADF) {
			t.Errorf("%s on nil: %v, want ErrClosed (EBADF)", tt.name, err)
		}
		if strings.HasPrefix(tt.name, "rsocket.") && !errors.Is(err, net.ErrClosed) {
			t.Errorf("%s on nil: %v, want net.ErrClosed too", tt.name, err)
		}
	}
}
