package main

// 12-receive-completion-queue and 12scch-receive-completion-queue: 08's
// ping-pong with receive completions on the connection's separate receive
// CQ; in the scch variant both CQs share one completion channel.

import (
	"context"
	"fmt"
	"io"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/rpma"
)

const rcqSize = 10 // RCQ_SIZE

func rcqConfig(scch bool) *rpma.ConnConfig {
	cfg := rpma.NewConnConfig()
	cfg.RCQSize = rcqSize
	cfg.SharedCompChannel = scch
	return cfg
}

// rcqValidate is get_wc_and_validate on the CQ that gets op's
// completions, or wait_and_validate_completion in the scch variant.
func rcqValidate(ctx context.Context, conn *rpma.Conn, scch bool, op cq.Opcode, stderr io.Writer) error {
	if scch {
		return waitAndValidateCompletion(ctx, conn, op, stderr)
	}
	q, what := conn.CQ(), "rpma_send()"
	if op == cq.OpRecv {
		q, what = conn.RCQ(), "rpma_recv()"
	}
	wc, err := getOneWC(ctx, q)
	if err != nil {
		return err
	}
	return validateOpcode(wc, op, what, stderr)
}

func rcqClient(scch bool) mainFunc {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		if len(args) < 4 {
			return usageErr(stderr, "12-receive-completion-queue", "client", "<server_address> <port> <start_value> <rounds> [<sleep>]")
		}
		counter, rounds, sleep, err := pingPongArgs(args, stderr)
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
		conn, err := p.clientConnect(ctx, rcqConfig(scch), nil, stderr)
		if err != nil {
			return code(err)
		}
		for rounds--; rounds != 0; rounds-- {
			if err = conn.Recv(m.recvMR, 0, msgSize, recvID); err != nil {
				break
			}
			fmt.Fprintf(stdout, "CLIENT: Value sent: %d\n", counter)
			m.setSend(0, counter)
			if err = conn.Send(m.sendMR, 0, msgSize, rpma.CompletionAlways, 0); err != nil {
				break
			}
			if err = rcqValidate(ctx, conn, scch, cq.OpSend, stderr); err != nil {
				break
			}
			if err = rcqValidate(ctx, conn, scch, cq.OpRecv, stderr); err != nil {
				break
			}
			counter = m.received(0)
			fmt.Fprintf(stdout, "CLIENT: Value received: %d\n", counter)
			sleepUsec(ctx, sleep)
		}
		m.setSend(0, iAmDone)
		serr := conn.Send(m.sendMR, 0, msgSize, rpma.CompletionOnError, 0)
		if errorsJoin(err, serr, disconnectAndWaitForClose(ctx, conn, stderr)) != nil {
			return -1
		}
		return 0
	}
}

func rcqServer(scch bool) mainFunc {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		if len(args) < 2 {
			return usageErr(stderr, "12-receive-completion-queue", "server", "<server_address> <port>")
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
		req, err := nextConnRequest(ctx, ep, rcqConfig(scch))
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
		for {
			if err = rcqValidate(ctx, conn, scch, cq.OpRecv, stderr); err != nil {
				break
			}
			v := m.received(0)
			if v == iAmDone {
				break
			}
			fmt.Fprintf(stdout, "SERVER: Value received: %d\n", v)
			m.setSend(0, v+1)
			if err = conn.Recv(m.recvMR, 0, msgSize, recvID); err != nil {
				break
			}
			fmt.Fprintf(stdout, "SERVER: Value sent: %d\n", v+1)
			if err = conn.Send(m.sendMR, 0, msgSize, rpma.CompletionAlways, 0); err != nil {
				break
			}
			if err = rcqValidate(ctx, conn, scch, cq.OpSend, stderr); err != nil {
				break
			}
		}
		if errorsJoin(err, disconnectAndWaitForClose(ctx, conn, stderr)) != nil {
			return -1
		}
		return 0
	}
}
