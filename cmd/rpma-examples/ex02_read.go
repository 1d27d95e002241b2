package main

// 02-read-to-volatile: the client reads the server's greeting with an RDMA
// read into volatile memory.

import (
	"context"
	"fmt"
	"io"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/rpma"
)

const readHelloStr = "Hello client!"

func readServer(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		return usageErr(stderr, "02-read-to-volatile", "server", "<server_address> <port>")
	}
	p, err := newPeer(ctx, args[0], args[1], rpma.ContextLocal)
	if err != nil {
		return code(err)
	}
	defer p.close()
	ep, err := p.listen(ctx)
	if err != nil {
		return code(err)
	}
	defer ep.Shutdown()
	buf, err := alloc(len(readHelloStr) + 1)
	if err != nil {
		return -1
	}
	defer buf.free()
	copy(buf.b, readHelloStr)
	m, err := p.RegisterMR(buf.b, rpma.UsageReadSrc)
	if err != nil {
		return code(err)
	}
	defer m.Close()
	data, err := newCommonData(0, m, nil)
	if err != nil {
		return -1
	}
	conn, err := serverAccept(ctx, ep, nil, data.encode(), stderr)
	if err != nil {
		return code(err)
	}
	// The client reads between the connection's establishment and its end.
	waitForCloseAndDisconnect(ctx, conn, stderr)
	return 0
}

func readClient(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		return usageErr(stderr, "02-read-to-volatile", "client", "<server_address> <port>")
	}
	p, err := newPeer(ctx, args[0], args[1], rpma.ContextRemote)
	if err != nil {
		return code(err)
	}
	defer p.close()
	dst, err := alloc(kilobyte)
	if err != nil {
		return -1
	}
	defer dst.free()
	dstMR, err := p.RegisterMR(dst.b, rpma.UsageReadDst)
	if err != nil {
		return code(err)
	}
	defer dstMR.Close()
	conn, err := p.clientConnect(ctx, nil, nil, stderr)
	if err != nil {
		return code(err)
	}
	defer disconnectAndWaitForClose(ctx, conn, stderr)
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
	if err := conn.Read(dstMR, 0, src, 0, int(src.Len()), rpma.CompletionAlways, 0); err != nil {
		return code(err)
	}
	wc, err := getOneWC(ctx, conn.CQ())
	if err != nil {
		return code(err)
	}
	if wc.Status != cq.Success {
		fmt.Fprintf(stderr, "rpma_read() failed: %s\n", wc.Status)
		return -1
	}
	if wc.Opcode != cq.OpRDMARead {
		fmt.Fprintf(stderr, "unexpected wc.opcode value (%d != %d)\n", wc.Opcode, cq.OpRDMARead)
		return -1
	}
	fmt.Fprintf(stdout, "Read a message: %s\n", cstr(dst.b))
	return 0
}
