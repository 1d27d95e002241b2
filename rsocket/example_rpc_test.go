package rsocket_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/rpc"
	"strings"

	"github.com/purerdma/purerdma/rsocket"
)

// Strings is a net/rpc service: its exported methods of the form
// func(args, *reply) error are what clients call.
type Strings struct{}

// Upper returns s in upper case.
func (Strings) Upper(s string, reply *string) error {
	*reply = strings.ToUpper(s)
	return nil
}

// serveRPC registers Strings and serves net/rpc on l until it is closed:
// an rsocket Listener is a net.Listener, so the server is net/rpc's own.
func serveRPC(l net.Listener) error {
	srv := rpc.NewServer()
	if err := srv.Register(Strings{}); err != nil {
		return err
	}
	srv.Accept(l) // returns when l is closed
	return nil
}

// callRPC dials the server over RDMA and calls Strings.Upper: a Conn is a
// net.Conn, so the client is net/rpc's own too.
func callRPC(ctx context.Context, addr, s string) (string, error) {
	c, err := rsocket.Dial(ctx, "rdma", addr)
	if err != nil {
		return "", err
	}
	client := rpc.NewClient(c) // closes c when closed
	defer client.Close()
	var reply string
	err = client.Call("Strings.Upper", s, &reply)
	return reply, err
}

// A request/response service over RDMA: Go's net/rpc runs unchanged on
// rsocket's net.Listener and net.Conn. TestRPCExample runs it on rxe and
// siw in the test VM.
func Example_rpc() {
	l, err := rsocket.Listen("rdma", "192.0.2.1:7472") // an address of an RDMA device
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	go serveRPC(l)

	reply, err := callRPC(context.Background(), l.Addr().String(), "hello over rdma")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(reply)
}
