package main

// 10-send-with-imm: the client sends immediate data, and optionally a
// word, which the server checks against the immediate data the client
// announced in its private data.

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/rpma"
)

// parseImm reads <imm> as the C clients do.
func parseImm(s string, stderr io.Writer) (uint32, bool) {
	imm, err := strtoul(s)
	if err != nil {
		fmt.Fprintf(stderr, "strtoul() overflow\n")
		return 0, false
	}
	if imm > math.MaxUint32 {
		fmt.Fprintf(stderr, "The provided immediate data is too big (%d > %d)\n", imm, uint32(math.MaxUint32))
		return 0, false
	}
	return uint32(imm), true
}

// checkWC checks a completion's status and opcode.
func checkWC(wc cq.WC, op cq.Opcode, stderr io.Writer) bool {
	switch {
	case wc.Status != cq.Success:
		fmt.Fprintf(stderr, "Received unexpected completion: %s\n", wc.Status)
	case wc.Opcode != op:
		fmt.Fprintf(stderr, "Received unexpected type of operation (%d != %d)\n", wc.Opcode, op)
	default:
		return true
	}
	return false
}

// checkImmWC checks a receive completion that must carry immediate data.
func checkImmWC(wc cq.WC, op cq.Opcode, stderr io.Writer, noImm string) bool {
	if !checkWC(wc, op, stderr) {
		return false
	}
	if wc.Flags&cq.WithImm == 0 {
		fmt.Fprint(stderr, noImm)
		return false
	}
	return true
}

func sendImmClient(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 3 {
		return usageErr(stderr, "10-send-with-imm", "client", "<server_address> <port> <imm> [word]")
	}
	imm, ok := parseImm(args[2], stderr)
	if !ok {
		return -1
	}
	p, err := newPeer(ctx, args[0], args[1], rpma.ContextRemote)
	if err != nil {
		return code(err)
	}
	defer p.close()
	var sendMR *rpma.MR
	n := 0
	if len(args) >= 4 {
		buf, err := alloc(kilobyte)
		if err != nil {
			return -1
		}
		defer buf.free()
		if sendMR, err = p.RegisterMR(buf.b, rpma.UsageSend); err != nil {
			return code(err)
		}
		defer sendMR.Close()
		copy(buf.b[:kilobyte-1], args[3])
		n = kilobyte
	}
	pdata := binary.NativeEndian.AppendUint32(nil, imm)
	conn, err := p.clientConnect(ctx, nil, pdata, stderr)
	if err != nil {
		return code(err)
	}
	defer disconnectAndWaitForClose(ctx, conn, stderr)
	if n > 0 {
		fmt.Fprintf(stdout, "Sending value '%s' with immediate data '%d'\n", args[3], imm)
	} else {
		fmt.Fprintf(stdout, "Sending immediate data '%d'\n", imm)
	}
	if err := conn.SendWithImm(sendMR, 0, n, rpma.CompletionAlways, imm, 0); err != nil {
		return code(err)
	}
	wc, err := getOneWC(ctx, conn.CQ())
	if err != nil {
		return code(err)
	}
	if !checkWC(wc, cq.OpSend, stderr) {
		return -1
	}
	return 0
}

func sendImmServer(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		return usageErr(stderr, "10-send-with-imm", "server", "<server_address> <port>")
	}
	buf, err := alloc(kilobyte)
	if err != nil {
		return -1
	}
	defer buf.free()
	p, err := newPeer(ctx, args[0], args[1], rpma.ContextLocal)
	if err != nil {
		return code(err)
	}
	defer p.close()
	recvMR, err := p.RegisterMR(buf.b, rpma.UsageRecv)
	if err != nil {
		return code(err)
	}
	defer recvMR.Close()
	ep, err := p.listen(ctx)
	if err != nil {
		return code(err)
	}
	defer ep.Shutdown()
	req, err := nextConnRequest(ctx, ep, nil)
	if err != nil {
		return code(err)
	}
	if err := req.Recv(recvMR, 0, kilobyte, 0); err != nil {
		req.Delete()
		return code(err)
	}
	conn, err := establish(ctx, req, nil, stderr)
	if err != nil {
		return code(err)
	}
	defer waitForCloseAndDisconnect(ctx, conn, stderr)
	pdata := conn.PrivateData()
	if len(pdata) < 4 {
		fmt.Fprintf(stderr, "Received connection's private data is too small (%d < %d)\n", len(pdata), 4)
		return -1
	}
	expImm := binary.NativeEndian.Uint32(pdata)
	wc, err := getOneWC(ctx, conn.CQ())
	if err != nil {
		return code(err)
	}
	if !checkImmWC(wc, cq.OpRecv, stderr, "Received unexpected completion flag (no IBV_WC_WITH_IMM)\n") {
		return -1
	}
	if wc.Imm != expImm {
		fmt.Fprintf(stderr, "Received unexpected immediate data (%d != %d)\n", wc.Imm, expImm)
		return -1
	}
	if wc.ByteLen == 0 {
		buf.b[0] = 0
	}
	fmt.Fprintf(stdout, "Received value '%s' with immediate data '%d'\n", cstr(buf.b), wc.Imm)
	return 0
}
