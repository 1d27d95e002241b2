package main

// 13-messages-ping-pong-with-srq: the server accepts clients (08srq's
// client with its PID in its lines) until none comes for <timeout>
// seconds, then answers every client's messages, all received through one
// shared receive queue, until each has sent I_M_DONE.

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/rpma"
)

const srqTimeout5s = 5 * time.Second // TIMEOUT_5S

// atoi is C's atoi: leading digits, 0 when there are none.
func atoi(s string) int {
	s = strings.TrimLeft(s, " \t")
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, _ := strconv.Atoi(s[:i])
	return n
}

// srqConn is struct connect_context.
type srqConn struct {
	conn  *rpma.Conn
	qpNum uint32
}

func multiSRQServer(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		return usageErr(stderr, "13-messages-ping-pong-with-srq", "server", "<server_address> <port> [<timeout>]")
	}
	timeout := srqTimeout5s
	if len(args) >= 3 {
		t := atoi(args[2])
		if t <= 0 {
			fmt.Fprintf(stderr, "<timeout> should be a positive number of seconds (%s given)\n", args[2])
			return -1
		}
		timeout = time.Duration(t) * time.Second
	}
	cfg := rpma.DefaultConnConfig()
	var u undo
	defer u.run()
	srq, ep, m, err := u.srqListen(ctx, args, nil, &cfg, clientMax)
	if err != nil {
		return code(err)
	}
	var conns []srqConn
	defer func() {
		for _, c := range conns {
			c.conn.Disconnect()
			c.conn.Close()
		}
	}()
	// The epoll_wait loop on the endpoint's fd.
	for {
		if len(conns) == clientMax {
			fmt.Fprintf(stderr, "No free slot for a new connection request.\n")
			return -1
		}
		wctx, cancel := context.WithTimeout(ctx, timeout)
		req, err := nextConnRequest(wctx, ep, &cfg)
		timedOut := wctx.Err() != nil && ctx.Err() == nil
		cancel()
		if err != nil && timedOut {
			break
		}
		if err != nil {
			return -1
		}
		i := len(conns)
		if err := srq.Recv(m.recvMR, i*msgSize, msgSize, uint64(i)); err != nil {
			req.Close()
			return -1
		}
		conn, err := establish(ctx, req, nil, stderr)
		if err != nil {
			return -1
		}
		conns = append(conns, srqConn{conn, conn.QPNum()})
		fmt.Fprintf(stdout, "The client #%d has been connected.\n", len(conns))
	}
	fmt.Fprintf(stdout, "Server ended listening.\n")
	findQP := func(qp uint32) int {
		if len(conns) == 1 {
			return 0
		}
		for i, c := range conns {
			if c.qpNum == qp {
				return i
			}
		}
		fmt.Fprintf(stderr, "Unable to find the connection [qp#%d]\n", qp)
		return -1
	}
	total := 0
	wc := make([]cq.WC, clientMax)
	for err == nil && total < len(conns) {
		var n int
		if n, err = getWC(ctx, srq.RCQ(), wc[:len(conns)]); err != nil {
			break
		}
		for _, w := range wc[:n] {
			if w.Status != cq.Success {
				fmt.Fprintf(stderr, "rpma_srq_recv() failed: %s\n", w.Status)
				err = errUnexpected
				break
			}
			if w.Opcode != cq.OpRecv {
				fmt.Fprintf(stderr, "received unexpected wc.opcode value (%d != %d)\n", w.Opcode, cq.OpRecv)
				err = errUnexpected
				break
			}
			index := findQP(w.QPNum)
			if index == -1 {
				err = errUnexpected
				break
			}
			off := int(w.ID)
			v := m.received(off)
			if v == iAmDone {
				total++
				continue
			}
			fmt.Fprintf(stdout, "[server] value received: %d from the connection [qp#%d]\n", v, conns[index].qpNum)
			if err = srq.Recv(m.recvMR, off*msgSize, msgSize, uint64(off)); err != nil {
				break
			}
			// The answer goes from the connection's own send slot, where
			// the C example uses the receive's slot: a shared queue's
			// receives take any client's message, so the next message
			// in that slot, another client's, rewrote the answer before
			// Linux 6.12's rxe, which sends from a workqueue, had sent it
			// (a hand run against librpma's C client got another
			// client's value). A connection's slot is free again: its
			// client sends its next value only after this answer came.
			m.setSend(index, v+1)
			fmt.Fprintf(stdout, "[server] value sent: %d from the connection [qp#%d]\n", v+1, conns[index].qpNum)
			if err = conns[index].conn.Send(m.sendMR, index*msgSize, msgSize, rpma.Op{Flags: rpma.CompletionOnError}); err != nil {
				break
			}
		}
	}
	if total != len(conns) {
		fmt.Fprintf(stderr, "Unable to receive data from all connections\n")
		return -1
	}
	return 0
}
