package main

// 02-read-to-volatile: the client reads the server's greeting with an RDMA
// read into volatile memory.

import (
	"context"
	"fmt"
	"io"

	"github.com/purerdma/purerdma/rpma"
)

const readHelloStr = "Hello client!"

func readServer(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		return usageErr(stderr, "02-read-to-volatile", "server", "<server_address> <port>")
	}
	buf, err := alloc(len(readHelloStr) + 1)
	if err != nil {
		return -1
	}
	defer buf.free()
	copy(buf.b, readHelloStr)
	return serveRegion(ctx, args, buf.b, rpma.UsageReadSrc, 0, nil, stderr, func(conn *rpma.Conn, err error) int {
		if err == nil {
			// The client reads between the connection's establishment and its end.
			waitForCloseAndDisconnect(ctx, conn, stderr)
		}
		return code(err)
	})
}

func readClient(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		return usageErr(stderr, "02-read-to-volatile", "client", "<server_address> <port>")
	}
	u, p, err := clientPeer(ctx, args)
	defer u.run()
	if err != nil {
		return code(err)
	}
	dst, err := u.alloc(kilobyte)
	if err != nil {
		return -1
	}
	dstMR, conn, err := u.registerAndConnect(ctx, p, dst.b, rpma.UsageReadDst, stderr)
	if err != nil {
		return code(err)
	}
	pdata := conn.PrivateData()
	if len(pdata) == 0 {
		fmt.Fprintf(stderr, "The server has not provided a remote memory region. (the connection's private data is empty): Success")
		return 0
	}
	data, err := decodeCommonData(pdata)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return -1
	}
	src, err := data.remoteMR()
	if err != nil {
		return code(err)
	}
	if src.Len() > kilobyte {
		fmt.Fprintf(stderr, "Remote memory region size too big to reading to the sink buffer of the assumed size (%d > %d)\n", src.Len(), kilobyte)
		return 0
	}
	if err := conn.Read(dstMR, 0, src, 0, int(src.Len()), rpma.Op{Flags: rpma.CompletionAlways}); err != nil {
		return code(err)
	}
	if err := readDone(ctx, conn, stderr); err != nil {
		return code(err)
	}
	fmt.Fprintf(stdout, "Read a message: %s\n", cstr(dst.b))
	return 0
}
