package main

// The ping-pong steps that 08, 08srq, 12 and 13 share: the client's
// rounds and the one-client server's answers.

import (
	"context"
	"fmt"
	"io"

	"github.com/purerdma/purerdma/rpma"
)

// pingPongClientSpec is how one example's client differs from another's.
type pingPongClientSpec struct {
	cfg            *rpma.ConnConfig
	sent, received string // the formats of the lines printed for each value
	// doWhile counts rounds as 08srq's do { } while (--rounds); otherwise
	// as 08's and 12's for (--rounds; rounds; --rounds).
	doWhile bool
	// wait waits for the completions of a round's send and receive.
	wait func(ctx context.Context, conn *rpma.Conn, stderr io.Writer) error
	// end is how the client ends the connection.
	end func(ctx context.Context, conn *rpma.Conn, stderr io.Writer) error
}

// run is the client of <addr> <port> <seed> <rounds> [<sleep>]: each round
// sends the counter and takes the server's answer as the next one; then
// it sends I_M_DONE.
func (c pingPongClientSpec) run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cntr, rounds, sleep, err := pingPongArgs(args, stderr)
	if err != nil {
		return -1
	}
	u, p, err := clientPeer(ctx, args)
	defer u.run()
	if err != nil {
		return code(err)
	}
	m, err := u.msgBufs(p, 1)
	if err != nil {
		return code(err)
	}
	conn, err := p.clientConnect(ctx, c.cfg, nil, stderr)
	if err != nil {
		return code(err)
	}
	round := func() error {
		if err := conn.Recv(m.recvMR, 0, msgSize, recvID); err != nil {
			return err
		}
		fmt.Fprintf(stdout, c.sent, cntr)
		m.setSend(0, cntr)
		if err := conn.Send(m.sendMR, 0, msgSize, rpma.Op{Flags: rpma.CompletionAlways}); err != nil {
			return err
		}
		if err := c.wait(ctx, conn, stderr); err != nil {
			return err
		}
		cntr = m.received(0)
		fmt.Fprintf(stdout, c.received, cntr)
		sleepUsec(ctx, sleep)
		return nil
	}
	if c.doWhile {
		for err = round(); err == nil; err = round() {
			if rounds--; rounds == 0 {
				break
			}
		}
	} else {
		for rounds--; rounds != 0 && err == nil; rounds-- {
			err = round()
		}
	}
	m.setSend(0, iAmDone)
	serr := conn.Send(m.sendMR, 0, msgSize, rpma.Op{Flags: rpma.CompletionOnError})
	if errorsJoin(err, serr, c.end(ctx, conn, stderr)) != nil {
		return -1
	}
	return 0
}

// waitPingPong is the wait of 08's and 08srq's clients: both completions
// on the connection's CQ.
func waitPingPong(ctx context.Context, conn *rpma.Conn, stderr io.Writer) error {
	pp := pingPong{recvID: recvID}
	return pp.waitAndProcess(ctx, conn.CQ(), stderr)
}

// servePingPong is the server of 08 and 12: it answers one client's
// values, each incremented, until I_M_DONE, lines prefixed with prefix.
// waitRecv waits for a value; afterSend follows the answer's send.
func servePingPong(ctx context.Context, args []string, cfg *rpma.ConnConfig, prefix string, stdout, stderr io.Writer,
	waitRecv, afterSend func(conn *rpma.Conn) error) int {
	var u undo
	defer u.run()
	p, ep, err := u.listenAt(ctx, args, nil)
	if err != nil {
		return code(err)
	}
	m, err := u.msgBufs(p, 1)
	if err != nil {
		return code(err)
	}
	conn, err := acceptWithRecv(ctx, ep, cfg, m.recvMR, msgSize, recvID, nil, stderr)
	if err != nil {
		return code(err)
	}
	for {
		if err = waitRecv(conn); err != nil {
			break
		}
		v := m.received(0)
		if v == iAmDone {
			break
		}
		fmt.Fprintf(stdout, prefix+"Value received: %d\n", v)
		m.setSend(0, v+1)
		if err = conn.Recv(m.recvMR, 0, msgSize, recvID); err != nil {
			break
		}
		fmt.Fprintf(stdout, prefix+"Value sent: %d\n", v+1)
		if err = conn.Send(m.sendMR, 0, msgSize, rpma.Op{Flags: rpma.CompletionAlways}); err != nil {
			break
		}
		if err = afterSend(conn); err != nil {
			break
		}
	}
	if errorsJoin(err, disconnectAndWaitForClose(ctx, conn, stderr)) != nil {
		return -1
	}
	return 0
}

// srqListen is how the servers of 08srq and 13 start: the peer, a shared
// receive queue made with srqCfg and set as cfg's, the listening endpoint
// and the buffers of n messages.
func (u *undo) srqListen(ctx context.Context, args []string, srqCfg *rpma.SRQConfig, cfg *rpma.ConnConfig, n int) (*rpma.SRQ, *rpma.Endpoint, *msgBufs, error) {
	var srq *rpma.SRQ
	p, ep, err := u.listenAt(ctx, args, func(p *peer) error {
		var err error
		if srq, err = p.NewSRQ(srqCfg); err == nil {
			u.push(func() { srq.Close() })
			cfg.SRQ = srq
		}
		return err
	})
	if err != nil {
		return nil, nil, nil, err
	}
	m, err := u.msgBufs(p, n)
	return srq, ep, m, err
}
