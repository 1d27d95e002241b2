package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"

	"github.com/purerdma/purerdma/cmd/internal/pingpong"
	"github.com/purerdma/purerdma/uverbs"
)

// runContext is the whole program with args (without the program name);
// it returns the exit status: 0, or 1 on any failure, as ibv_rc_pingpong.
// It gives up when ctx ends: in the TCP exchange and while waiting for
// completions.
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return tool.Main(ctx, args, stdout, stderr, pingpongMain)
}

// pingpongMain is ibv_rc_pingpong's main after option parsing.
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
	}
	if err := l.Prime(); err != nil {
		return err
	}
	if p.PortInfo, err = p.Ctx.QueryPort(uint8(o.IBPort)); err != nil {
		return fmt.Errorf("Couldn't get port info (%v)", err)
	}
	my := pingpong.Dest{LID: p.PortInfo.LID}
	if p.PortInfo.LinkLayer != uverbs.LinkLayerEthernet && my.LID == 0 {
		return errors.New("Couldn't get local LID")
	}
	if o.GIDIdx >= 0 {
		if my.GID, err = p.LocalGID(uint8(o.IBPort), o.GIDIdx); err != nil {
			return fmt.Errorf("can't read sgid of index %d (%v)", o.GIDIdx, err)
		}
	}
	my.QPN = p.qp.Num()
	my.PSN = rand.Uint32() & 0xffffff
	pingpong.PrintLocal(stdout, my)

	connect := func(rem pingpong.Dest) error { return p.connect(o, my.PSN, rem) }
	if _, err := pingpong.Exchange(ctx, o, my, stdout, connect); err != nil {
		return err
	}

	pageSize := os.Getpagesize()
	if o.Server != "" && o.Validate {
		// C writes i / page_size % sizeof(char): always 0.
		for i := 0; i < o.Size; i += pageSize {
			p.Buf[i] = 0
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
	if o.Server == "" && o.Validate {
		for i := 0; i < o.Size; i += pageSize {
			if p.Buf[i] != 0 {
				fmt.Fprintf(stdout, "invalid data in page %d\n", i/pageSize)
			}
		}
	}
	return nil
}
