package rpma_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/netip"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rpma"
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

// A client that writes into the server's memory and flushes the write,
// waiting for the flush's completion.
func ExamplePeer_NewConnRequest() {
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
	if err := conn.Flush(dst, 0, 16, rpma.FlushVisibility, rpma.Op{Flags: rpma.CompletionAlways, Context: 1}); err != nil {
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
	if err := wc[0].Err(); err != nil {
		log.Fatal(err)
	}
	conn.Disconnect()
	conn.NextEvent(ctx) // ConnClosed
}
