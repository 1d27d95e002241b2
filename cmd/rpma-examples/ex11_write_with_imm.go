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
	p, err := newPeer(ctx, args[0], args[1], rpma.ContextRemote)
	if err != nil {
		return code(err)
	}
	defer p.close()
	src, err := p.RegisterMR(buf.b, rpma.UsageWriteSrc)
	if err != nil {
		return code(err)
	}
	defer src.Close()
	conn, err := p.clientConnect(ctx, nil, nil, stderr)
	if err != nil {
		return code(err)
	}
	defer disconnectAndWaitForClose(ctx, conn, stderr)
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
	if err := conn.WriteWithImm(dst, int(data.DataOffset), src, 0, kilobyte, rpma.CompletionAlways, imm, 0); err != nil {
		return code(err)
	}
	wc, err := getOneWC(ctx, conn.CQ())
	if err != nil {
		return code(err)
	}
	if !checkWC(wc, cq.OpRDMAWrite, stderr) {
		return -1
	}
	return 0
}

func writeImmServer(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		return usageErr(stderr, "11-write-with-imm", "server", "<server_address> <port>")
	}
	dst, err := alloc(kilobyte)
	if err != nil {
		return -1
	}
	defer dst.free()
	recv, err := alloc(1)
	if err != nil {
		return -1
	}
	defer recv.free()
	p, err := newPeer(ctx, args[0], args[1], rpma.ContextLocal)
	if err != nil {
		return code(err)
	}
	defer p.close()
	dstMR, err := p.RegisterMR(dst.b, rpma.UsageWriteDst)
	if err != nil {
		return code(err)
	}
	defer dstMR.Close()
	recvMR, err := p.RegisterMR(recv.b, rpma.UsageRecv)
	if err != nil {
		return code(err)
	}
	defer recvMR.Close()
	data, err := newCommonData(0, dstMR, nil)
	if err != nil {
		return -1
	}
	ep, err := p.listen(ctx)
	if err != nil {
		return code(err)
	}
	defer ep.Shutdown()
	req, err := nextConnRequest(ctx, ep, nil)
	if err != nil {
		return code(err)
	}
	if err := req.Recv(recvMR, 0, 1, 0); err != nil {
		req.Delete()
		return code(err)
	}
	conn, err := establish(ctx, req, data.encode(), stderr)
	if err != nil {
		return code(err)
	}
	defer waitForCloseAndDisconnect(ctx, conn, stderr)
	wc, err := getOneWC(ctx, conn.CQ())
	if err != nil {
		return code(err)
	}
	if !checkImmWC(wc, cq.OpRecvRDMAWithImm, stderr, "Received an unexpected completion flag (no IBV_WC_WITH_IMM)\n") {
		return -1
	}
	expImm := binary.NativeEndian.Uint32(dst.b)
	if wc.Imm != expImm {
		fmt.Fprintf(stderr, "Received unexpected immediate data (%d != %d)\n", wc.Imm, expImm)
		return -1
	}
	fmt.Fprintf(stdout, "The value '%d' was written together with immediate data '%d'\n", expImm, wc.Imm)
	return 0
}
