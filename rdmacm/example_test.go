package rdmacm_test

import (
	"context"
	"encoding/binary"
	"log"
	"net/netip"
	"time"

	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

// The active side step by step: resolve, create the QP, connect, send one
// message. Dial does the first steps in one call.
func ExampleID_Connect() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		log.Fatal(err)
	}
	defer ch.Close() // destroys the ID and its QP too
	id, err := ch.CreateID(rdmacm.TCP)
	if err != nil {
		log.Fatal(err)
	}
	// Address and route resolution, each waited for: the ID is bound to
	// the device that reaches the server.
	if err := id.Resolve(ctx, netip.MustParseAddrPort("192.168.77.1:7471"), 2*time.Second); err != nil {
		log.Fatal(err)
	}
	if err := id.CreateQP(nil, uverbs.QPInit{Cap: uverbs.QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}}); err != nil {
		log.Fatal(err)
	}
	if err := id.Connect(&rdmacm.ConnParam{PrivateData: []byte("hi"), RetryCount: 7, RNRRetryCount: 7}); err != nil {
		log.Fatal(err)
	}
	if _, err := id.WaitEvent(ctx, rdmacm.EventEstablished); err != nil {
		log.Fatal(err) // errors.Is(err, rdmacm.ErrRejected) if the peer said no
	}
	buf, err := mr.Alloc(4096)
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Free(buf)
	region, err := mr.Register(id.PD(), buf, uverbs.LocalWrite)
	if err != nil {
		log.Fatal(err)
	}
	defer region.Close()
	copy(buf, "hello")
	if err := id.PostSend(1, region, 0, 5, uverbs.SendSignaled); err != nil {
		log.Fatal(err)
	}
	if wc, err := id.GetSendComp(ctx); err != nil || wc.Err() != nil {
		log.Fatal(err, wc.Err())
	}
	id.Disconnect()
}

// The passive side: listen, take one request, accept it.
func ExampleID_Accept() {
	ctx := context.Background()
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		log.Fatal(err)
	}
	defer ch.Close()
	l, err := ch.CreateID(rdmacm.TCP)
	if err != nil {
		log.Fatal(err)
	}
	if err := l.Bind(netip.MustParseAddrPort("192.168.77.1:7471")); err != nil {
		log.Fatal(err)
	}
	if err := l.Listen(8); err != nil {
		log.Fatal(err)
	}
	req, err := l.WaitEvent(ctx, rdmacm.EventConnectRequest)
	if err != nil {
		log.Fatal(err)
	}
	id := req.ID // a new ID, bound to the device the request came in on
	if err := id.CreateQP(nil, uverbs.QPInit{Cap: uverbs.QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}}); err != nil {
		log.Fatal(err)
	}
	// Accept(nil) would grant what the client asks for, within the
	// device's limits, with 7 retries. Private data needs a ConnParam, in
	// which 0 means 0: the Max constants and 7 keep nil's meaning (the
	// RNR retry count given here is the one the client's QP uses).
	p := &rdmacm.ConnParam{
		PrivateData:        []byte("welcome"),
		ResponderResources: rdmacm.MaxResponderResources,
		InitiatorDepth:     rdmacm.MaxInitiatorDepth,
		RetryCount:         7,
		RNRRetryCount:      7,
	}
	if err := id.Accept(p); err != nil {
		log.Fatal(err)
	}
	if _, err := id.WaitEvent(ctx, rdmacm.EventEstablished); err != nil {
		log.Fatal(err)
	}
}

// A client in one call: Dial resolves the name, creates the QP and its
// CQs with the defaults of a zero Config and connects; the server's
// private data comes with the connection.
func ExampleDial() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id, err := rdmacm.Dial(ctx, "server.example:7471")
	if err != nil {
		log.Fatal(err)
	}
	defer id.Close() // the QP, its CQs, the ID and its event channel
	log.Printf("connected; the server said %q", id.PrivateData())
	buf, err := mr.AllocRegister(id.PD(), 4096, uverbs.LocalWrite)
	if err != nil {
		log.Fatal(err)
	}
	defer buf.Close()
	if err := id.PostRecv(1, buf.MR(), 0, buf.Len()); err != nil {
		log.Fatal(err)
	}
	// Ends with an error matching syscall.ECONNRESET if the server
	// disconnects or dies first.
	wc, err := id.GetRecvComp(ctx)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("received %q", buf.Bytes()[:wc.ByteLen])
}

// A server in a few calls: Listen binds and listens, Accept creates each
// connection's QP and CQs, accepts with the private data and waits for
// the connection. Each connection has an event channel of its own.
func ExampleListener_Accept() {
	l, err := rdmacm.Listen("192.168.77.1:7471")
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	// Memory for the clients to write, in the PD the connections share,
	// handed out as its address and rkey.
	buf, err := mr.AllocRegister(l.PD(), 4096, uverbs.LocalWrite|uverbs.RemoteWrite)
	if err != nil {
		log.Fatal(err)
	}
	defer buf.Close()
	private, err := binary.Append(nil, binary.LittleEndian, rdmacm.Remote{Addr: buf.Addr(), RKey: buf.RKey()})
	if err != nil {
		log.Fatal(err)
	}
	l.SetPrivateData(private)
	for {
		id, err := l.Accept(context.Background())
		if err != nil {
			log.Fatal(err) // the listener is closed or its device gone
		}
		go func() {
			defer id.Close()
			// Wait for the client to go.
			id.WaitEvent(context.Background(), rdmacm.EventDisconnected)
		}()
	}
}
