package rsocket_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"

	"github.com/purerdma/purerdma/rsocket"
)

// Serve HTTP over RDMA: net/http takes any net.Listener, and a client
// takes a transport that dials rsockets. The address must be one of an
// RDMA device (RoCE or iWARP).
func Example_http() {
	l, err := rsocket.Listen("rdma", "192.0.2.1:8080")
	if err != nil {
		log.Fatal(err)
	}
	go http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello over RDMA")
	}))

	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			return rsocket.Dial(ctx, "rdma", addr)
		},
	}}
	resp, err := client.Get("http://192.0.2.1:8080/")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
}

// A connection to a C program using rsockets, such as rstream -T s off:
// the Conn is a net.Conn, and CloseWrite sends rsocket's shutdown.
func ExampleDial() {
	o := rsocket.Options{RecvBuffer: 1 << 20, SendBuffer: 1 << 20}
	c, err := o.Dial(context.Background(), "rdma", "192.0.2.1:7471")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("request")); err != nil {
		log.Fatal(err)
	}
	c.CloseWrite()
	reply, err := io.ReadAll(c)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", reply)
}

// An echo server for rsockets clients, Go or C (rstream, or any program
// under LD_PRELOAD=librspreload.so): a Listener is a net.Listener and its
// connections are net.Conns.
func ExampleListen() {
	l, err := rsocket.Listen("rdma", "192.0.2.1:7471") // an address of an RDMA device
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	for {
		c, err := l.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go func() {
			defer c.Close()
			io.Copy(c, c)
		}()
	}
}
