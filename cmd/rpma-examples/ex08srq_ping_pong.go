package main

// 08srq-simple-messages-ping-pong-with-srq: 08's ping-pong with the
// server receiving through a shared receive queue, its completions on the
// SRQ's receive CQ (no argument), the connection's main CQ ("m") or the
// connection's receive CQ ("r"). Its client also serves as 13's client,
// which prefixes its lines with its process ID.

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/rpma"
)

const srqRCQSize = 10 // RCQ_SIZE

func srqPingPongClient(withPid bool) mainFunc {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		if len(args) < 4 {
			return usageErr(stderr, "08srq-simple-messages-ping-pong-with-srq", "client", "<server_address> <port> <seed> <rounds> [<sleep>]")
		}
		sent, received := "Value sent: %d\n", "Value received: %d\n"
		if withPid {
			pid := os.Getpid()
			sent = fmt.Sprintf("[client #%d] value sent: %%d\n", pid)
			received = fmt.Sprintf("[client #%d] value received: %%d\n", pid)
		}
		return pingPongClientSpec{
			sent: sent, received: received, doWhile: true,
			wait: waitPingPong, end: waitForCloseAndDisconnect,
		}.run(ctx, args, stdout, stderr)
	}
}

func srqPingPongServer(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		return usageErr(stderr, "08srq-simple-messages-ping-pong-with-srq", "server", "<server_address> <port> [m|r]")
	}
	rcqFlag := "s"
	if len(args) >= 3 {
		if args[2] != "m" && args[2] != "r" {
			fmt.Fprintf(stderr, "The third parameter should be one of m or r (%s given)\n", args[2])
			return -1
		}
		rcqFlag = args[2]
	}
	srqCfg := rpma.DefaultSRQConfig()
	if rcqFlag != "s" {
		srqCfg.RCQSize = 0
	}
	cfg := rpma.DefaultConnConfig()
	if rcqFlag == "r" {
		cfg.RCQSize = srqRCQSize
	}
	var u undo
	defer u.run()
	srq, ep, m, err := u.srqListen(ctx, args, &srqCfg, &cfg, 1)
	if err != nil {
		return code(err)
	}
	if err := srq.Recv(m.recvMR, 0, msgSize, recvID); err != nil {
		return code(err)
	}
	conn, err := serverAccept(ctx, ep, &cfg, nil, stderr)
	if err != nil {
		return code(err)
	}
	defer func() {
		conn.Disconnect()
		conn.Close()
	}()
	qpNum := conn.QPNum()
	rcq := map[string]*rpma.CQ{"s": srq.RCQ(), "m": conn.CQ(), "r": conn.RCQ()}[rcqFlag]
	for {
		pp := pingPong{recvID: recvID}
		var wc cq.WC
		for !pp.rcvOK {
			if wc, err = getOneWC(ctx, rcq); err != nil {
				return -1
			}
			if err := pp.validateWC(&wc, stderr); err != nil {
				return -1
			}
		}
		v := m.received(0)
		if v == iAmDone {
			return 0
		}
		if wc.QPNum != qpNum {
			fmt.Fprintf(stderr, "Error: number of QP (qp_num) in the received completion (%d) differs from the one of the connection (%d)\n", wc.QPNum, qpNum)
			return -1
		}
		fmt.Fprintf(stdout, "Value received: %d\n", v)
		m.setSend(0, v+1)
		if err := srq.Recv(m.recvMR, 0, msgSize, recvID); err != nil {
			return -1
		}
		fmt.Fprintf(stdout, "Value sent: %d\n", v+1)
		if err := conn.Send(m.sendMR, 0, msgSize, rpma.Op{Flags: rpma.CompletionOnError}); err != nil {
			return -1
		}
	}
}
