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

// immSent waits for the completion of the client's op and checks it.
func immSent(ctx context.Context, conn *rpma.Conn, op cq.Opcode, stderr io.Writer) int {
	wc, err := getOneWC(ctx, conn.CQ())
	if err != nil {
		return code(err)
	}
	if !checkWC(wc, op, stderr) {
		return -1
	}
	return 0
}

// immServer is how 10's and 11's servers start: register registers what
// the server needs on the peer before it listens, then the server accepts
// its one client with a receive of n bytes of the MR register returns
// posted and the private data it returns. The server waits for the
// client to disconnect on run.
func (u *undo) immServer(ctx context.Context, args []string, register func(p *peer) (*rpma.MR, []byte, error), n int, stderr io.Writer) (*rpma.Conn, error) {
	var recvMR *rpma.MR
	var pdata []byte
	_, ep, err := u.listenAt(ctx, args, func(p *peer) (err error) {
		recvMR, pdata, err = register(p)
		return err
	})
	if err != nil {
		return nil, err
	}
	conn, err := acceptWithRecv(ctx, ep, nil, recvMR, n, 0, pdata, stderr)
	if err == nil {
		u.push(func() { waitForCloseAndDisconnect(ctx, conn, stderr) })
	}
	return conn, err
}

// immReceived waits for the server's receive completion of type op, which
// must carry the immediate data expect returns.
func immReceived(ctx context.Context, conn *rpma.Conn, op cq.Opcode, noImm string, stderr io.Writer, expect func() uint32) (cq.WC, int) {
	wc, err := getOneWC(ctx, conn.CQ())
	if err != nil {
		return wc, code(err)
	}
	if !checkImmWC(wc, op, stderr, noImm) {
		return wc, -1
	}
	if expImm := expect(); wc.Imm != expImm {
		fmt.Fprintf(stderr, "Received unexpected immediate data (%d != %d)\n", wc.Imm, expImm)
		return wc, -1
	}
	return wc, 0
}

func sendImmClient(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 3 {
		return usageErr(stderr, "10-send-with-imm", "client", "<server_address> <port> <imm> [word]")
	}
	imm, ok := parseImm(args[2], stderr)
	if !ok {
		return -1
	}
	u, p, err := clientPeer(ctx, args)
	defer u.run()
	if err != nil {
		return code(err)
	}
	var sendMR *rpma.MR
	n := 0
	if len(args) >= 4 {
		buf, err := u.alloc(kilobyte)
		if err != nil {
			return -1
		}
		if sendMR, err = u.register(p, buf.b, rpma.UsageSend); err != nil {
			return code(err)
		}
		copy(buf.b[:kilobyte-1], args[3])
		n = kilobyte
	}
	pdata := binary.NativeEndian.AppendUint32(nil, imm)
	conn, err := u.connect(ctx, p, nil, pdata, stderr)
	if err != nil {
		return code(err)
	}
	if n > 0 {
		fmt.Fprintf(stdout, "Sending value '%s' with immediate data '%d'\n", args[3], imm)
	} else {
		fmt.Fprintf(stdout, "Sending immediate data '%d'\n", imm)
	}
	if err := conn.SendWithImm(sendMR, 0, n, imm, rpma.Op{Flags: rpma.CompletionAlways}); err != nil {
		return code(err)
	}
	return immSent(ctx, conn, cq.OpSend, stderr)
}

func sendImmServer(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		return usageErr(stderr, "10-send-with-imm", "server", "<server_address> <port>")
	}
	var u undo
	defer u.run()
	buf, err := u.alloc(kilobyte)
	if err != nil {
		return -1
	}
	conn, err := u.immServer(ctx, args, func(p *peer) (*rpma.MR, []byte, error) {
		recvMR, err := u.register(p, buf.b, rpma.UsageRecv)
		return recvMR, nil, err
	}, kilobyte, stderr)
	if err != nil {
		return code(err)
	}
	pdata := conn.PrivateData()
	if len(pdata) < 4 {
		fmt.Fprintf(stderr, "Received connection's private data is too small (%d < %d)\n", len(pdata), 4)
		return -1
	}
	expImm := binary.NativeEndian.Uint32(pdata)
	wc, ret := immReceived(ctx, conn, cq.OpRecv, "Received unexpected completion flag (no IBV_WC_WITH_IMM)\n", stderr, func() uint32 { return expImm })
	if ret != 0 {
		return ret
	}
	if wc.ByteLen == 0 {
		buf.b[0] = 0
	}
	fmt.Fprintf(stdout, "Received value '%s' with immediate data '%d'\n", cstr(buf.b), wc.Imm)
	return 0
}
