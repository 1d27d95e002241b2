package rdmacm_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log"
	"net/netip"
	"time"

	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// This file is the quick start of README.md, which shows writeTo from
// its doc comment to its closing brace; TestQuickStartREADME keeps the
// two the same, and TestQuickStart runs it on every device of the VM.

// writeTo connects to the server at addr, writes msg into the buffer
// whose address and rkey the server sent with its accept, and waits for
// the write's completion.
func writeTo(ctx context.Context, addr netip.AddrPort, msg string) error {
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		return err
	}
	defer ch.Close() // destroys the ID, its QP and CQs too
	id, err := ch.CreateID(rdmacm.TCP)
	if err != nil {
		return err
	}
	// Resolving addr binds the ID to the RDMA device that reaches it and
	// opens the device; id.PD is the PD the process's IDs share there.
	if err := id.ResolveAddr(netip.AddrPort{}, addr, time.Second); err != nil {
		return err
	}
	if _, err := id.WaitEvent(ctx, rdmacm.EventAddrResolved); err != nil {
		return err
	}
	if err := id.ResolveRoute(time.Second); err != nil {
		return err
	}
	if _, err := id.WaitEvent(ctx, rdmacm.EventRouteResolved); err != nil {
		return err
	}
	buf, err := mr.Alloc(4096) // outside the Go heap, where the device may write
	if err != nil {
		return err
	}
	defer mr.Free(buf)
	region, err := mr.Register(id.PD(), buf, uverbs.LocalWrite)
	if err != nil {
		return err
	}
	defer region.Close()
	if err := id.CreateQP(nil, uverbs.QPInit{Cap: uverbs.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}}); err != nil {
		return err
	}
	// nil asks for what librdmacm's NULL does: the device's most RDMA
	// reads and atomics each way and 7 transport and RNR retries.
	if err := id.Connect(nil); err != nil {
		return err
	}
	est, err := id.WaitEvent(ctx, rdmacm.EventEstablished)
	if err != nil {
		return err
	}
	var dst rdmacm.Remote // the server's buffer, from its private data
	if _, err := binary.Decode(est.Param.PrivateData, binary.LittleEndian, &dst); err != nil {
		return err
	}
	n := copy(buf, msg)
	if err := id.PostWrite(1, region, 0, n, uverbs.SendSignaled, dst); err != nil {
		return err
	}
	wc, err := id.GetSendComp(ctx) // polls the send CQ, sleeping on its channel while it is empty
	if err != nil {
		return err
	}
	if err := wc.Err(); err != nil {
		return err // the write failed: wc.Status says why
	}
	if err := id.Disconnect(); err != nil {
		return err
	}
	_, err = id.WaitEvent(ctx, rdmacm.EventDisconnected) // the server's answer
	return err
}

// serve accepts one connection on the listening ID l, sends the client
// the address and rkey of a buffer it may write, and returns what the
// buffer holds once the client disconnects: an RDMA write leaves no
// completion at the target, and the client disconnects only after its
// write completed, that is, was acknowledged.
func serve(ctx context.Context, l *rdmacm.ID) (string, error) {
	req, err := l.WaitEvent(ctx, rdmacm.EventConnectRequest)
	if err != nil {
		return "", err
	}
	id := req.ID // a new ID for this connection, bound to the device the request came in on
	defer id.Close()
	buf, err := mr.Alloc(4096)
	if err != nil {
		return "", err
	}
	defer mr.Free(buf)
	region, err := mr.Register(id.PD(), buf, uverbs.LocalWrite|uverbs.RemoteWrite)
	if err != nil {
		return "", err
	}
	defer region.Close()
	if err := id.CreateQP(nil, uverbs.QPInit{Cap: uverbs.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}}); err != nil {
		return "", err
	}
	dst := rdmacm.Remote{Addr: region.Addr(), RKey: region.RKey()}
	private, err := binary.Append(nil, binary.LittleEndian, dst)
	if err != nil {
		return "", err
	}
	// The accept carries the buffer's address and rkey, so it needs a
	// ConnParam; a zero one would grant the client no RDMA reads and
	// atomics and no retries (the RNR retry count given here is the
	// client's). The Max constants and 7 are what a nil ConnParam means:
	// as many reads as the client asks for and the device allows.
	p := &rdmacm.ConnParam{
		PrivateData:        private,
		ResponderResources: rdmacm.MaxResponderResources,
		InitiatorDepth:     rdmacm.MaxInitiatorDepth,
		RetryCount:         7,
		RNRRetryCount:      7,
	}
	if err := id.Accept(p); err != nil {
		return "", err
	}
	if _, err := id.WaitEvent(ctx, rdmacm.EventEstablished); err != nil {
		return "", err
	}
	if _, err := id.WaitEvent(ctx, rdmacm.EventDisconnected); err != nil {
		return "", err
	}
	// Disconnecting in turn completes the client's disconnect.
	if err := id.Disconnect(); err != nil {
		return "", err
	}
	return string(bytes.TrimRight(buf, "\x00")), nil
}

// quickStart has a server listen on addr, at a port the kernel picks, and
// writeTo write msg to it over the device that has addr: one process
// connected to itself. It returns what the server found in its buffer.
func quickStart(ctx context.Context, addr netip.Addr, msg string) (string, error) {
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		return "", err
	}
	defer ch.Close()
	l, err := ch.CreateID(rdmacm.TCP)
	if err != nil {
		return "", err
	}
	if err := l.Bind(netip.AddrPortFrom(addr, 0)); err != nil {
		return "", err
	}
	if err := l.Listen(1); err != nil {
		return "", err
	}
	server, err := l.LocalAddr()
	if err != nil {
		return "", err
	}
	type result struct {
		got string
		err error
	}
	served := make(chan result, 1)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		got, err := serve(sctx, l)
		served <- result{got, err}
	}()
	werr := writeTo(ctx, server, msg)
	if werr != nil {
		cancel() // the server waits for a client that is gone
	}
	r := <-served
	return r.got, errors.Join(werr, r.err)
}

// Write into a server's memory over RDMA: the quick start of README.md,
// with its server, in one process that connects to itself through the
// RDMA device that has 192.168.77.1 (rxe0 in the test VM).
func Example_quickStart() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := quickStart(ctx, netip.MustParseAddr("192.168.77.1"), "hello over RDMA")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("the server's buffer holds:", got)
}
