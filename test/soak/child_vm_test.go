package soak_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/rpmatest"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rpma"
)

// childEnv, set to a server's address, makes the test binary the
// killable client of a peer-kill cycle instead of running tests.
const childEnv = "PURERDMA_SOAK_CHILD"

// childLife bounds the child, should its parent die without killing it.
const childLife = 5 * time.Minute

// runChild is the killable client's main: it connects to the server with
// its region's descriptor as private data, says "established", and keeps
// reads and writes of the server's region in flight until it is killed.
// Nothing is closed: the kernel cleans up after the kill.
func runChild(addr string) int {
	if err := child(addr); err != nil {
		fmt.Fprintln(os.Stderr, "soak child:", err)
		return 1
	}
	return 0
}

func child(addr string) error {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), childLife)
	defer cancel()
	uctx, err := rpma.ContextByAddr(ctx, ap.Addr(), rpma.ContextRemote)
	if err != nil {
		return err
	}
	peer, err := rpma.NewPeer(uctx)
	if err != nil {
		return err
	}
	buf, err := mr.Alloc(regionSize)
	if err != nil {
		return err
	}
	m, err := peer.RegisterMR(buf, usagePoster|usageTarget)
	if err != nil {
		return err
	}
	cfg := rpma.DefaultConnConfig()
	cfg.Timeout = 5 * time.Second
	cfg.SQSize, cfg.CQSize = 2*slots, 2*slots
	c, err := rpmatest.Dial(ctx, peer, ap, &cfg, m.Descriptor())
	if err != nil {
		return err
	}
	remote, err := rpma.RemoteMRFromDescriptor(c.PrivateData())
	if err != nil {
		return err
	}
	fmt.Println("established")
	// Writes into the upper half of the server's region and reads from
	// it, into the upper half of ours: the server's slots are its own.
	wc := make([]cq.WC, 2*slots)
	inFlight := 0
	for i := uint64(0); ctx.Err() == nil; {
		for ; inFlight < 2*slots; i++ {
			slot := int(i % (2 * slots))
			off := childArea + slot*slotSize/2
			op := rpma.Op{Flags: rpma.CompletionAlways, Context: i}
			if i%2 == 0 {
				err = c.Write(remote, off, m, off, slotSize/2, op)
			} else {
				err = c.Read(m, off, remote, off, slotSize/2, op)
			}
			if err != nil {
				return fmt.Errorf("post: %w", err)
			}
			inFlight++
		}
		n, err := c.CQ().GetWC(wc)
		if err != nil && !errors.Is(err, rpma.ErrNoCompletion) {
			return err
		}
		for _, w := range wc[:n] {
			if w.Status != cq.Success {
				return fmt.Errorf("completion %+v", w)
			}
		}
		inFlight -= n
		if n == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	return ctx.Err()
}
