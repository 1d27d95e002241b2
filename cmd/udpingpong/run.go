package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/purerdma/purerdma/cmd/internal/pingpong"
)

// runContext is the whole program with args (without the program name);
// it returns the exit status: 0, or 1 on any failure, as ibv_ud_pingpong.
// It gives up when ctx ends: in the TCP exchange and while waiting for
// completions.
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return tool.Main(ctx, args, stdout, stderr, pingpongMain)
}

// pingpongMain is ibv_ud_pingpong's main after option parsing.
func pingpongMain(ctx context.Context, o *pingpong.Options, stdout io.Writer) (err error) {
	p, err := newPingpong(o)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := p.close(); err == nil {
			err = cerr
		}
	}()

	l := &pingpong.Loop{
		Ch: p.Ch, CQ: p.CQ, NumQP: 1, Iters: o.Iters, RxDepth: o.RxDepth, Batch: 2,
		PostRecv: p.postRecv, PostSend: p.postSend,
		OnRecv: p.replyTo,
	}
	if err := l.Prime(); err != nil {
		return err
	}
	if p.PortInfo, err = p.Ctx.QueryPort(uint8(o.IBPort)); err != nil {
		return fmt.Errorf("Couldn't get port info (%v)", err)
	}
	my := pingpong.Dest{LID: p.PortInfo.LID}
	my.QPN = p.qp.Num()
	my.PSN = rand.Uint32() & 0xffffff
	if o.GIDIdx >= 0 {
		if my.GID, err = p.LocalGID(uint8(o.IBPort), o.GIDIdx); err != nil {
			return fmt.Errorf("Could not get local gid for gid index %d (%v)", o.GIDIdx, err)
		}
	}
	// Sic: a colon before GID, as the C tool prints it.
	fmt.Fprintf(stdout, "  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x: GID %s\n",
		my.LID, my.QPN, my.PSN, pingpong.FormatGID(my.GID))

	connect := func(rem pingpong.Dest) error { return p.connect(o, my.PSN, rem) }
	if _, err := pingpong.Exchange(ctx, o, my, stdout, connect); err != nil {
		return err
	}

	if err := l.Start(o.Server != ""); err != nil {
		return err
	}
	elapsed, err := l.Run(ctx)
	if err != nil {
		return err
	}
	pingpong.PrintStats(stdout, elapsed, o.Size, o.Iters)
	return nil
}
