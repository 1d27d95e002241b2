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

// writeTo connects to the server at addr ("host:port"), writes msg into
// the buffer whose address and rkey the server sent with its accept, and
// waits for the write's completion.
func writeTo(ctx context.Context, addr, msg string) error {
	id, err := rdmacm.Dial(ctx, addr) // resolve, create the QP and CQs, connect
	if err != nil {
		return err
	}
	defer id.Close() // the QP, its CQs, the ID and its event channel

	var dst rdmacm.Remote // the server's buffer, from its accept
	if _, err := binary.Decode(id.PrivateData(), binary.LittleEndian, &dst); err != nil {
		return err
	}
	buf, err := mr.AllocRegister(id.PD(), len(msg), uverbs.LocalWrite) // outside the Go heap
	if err != nil {
		return err
	}
	defer buf.Close()
	n := copy(buf.Bytes(), msg)
	if err := id.PostWrite(1, buf.MR(), 0, n, uverbs.SendSignaled, dst); err != nil {
		return err
	}
	wc, err := id.GetSendComp(ctx) // sleeps until the write is acknowledged
	if err != nil {
		return err
	}
	return wc.Err() // the write failed if not nil: wc.Status says why
}

// serve accepts one connection on l, whose Accept hands the client the
// address and rkey of buf, and returns what buf holds once the client
// has gone: an RDMA write leaves no completion at the target, and the
// client closes the connection only after its write completed, that is,
// was acknowledged.
func serve(ctx context.Context, l *rdmacm.Listener, buf *mr.Buffer) (string, error) {
	id, err := l.Accept(ctx)
	if err != nil {
		return "", err
	}
	defer id.Close()
	// The client's close disconnects: the disconnection ends the wait.
	if _, err := id.WaitEvent(ctx, rdmacm.EventDisconnected); err != nil {
		return "", err
	}
	return string(bytes.TrimRight(buf.Bytes(), "\x00")), nil
}

// quickStart has a server listen on addr, at a port the kernel picks, and
// writeTo write msg to it over the device that has addr: one process
// connected to itself. It returns what the server found in its buffer.
func quickStart(ctx context.Context, addr netip.Addr, msg string) (string, error) {
	l, err := rdmacm.Listen(netip.AddrPortFrom(addr, 0).String())
	if err != nil {
		return "", err
	}
	defer l.Close()
	// The listener is bound to addr's device, whose PD the accepted
	// connections share: the buffer may be registered before any.
	buf, err := mr.AllocRegister(l.PD(), max(len(msg), 1), uverbs.LocalWrite|uverbs.RemoteWrite)
	if err != nil {
		return "", err
	}
	defer buf.Close()
	private, err := binary.Append(nil, binary.LittleEndian, rdmacm.Remote{Addr: buf.Addr(), RKey: buf.RKey()})
	if err != nil {
		return "", err
	}
	l.SetPrivateData(private)
	type result struct {
		got string
		err error
	}
	served := make(chan result, 1)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		got, err := serve(sctx, l, buf)
		served <- result{got, err}
	}()
	werr := writeTo(ctx, l.Addr().String(), msg)
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
