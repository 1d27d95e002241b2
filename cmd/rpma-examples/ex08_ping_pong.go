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
	cntr, rounds, sleep, err := pingPongArgs(args, stderr)
	if err != nil {
		return -1
	}
	p, err := newPeer(ctx, args[0], args[1], rpma.ContextRemote)
	if err != nil {
		return code(err)
	}
	defer p.close()
	m, err := newMsgBufs(p, 1)
	if err != nil {
		return code(err)
	}
	defer m.close()
	conn, err := p.clientConnect(ctx, nil, nil, stderr)
	if err != nil {
		return code(err)
	}
	for rounds--; rounds != 0; rounds-- {
		if err = conn.Recv(m.recvMR, 0, msgSize, recvID); err != nil {
			break
		}
		fmt.Fprintf(stdout, "Value sent: %d\n", cntr)
		m.setSend(0, cntr)
		if err = conn.Send(m.sendMR, 0, msgSize, rpma.CompletionAlways, 0); err != nil {
			break
		}
		pp := pingPong{recvID: recvID}
		if err = pp.waitAndProcess(ctx, conn.CQ(), stderr); err != nil {
			break
		}
		cntr = m.received(0)
		fmt.Fprintf(stdout, "Value received: %d\n", cntr)
		sleepUsec(ctx, sleep)
	}
	m.setSend(0, iAmDone)
	serr := conn.Send(m.sendMR, 0, msgSize, rpma.CompletionOnError, 0)
	if err = errorsJoin(err, serr, disconnectAndWaitForClose(ctx, conn, stderr)); err != nil {
		return -1
	}
	return 0
}

func pingPongServer(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		return usageErr(stderr, "08-messages-ping-pong", "server", "<server_address> <port>")
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
	m, err := newMsgBufs(p, 1)
	if err != nil {
		return code(err)
	}
	defer m.close()
	req, err := nextConnRequest(ctx, ep, nil)
	if err != nil {
		return code(err)
	}
	if err := req.Recv(m.recvMR, 0, msgSize, recvID); err != nil {
		req.Delete()
		return code(err)
	}
	conn, err := establish(ctx, req, nil, stderr)
	if err != nil {
		return code(err)
	}
	pp := pingPong{recvID: recvID, sendCmpl: true}
	for {
		if err = pp.waitAndProcess(ctx, conn.CQ(), stderr); err != nil {
			break
		}
		v := m.received(0)
		if v == iAmDone {
			break
		}
		fmt.Fprintf(stdout, "Value received: %d\n", v)
		m.setSend(0, v+1)
		if err = conn.Recv(m.recvMR, 0, msgSize, recvID); err != nil {
			break
		}
		fmt.Fprintf(stdout, "Value sent: %d\n", v+1)
		if err = conn.Send(m.sendMR, 0, msgSize, rpma.CompletionAlways, 0); err != nil {
			break
		}
		pp = pingPong{recvID: recvID}
	}
	if err = errorsJoin(err, disconnectAndWaitForClose(ctx, conn, stderr)); err != nil {
		return -1
	}
	return 0
}
