package rpma

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/netip"
	"syscall"
	"testing"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/uverbs"
)

// TestSharedSentinelsMisuse checks that misuse answers with the kinds the
// whole module shares, matchable as uverbs' sentinels and as their
// errnos, and that Code still gives librpma's code: use after Close is
// uverbs.ErrClosed (EBADF; librpma's INVAL), an invalid argument
// uverbs.ErrInvalid (EINVAL; INVAL), what cannot be done
// uverbs.ErrUnsupported (EOPNOTSUPP; NOSUPP). The objects are built
// without a device: every one of these checks comes before the package
// touches the kernel. TestClosedObjects (badinput_vm_test.go) closes
// real ones.
func TestSharedSentinelsMisuse(t *testing.T) {
	saveLog(t)
	SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))

	ctx := context.Background()
	region := &MR{region: &mr.MR{}, usage: UsageReadDst | UsageWriteSrc} // 0 bytes
	gone := &MR{region: &mr.MR{}, usage: UsageWriteSrc}
	gone.closed.Store(true)
	remote := &RemoteMR{addr: 1 << 40, size: 4096, usage: UsageWriteDst}
	conn := &Conn{peer: &Peer{}, req: &ConnRequest{cfg: &ConnConfig{}}}
	closedConn := &Conn{}
	closedConn.closed.Store(true)
	closedCQ := &CQ{}
	closedCQ.closed.Store(true)
	closedEP := &Endpoint{}
	closedEP.closed.Store(true)
	closedPeer := &Peer{}
	closedPeer.closed.Store(true)
	closedSRQ := &SRQ{}
	closedSRQ.closed.Store(true)
	usedReq := &ConnRequest{}
	usedReq.used.Store(true)
	always := Op{Flags: CompletionAlways, Context: 1}
	wc := make([]cq.WC, 1)

	closed := []struct {
		name string
		call func() error
	}{
		{"Conn.Read", func() error { return closedConn.Read(region, 0, remote, 0, 0, always) }},
		{"Conn.Write", func() error { return closedConn.Write(remote, 0, region, 0, 0, always) }},
		{"Conn.Write with the zero Op", func() error { return closedConn.Write(nil, 0, nil, 0, 0, Op{}) }},
		{"Conn.WriteWithImm", func() error { return closedConn.WriteWithImm(remote, 0, region, 0, 0, 7, always) }},
		{"Conn.AtomicWrite", func() error { return closedConn.AtomicWrite(remote, 0, [8]byte{}, always) }},
		{"Conn.Flush", func() error { return closedConn.Flush(remote, 0, 8, FlushVisibility, always) }},
		{"Conn.Send", func() error { return closedConn.Send(region, 0, 0, always) }},
		{"Conn.SendWithImm", func() error { return closedConn.SendWithImm(region, 0, 0, 7, always) }},
		{"Conn.Recv", func() error { return closedConn.Recv(region, 0, 0, 1) }},
		{"Conn.NextEvent", func() error { _, err := closedConn.NextEvent(ctx); return err }},
		{"Conn.CompletionFd", func() error { _, err := closedConn.CompletionFd(); return err }},
		{"Conn.Wait", func() error { _, _, err := closedConn.Wait(ctx); return err }},
		{"Conn.Disconnect", func() error { return closedConn.Disconnect() }},
		{"CQ.GetWC", func() error { _, err := closedCQ.GetWC(wc); return err }},
		{"CQ.GetWC with no entries", func() error { _, err := closedCQ.GetWC(nil); return err }},
		{"CQ.GetCompletion", func() error { _, err := closedCQ.GetCompletion(); return err }},
		{"CQ.Wait", func() error { return closedCQ.Wait(ctx) }},
		{"MR.Advise", func() error { return gone.Advise(0, 0, AdvicePrefetch, 0) }},
		{"a closed region given to Write", func() error { return conn.Write(remote, 0, gone, 0, 0, always) }},
		{"a closed region given to Recv", func() error { return conn.Recv(gone, 0, 0, 1) }},
		{"Endpoint.Addr", func() error { _, err := closedEP.Addr(); return err }},
		{"Endpoint.NextConnRequest", func() error { _, err := closedEP.NextConnRequest(ctx, nil); return err }},
		{"Endpoint.TryNextConnRequest", func() error { _, err := closedEP.TryNextConnRequest(nil); return err }},
		{"Peer.RegisterMR", func() error { _, err := closedPeer.RegisterMR(nil, 0); return err }},
		{"Peer.Listen", func() error { _, err := closedPeer.Listen(netip.AddrPort{}); return err }},
		{"Peer.NewConnRequest", func() error { _, err := closedPeer.NewConnRequest(ctx, netip.AddrPort{}, nil); return err }},
		{"Peer.NewSRQ", func() error { _, err := closedPeer.NewSRQ(nil); return err }},
		{"SRQ.Recv", func() error { return closedSRQ.Recv(nil, 0, 0, 1) }},
		{"ConnRequest.Recv after use", func() error { return usedReq.Recv(nil, 0, 0, 1) }},
		{"ConnRequest.Connect after use", func() error { _, err := usedReq.Connect(nil); return err }},
	}
	for _, tt := range closed {
		t.Run("closed/"+tt.name, func(t *testing.T) {
			checkKind(t, tt.call(), uverbs.ErrClosed, syscall.EBADF, CodeInval)
		})
	}

	invalid := []struct {
		name string
		call func() error
	}{
		{"nil Conn", func() error { return (*Conn)(nil).Write(remote, 0, region, 0, 0, always) }},
		{"nil CQ", func() error { _, err := (*CQ)(nil).GetWC(wc); return err }},
		{"nil Peer", func() error { _, err := (*Peer)(nil).RegisterMR(nil, UsageReadSrc); return err }},
		{"Read with flags neither ON_ERROR nor ALWAYS", func() error { return conn.Read(region, 0, remote, 0, 0, Op{Flags: 4}) }},
		{"Send with flags neither 0, ON_ERROR nor ALWAYS", func() error { return conn.Send(nil, 0, 0, Op{Flags: -1, Context: 1}) }},
		{"Write past the remote region", func() error { return conn.Write(remote, 4096, region, 0, 1, always) }},
		{"Write from past the local region", func() error { return conn.Write(remote, 0, region, 0, 1, always) }},
		{"zero-byte Write with one region", func() error { return conn.Write(remote, 0, nil, 0, 0, always) }},
		{"AtomicWrite to an unaligned offset", func() error { return conn.AtomicWrite(remote, 7, [8]byte{}, always) }},
		{"Flush of an unknown type", func() error { return conn.Flush(remote, 0, 8, FlushType(2), always) }},
		{"GetWC into no entries", func() error { _, err := (&CQ{}).GetWC(nil); return err }},
		{"Advise with an unknown flag", func() error { return region.Advise(0, 0, AdvicePrefetch, 2) }},
		{"RemoteMRFromDescriptor(nil)", func() error { _, err := RemoteMRFromDescriptor(nil); return err }},
		{"SetLogThreshold of an unknown threshold", func() error { return SetLogThreshold(2, LogDebug) }},
	}
	for _, tt := range invalid {
		t.Run("invalid/"+tt.name, func(t *testing.T) {
			checkKind(t, tt.call(), uverbs.ErrInvalid, syscall.EINVAL, CodeInval)
		})
	}

	unsupportedCases := []struct {
		name string
		call func() error
	}{
		{"visibility Flush of a region without its usage", func() error { return conn.Flush(remote, 0, 8, FlushVisibility, always) }},
		{"persistent Flush without DirectWriteToPMem", func() error { return conn.Flush(remote, 0, 8, FlushPersistent, always) }},
	}
	for _, tt := range unsupportedCases {
		t.Run("unsupported/"+tt.name, func(t *testing.T) {
			checkKind(t, tt.call(), uverbs.ErrUnsupported, syscall.EOPNOTSUPP, CodeNoSupp)
		})
	}
}

// checkKind checks that err is of the kind of sentinel, matches errno,
// has librpma's code, and is of no other kind.
func checkKind(t *testing.T, err, sentinel error, errno syscall.Errno, code int) {
	t.Helper()
	if !errors.Is(err, sentinel) || !errors.Is(err, errno) {
		t.Errorf("got %v; want it to match %v and %v", err, sentinel, errno)
	}
	if got := Code(err); got != code {
		t.Errorf("Code(%v) = %d (%s), want %d (%s)", err, got, CodeText(got), code, CodeText(code))
	}
	for _, other := range []error{ErrInvalid, ErrClosed, ErrUnsupported, ErrProvider} {
		if other != sentinel && errors.Is(err, other) {
			t.Errorf("%v also matches %v", err, other)
		}
	}
}

// TestProviderCode checks that a provider error keeps the lower layer's
// error matchable and is CodeProvider even when that error is one of the
// shared kinds, as librpma answers PROVIDER whatever the errno.
func TestProviderCode(t *testing.T) {
	saveLog(t)
	SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, lower := range []error{syscall.ECONNREFUSED, uverbs.ErrInvalid, uverbs.ErrUnsupported, uverbs.ErrBusy} {
		err := provider("test", lower)
		if !errors.Is(err, ErrProvider) || !errors.Is(err, lower) || Code(err) != CodeProvider {
			t.Errorf("provider(%v) = %v, Code %d; want ErrProvider wrapping it, CodeProvider", lower, err, Code(err))
		}
		// An error the package made passes through a second wrapping.
		if again := provider("again", err); again != err {
			t.Errorf("provider(provider(%v)) = %v, want it unchanged", lower, again)
		}
	}
	// A closed lower object is the caller's closed object.
	for _, lower := range []error{uverbs.ErrClosed, syscall.EBADF} {
		if err := provider("test", lower); !errors.Is(err, ErrClosed) || errors.Is(err, ErrProvider) || Code(err) != CodeInval {
			t.Errorf("provider(%v) = %v, want ErrClosed", lower, err)
		}
	}
}
