package rpma_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/purerdma/purerdma/rpma"
)

// A client that reads the first 16 bytes of the server's region: Dial
// finds the device, connects and learns the region from the accept;
// ReadAndWait reads and waits for the read's own completion; Close
// releases everything, the region from AllocMR included.
func ExampleDial() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := rpma.Dial(ctx, "192.168.77.1:7204", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	dst, err := c.Peer().AllocMR(4096, rpma.UsageReadDst)
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Conn().ReadAndWait(ctx, dst.Span(0, 16), c.Remote().At(0)); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q\n", dst.Bytes()[:16])
}

// A server that lends 4 KiB to each client it accepts: the region's
// descriptor goes with every accept, for the client's Remote.
func ExampleListen() {
	l, err := rpma.Listen("192.168.77.1:7204", &rpma.ListenOptions{Region: 4096})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	copy(l.Region().Bytes(), "hello, client")
	for {
		conn, err := l.Accept(context.Background())
		if err != nil {
			log.Fatal(err)
		}
		go func() {
			// Wait until the client leaves, then release the connection.
			defer conn.Close()
			for {
				if ev, err := conn.NextEvent(context.Background()); err != nil || ev != rpma.ConnEstablished {
					return
				}
			}
		}()
	}
}
