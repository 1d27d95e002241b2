package main

// 08-messages-ping-pong: the client sends a counter, the server sends it
// back incremented, for the given number of rounds; I_M_DONE ends it.

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/purerdma/purerdma/rpma"
)

// msgBufs are the one-message receive and send buffers of a ping-pong
// side, each registered for its use. n is the number of messages each
// holds.
type msgBufs struct {
	recv, send     *buffer
	recvMR, sendMR *rpma.MR
}

func newMsgBufs(p *peer, n int) (*msgBufs, error) {
	m := &msgBufs{}
	var err error
	if m.recv, err = alloc(n * msgSize); err == nil {
		if m.send, err = alloc(n * msgSize); err == nil {
			if m.recvMR, err = p.RegisterMR(m.recv.b, rpma.UsageRecv); err == nil {
				m.sendMR, err = p.RegisterMR(m.send.b, rpma.UsageSend)
			}
		}
	}
	if err != nil {
		m.close()
		return nil, err
	}
	return m, nil
}

func (m *msgBufs) close() {
	for _, r := range []*rpma.MR{m.sendMR, m.recvMR} {
		if r != nil {
			r.Close()
		}
	}
	m.send.free()
	m.recv.free()
}

func (m *msgBufs) received(i int) uint64 { return binary.NativeEndian.Uint64(m.recv.b[i*msgSize:]) }

func (m *msgBufs) setSend(i int, v uint64) { binary.NativeEndian.PutUint64(m.send.b[i*msgSize:], v) }

// pingPongArgs parses <seed> <rounds> [<sleep>].
func pingPongArgs(args []string, stderr io.Writer) (cntr, rounds, sleep uint64, err error) {
	if cntr, err = strtoul(args[2]); err == nil {
		if rounds, err = strtoul(args[3]); err == nil && len(args) >= 5 {
			sleep, err = strtoul(args[4])
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
	}
	return
}

func pingPongClient(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 4 {
		return usageErr(stderr, "08-messages-ping-pong", "client", "<server_address> <port> <seed> <rounds> [<sleep>]")
	}
	return pingPongClientSpec{
		sent: "Value sent: %d\n", received: "Value received: %d\n",
		wait: waitPingPong, end: disconnectAndWaitForClose,
	}.run(ctx, args, stdout, stderr)
}

func pingPongServer(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		return usageErr(stderr, "08-messages-ping-pong", "server", "<server_address> <port>")
	}
	pp := pingPong{recvID: recvID, sendCmpl: true}
	return servePingPong(ctx, args, nil, "", stdout, stderr,
		func(conn *rpma.Conn) error { return pp.waitAndProcess(ctx, conn.CQ(), stderr) },
		func(*rpma.Conn) error {
			pp = pingPong{recvID: recvID}
			return nil
		})
}
