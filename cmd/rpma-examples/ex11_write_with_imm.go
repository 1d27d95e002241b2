package main

// 11-write-with-imm: the client writes its immediate data into the
// server's memory with an RDMA write with immediate; the server compares
// the two.

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/rpma"
)

func writeImmClient(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 3 {
		return usageErr(stderr, "11-write-with-imm", "client", "<server_address> <port> <imm>")
	}
	imm, ok := parseImm(args[2], stderr)
	if !ok {
		return -1
	}
	buf, err := alloc(kilobyte)
	if err != nil {
		return -1
	}
	defer buf.free()
	u, p, err := clientPeer(ctx, args)
	defer u.run()
	if err != nil {
		return code(err)
	}
	src, conn, err := u.registerAndConnect(ctx, p, buf.b, rpma.UsageWriteSrc, stderr)
	if err != nil {
		return code(err)
	}
	pdata := conn.PrivateData()
	data, err := decodeCommonData(pdata)
	if err != nil {
		fmt.Fprintf(stderr, "Received connection's private data is too small (%d < %d)\n", len(pdata), commonDataSize)
		return -1
	}
	dst, err := data.remoteMR()
	if err != nil {
		return code(err)
	}
	binary.NativeEndian.PutUint32(buf.b, imm)
	fmt.Fprintf(stdout, "Writing value '%d' with immediate data '%d'\n", imm, imm)
	if err := conn.WriteWithImm(dst, int(data.DataOffset), src, 0, kilobyte, imm, rpma.Op{Flags: rpma.CompletionAlways}); err != nil {
		return code(err)
	}
	return immSent(ctx, conn, cq.OpRDMAWrite, stderr)
}

func writeImmServer(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		return usageErr(stderr, "11-write-with-imm", "server", "<server_address> <port>")
	}
	var u undo
	defer u.run()
	dst, err := u.alloc(kilobyte)
	if err != nil {
		return -1
	}
	recv, err := u.alloc(1)
	if err != nil {
		return -1
	}
	conn, err := u.immServer(ctx, args, func(p *peer) (*rpma.MR, []byte, error) {
		pdata, err := u.offer(p, dst.b, rpma.UsageWriteDst, 0, nil)
		if err != nil {
			return nil, nil, err
		}
		recvMR, err := u.register(p, recv.b, rpma.UsageRecv)
		return recvMR, pdata, err
	}, 1, stderr)
	if err != nil {
		return code(err)
	}
	wc, ret := immReceived(ctx, conn, cq.OpRecvRDMAWithImm, "Received an unexpected completion flag (no IBV_WC_WITH_IMM)\n", stderr,
		func() uint32 { return binary.NativeEndian.Uint32(dst.b) })
	if ret != 0 {
		return ret
	}
	// The value written equals the immediate data, as immReceived checked.
	fmt.Fprintf(stdout, "The value '%d' was written together with immediate data '%d'\n", wc.Imm, wc.Imm)
	return 0
}
