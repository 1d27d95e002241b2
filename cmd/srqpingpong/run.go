package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/purerdma/purerdma/cmd/internal/pingpong"
	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/uverbs"
)

// runContext is the whole program with args (without the program name);
// it returns the exit status: 0, or 1 on any failure, as
// ibv_srq_pingpong. It gives up when ctx ends: in the TCP exchange and
// while waiting for completions.
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return tool.Main(ctx, args, stdout, stderr, pingpongMain)
}

// pingpongMain is ibv_srq_pingpong's main after option parsing.
func pingpongMain(ctx context.Context, o *pingpong.Options, stdout io.Writer) (err error) {
	if o.NumQP > o.RxDepth {
		return fmt.Errorf("rx_depth %d is too small for %d QPs -- must have at least one receive per QP.", o.RxDepth, o.NumQP)
	}
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
		Ch: p.Ch, CQ: p.CQ, NumQP: o.NumQP, Iters: o.Iters, RxDepth: o.RxDepth,
		Batch:    o.RxDepth + o.NumQP, // num_wc
		PostRecv: p.postRecv, PostSend: p.postSend, QP: p.findQP,
	}
	if err := l.Prime(); err != nil {
		return err
	}
	if p.PortInfo, err = p.Ctx.QueryPort(uint8(o.IBPort)); err != nil {
		return fmt.Errorf("Couldn't get port info (%v)", err)
	}
	my := make([]pingpong.Dest, o.NumQP)
	for i := range my {
		my[i] = pingpong.Dest{LID: p.PortInfo.LID, QPN: p.qps[i].Num(), PSN: rand.Uint32() & 0xffffff}
		if p.PortInfo.LinkLayer != uverbs.LinkLayerEthernet && my[i].LID == 0 {
			return errors.New("Couldn't get local LID")
		}
		if o.GIDIdx >= 0 {
			if my[i].GID, err = p.LocalGID(uint8(o.IBPort), o.GIDIdx); err != nil {
				return fmt.Errorf("Could not get local gid for gid index %d (%v)", o.GIDIdx, err)
			}
		}
		pingpong.PrintLocal(stdout, my[i])
	}

	var rem []pingpong.Dest
	if o.Server != "" {
		rem, err = clientExchange(ctx, o.Server, o.Port, my)
	} else {
		rem, err = serverExchange(ctx, o.Port, my, func(rem []pingpong.Dest) error { return p.connect(o, my, rem) })
	}
	if err != nil {
		return err
	}
	for _, r := range rem {
		pingpong.PrintRemote(stdout, r)
	}
	if o.Server != "" {
		if err := p.connect(o, my, rem); err != nil {
			return err
		}
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

// findQP is find_qp: the index of the QP a completion is for.
func (p *ppContext) findQP(wc *cq.WC) (int, error) {
	for i, qp := range p.qps {
		if qp.Num() == wc.QPNum {
			return i, nil
		}
	}
	return -1, fmt.Errorf("Couldn't find QPN %06x", wc.QPNum)
}
