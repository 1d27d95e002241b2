package main

// 12-receive-completion-queue and 12scch-receive-completion-queue: 08's
// ping-pong with receive completions on the connection's separate receive
// CQ; in the scch variant both CQs share one completion channel.

import (
	"context"
	"io"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/rpma"
)

const rcqSize = 10 // RCQ_SIZE

func rcqConfig(scch bool) *rpma.ConnConfig {
	cfg := rpma.DefaultConnConfig()
	cfg.RCQSize = rcqSize
	cfg.SharedCompChannel = scch
	return &cfg
}

// rcqValidate is get_wc_and_validate on the CQ that gets op's
// completions (sends on the CQ, receives on the RCQ), or
// wait_and_validate_completion in the scch variant.
func rcqValidate(ctx context.Context, conn *rpma.Conn, scch bool, op cq.Opcode, stderr io.Writer) error {
	q, what := conn.CQ(), "rpma_send()"
	if op == cq.OpRecv {
		q, what = conn.RCQ(), "rpma_recv()"
	}
	var wc cq.WC
	var err error
	if scch {
		wc, err = connWaitOneWC(ctx, conn, q)
	} else {
		wc, err = getOneWC(ctx, q)
	}
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
		return pingPongClientSpec{
			cfg:  rcqConfig(scch),
			sent: "CLIENT: Value sent: %d\n", received: "CLIENT: Value received: %d\n",
			wait: func(ctx context.Context, conn *rpma.Conn, stderr io.Writer) error {
				if err := rcqValidate(ctx, conn, scch, cq.OpSend, stderr); err != nil {
					return err
				}
				return rcqValidate(ctx, conn, scch, cq.OpRecv, stderr)
			},
			end: disconnectAndWaitForClose,
		}.run(ctx, args, stdout, stderr)
	}
}

func rcqServer(scch bool) mainFunc {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		if len(args) < 2 {
			return usageErr(stderr, "12-receive-completion-queue", "server", "<server_address> <port>")
		}
		validate := func(op cq.Opcode) func(*rpma.Conn) error {
			return func(conn *rpma.Conn) error { return rcqValidate(ctx, conn, scch, op, stderr) }
		}
		return servePingPong(ctx, args, rcqConfig(scch), "SERVER: ", stdout, stderr, validate(cq.OpRecv), validate(cq.OpSend))
	}
}
