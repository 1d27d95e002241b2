package main

// 01-connection: the client and the server connect, exchange greetings as
// private data and disconnect.

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/purerdma/purerdma/rpma"
)

const (
	connMaxRetry   = 10
	connRetryDelay = 5 * time.Second
)

// printGreeting prints the peer's private data as a C string.
func printGreeting(w io.Writer, pdata []byte) {
	if len(pdata) > 0 {
		fmt.Fprintf(w, "Received a message: %s\n", cstr(pdata))
	} else {
		fmt.Fprintf(w, "No message received\n")
	}
}

func connectionServer(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		return usageErr(stderr, "01-connection", "server", "<addr> <port>")
	}
	var u undo
	defer u.run()
	_, ep, err := u.listenAt(ctx, args, nil)
	if err != nil {
		return code(err)
	}
	conn, err := serverAccept(ctx, ep, nil, []byte("Hello client!\x00"), stderr)
	if err != nil {
		return code(err)
	}
	printGreeting(stdout, conn.PrivateData())
	return code(disconnectAndWaitForClose(ctx, conn, stderr))
}

func connectionClient(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		return usageErr(stderr, "01-connection", "client", "<addr> <port>")
	}
	u, p, err := clientPeer(ctx, args)
	defer u.run()
	if err != nil {
		return code(err)
	}
	var conn *rpma.Conn
	for retry := 0; retry < connMaxRetry && conn == nil; retry++ {
		wctx, cancel := within(ctx)
		req, err := p.NewConnRequest(wctx, p.addr, nil)
		cancel()
		if err != nil {
			return code(err)
		}
		c, err := req.Connect([]byte("Hello server!\x00"))
		if err != nil {
			return code(err)
		}
		wctx, cancel = within(ctx)
		ev, err := c.NextEvent(wctx)
		cancel()
		switch {
		case err != nil:
			c.Disconnect()
			c.Close()
			return code(err)
		case ev == rpma.ConnEstablished:
			conn = c
		case ev == rpma.ConnRejected:
			c.Disconnect()
			c.Close()
			if retry < connMaxRetry-1 {
				fmt.Fprintf(stderr, "Retrying...\n")
				sleepUsec(ctx, uint64(connRetryDelay/time.Microsecond))
			} else {
				fmt.Fprintf(stderr, "The retry number exceeded. Closing.\n")
			}
		default:
			fmt.Fprintf(stderr, "rpma_conn_next_event returned an unexpected event: %s\n", ev)
			c.Disconnect()
			c.Close()
			return -1
		}
	}
	if conn == nil {
		return -1
	}
	printGreeting(stdout, conn.PrivateData())
	return code(waitForCloseAndDisconnect(ctx, conn, stderr))
}
