package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/pingpong"
	"github.com/purerdma/purerdma/uverbs"
)

// argv0 is the program name in the usage text.
const argv0 = "srqpingpong"

// run is the whole program with args (without the program name); it
// returns the exit status: 0, or 1 on any failure, as ibv_srq_pingpong.
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

// runContext is run that gives up when ctx ends: in the TCP exchange and
// while waiting for completions.
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseArgs(args)
	if err != nil {
		var ue *usageError
		if errors.As(err, &ue) {
			if ue.msg != "" {
				fmt.Fprintf(stderr, "%s: %s\n", argv0, ue.msg)
			}
			usage(stdout, argv0)
		} else {
			fmt.Fprintf(stderr, "%s: %v\n", argv0, err)
		}
		return 1
	}
	if err := pingpongMain(ctx, &o, stdout); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// pingpongMain is ibv_srq_pingpong's main after option parsing.
func pingpongMain(ctx context.Context, o *options, stdout io.Writer) (err error) {
	if o.numQP > o.rxDepth {
		return fmt.Errorf("rx_depth %d is too small for %d QPs -- must have at least one receive per QP.", o.rxDepth, o.numQP)
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

	routs := p.postRecv(p.rxDepth)
	if routs < p.rxDepth {
		return fmt.Errorf("Couldn't post receive (%d)", routs)
	}
	if p.ch != nil {
		if err := p.cq.ReqNotify(false); err != nil {
			return fmt.Errorf("Couldn't request CQ notification (%v)", err)
		}
	}
	if p.portinfo, err = p.ctx.QueryPort(uint8(o.ibPort)); err != nil {
		return fmt.Errorf("Couldn't get port info (%v)", err)
	}
	my := make([]pingpong.Dest, o.numQP)
	for i := range my {
		my[i] = pingpong.Dest{LID: p.portinfo.LID, QPN: p.qps[i].Num(), PSN: rand.Uint32() & 0xffffff}
		if p.portinfo.LinkLayer != uverbs.LinkLayerEthernet && my[i].LID == 0 {
			return errors.New("Couldn't get local LID")
		}
		if o.gidIdx >= 0 {
			if my[i].GID, err = p.localGID(uint8(o.ibPort), o.gidIdx); err != nil {
				return fmt.Errorf("Could not get local gid for gid index %d (%v)", o.gidIdx, err)
			}
		}
		fmt.Fprintf(stdout, "  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n",
			my[i].LID, my[i].QPN, my[i].PSN, pingpong.FormatGID(my[i].GID))
	}

	var rem []pingpong.Dest
	if o.server != "" {
		rem, err = clientExchange(ctx, o.server, o.port, my)
	} else {
		rem, err = serverExchange(ctx, o.port, my, func(rem []pingpong.Dest) error { return p.connect(o, my, rem) })
	}
	if err != nil {
		return err
	}
	for _, r := range rem {
		fmt.Fprintf(stdout, "  remote address: LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n",
			r.LID, r.QPN, r.PSN, pingpong.FormatGID(r.GID))
	}
	if o.server != "" {
		if err := p.connect(o, my, rem); err != nil {
			return err
		}
	}

	for i := range p.qps {
		if o.server != "" {
			if err := p.postSend(i); err != nil {
				return fmt.Errorf("Couldn't post send (%v)", err)
			}
			p.pending[i] = sendWRID | recvWRID
		} else {
			p.pending[i] = recvWRID
		}
	}

	start := time.Now()
	if err := p.loop(ctx, o.iters, &routs); err != nil {
		return err
	}
	usec := float32(time.Since(start).Microseconds()) // C's float
	bytes := int64(o.size) * int64(o.iters) * 2
	fmt.Fprintf(stdout, "%d bytes in %.2f seconds = %.2f Mbit/sec\n",
		bytes, float64(usec)/1000000., float64(bytes)*8./float64(usec))
	fmt.Fprintf(stdout, "%d iters in %.2f seconds = %.2f usec/iter\n",
		o.iters, float64(usec)/1000000., float64(usec)/float64(o.iters))
	return nil
}

// loop runs the ping-pong until iters sends and receives completed.
func (p *ppContext) loop(ctx context.Context, iters int, routs *int) error {
	var (
		wc         = make([]cq.WC, p.rxDepth+len(p.qps)) // num_wc
		rcnt, scnt int
		spins      int
	)
	for rcnt < iters || scnt < iters {
		if p.ch != nil {
			c, err := p.ch.Wait(ctx)
			if err != nil {
				return fmt.Errorf("Failed to get cq_event (%v)", err)
			}
			if c != p.cq {
				return fmt.Errorf("CQ event for unknown CQ %p", c)
			}
			if err := p.cq.ReqNotify(false); err != nil {
				return fmt.Errorf("Couldn't request CQ notification (%v)", err)
			}
		}
		var ne int
		for {
			n, err := p.cq.Poll(wc)
			if err != nil {
				return fmt.Errorf("poll CQ failed (%v)", err)
			}
			ne = n
			if p.ch != nil || ne > 0 {
				break
			}
			// Busy-poll as C does, but let other goroutines run and
			// notice the context ending.
			runtime.Gosched()
			if spins++; spins%4096 == 0 && ctx.Err() != nil {
				return fmt.Errorf("poll CQ failed (%v)", ctx.Err())
			}
		}
		for i := 0; i < ne; i++ {
			if err := p.parseWC(&wc[i], iters, &scnt, &rcnt, routs); err != nil {
				return fmt.Errorf("%v\nparse WC failed %d", err, ne)
			}
		}
	}
	return nil
}

// parseWC handles one completion as the C tool's loop does.
func (p *ppContext) parseWC(wc *cq.WC, iters int, scnt, rcnt, routs *int) error {
	if wc.Status != cq.Success {
		return fmt.Errorf("Failed status %s (%d) for wr_id %d", wc.Status, wc.Status, int(wc.ID))
	}
	qi := p.findQP(wc.QPNum)
	if qi < 0 {
		return fmt.Errorf("Couldn't find QPN %06x", wc.QPNum)
	}
	switch wc.ID {
	case sendWRID:
		*scnt++
	case recvWRID:
		if *routs--; *routs <= len(p.qps) {
			*routs += p.postRecv(p.rxDepth - *routs)
			if *routs < p.rxDepth {
				return fmt.Errorf("Couldn't post receive (%d)", *routs)
			}
		}
		*rcnt++
	default:
		return fmt.Errorf("Completion for unknown wr_id %d", int(wc.ID))
	}
	p.pending[qi] &^= int(wc.ID)
	if *scnt < iters && p.pending[qi] == 0 {
		if err := p.postSend(qi); err != nil {
			return fmt.Errorf("Couldn't post send (%v)", err)
		}
		p.pending[qi] = recvWRID | sendWRID
	}
	return nil
}
