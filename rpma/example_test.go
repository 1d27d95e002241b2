package rpma_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/netip"
	"syscall"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rpma"
	"github.com/purerdma/purerdma/uverbs"
)

// A server that lends 4 KiB of memory: it registers the memory, listens,
// and accepts one connection with the memory's descriptor as private
// data, as librpma's examples do.
func ExamplePeer_Listen() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	addr := netip.MustParseAddr("192.168.77.1")
	dev, err := rpma.ContextByAddr(ctx, addr, rpma.ContextLocal)
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()
	peer, err := rpma.NewPeer(dev)
	if err != nil {
		log.Fatal(err)
	}
	defer peer.Close()
	buf, err := mr.Alloc(4096)
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Free(buf)
	region, err := peer.RegisterMR(buf, rpma.UsageWriteDst|rpma.UsageReadSrc|rpma.UsageFlushTypeVisibility)
	if err != nil {
		log.Fatal(err)
	}
	defer region.Close()
	ep, err := peer.Listen(netip.AddrPortFrom(addr, 7204))
	if err != nil {
		log.Fatal(err)
	}
	defer ep.Close()
	req, err := ep.NextConnRequest(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	conn, err := req.Connect(region.Descriptor())
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	for {
		ev, err := conn.NextEvent(ctx)
		if err != nil || ev == rpma.ConnClosed {
			break
		}
	}
	conn.Disconnect()
	fmt.Printf("the client left %q\n", buf[:16])
}

// The main flow of a client, as in librpma's examples: open the device
// that reaches the server, make a peer, register memory, connect, learn
// the server's region from its private data, write into it and flush the
// write, waiting for the flush's completion. Only the flush reports
// success (CompletionAlways); the write reports only a failure. It needs
// the server of ExamplePeer_Listen.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	server := netip.MustParseAddrPort("192.168.77.1:7204")
	dev, err := rpma.ContextByAddr(ctx, server.Addr(), rpma.ContextRemote)
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()
	peer, err := rpma.NewPeer(dev)
	if err != nil {
		log.Fatal(err)
	}
	defer peer.Close()
	buf, err := mr.Alloc(4096)
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Free(buf)
	src, err := peer.RegisterMR(buf, rpma.UsageWriteSrc)
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()
	req, err := peer.NewConnRequest(ctx, server, nil)
	if err != nil {
		log.Fatal(err)
	}
	conn, err := req.Connect(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	if ev, err := conn.NextEvent(ctx); err != nil || ev != rpma.ConnEstablished {
		log.Fatal(ev, err)
	}
	dst, err := rpma.RemoteMRFromDescriptor(conn.PrivateData())
	if err != nil {
		log.Fatal(err)
	}
	copy(buf, "hello, server")
	if err := conn.Write(dst, 0, src, 0, 16, rpma.Op{Flags: rpma.CompletionOnError}); err != nil {
		log.Fatal(err)
	}
	const flushID = 1
	err = conn.Flush(dst, 0, 16, rpma.FlushVisibility, rpma.Op{Flags: rpma.CompletionAlways, Context: flushID})
	if errors.Is(err, rpma.ErrUnsupported) {
		log.Fatal("the server's region cannot be flushed for visibility: ", err)
	}
	if err != nil {
		log.Fatal(err)
	}
	var wc [1]cq.WC
	for {
		_, err := conn.CQ().GetWC(wc[:])
		if err == nil {
			break
		}
		if !errors.Is(err, rpma.ErrNoCompletion) {
			log.Fatal(err)
		}
		if err := conn.CQ().Wait(ctx); err != nil && !errors.Is(err, rpma.ErrNoCompletion) {
			log.Fatal(err)
		}
	}
	if err := wc[0].Err(); err != nil || wc[0].ID != flushID {
		log.Fatal(wc[0].ID, err)
	}
	conn.Disconnect()
	conn.NextEvent(ctx) // ConnClosed
}

// Code gives the librpma code (RPMA_E_*) of an error, as a C caller would
// have got it; errors.Is tests its kind, which for an invalid argument or
// a closed object is the module's shared sentinel.
func ExampleCode() {
	_, err := rpma.RemoteMRFromDescriptor([]byte{1, 2, 3})
	fmt.Println(errors.Is(err, rpma.ErrInvalid), errors.Is(err, uverbs.ErrInvalid), errors.Is(err, syscall.EINVAL))
	fmt.Println(rpma.Code(err), rpma.CodeText(rpma.Code(err)))
	fmt.Println(rpma.Code(nil), rpma.CodeText(0))
	fmt.Println(rpma.Code(rpma.ErrNoCompletion) == rpma.CodeNoCompletion)
	// Output:
	// true true true
	// -100004 Invalid argument
	// 0 Success
	// true
}
