package main

import (
	"fmt"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/uverbs"
)

// bw is run_iter_bw with one QP and a post list of one: keep up to
// txDepth operations outstanding, ask for a completion every cqMod and on
// the last, and time each post and each completion (a completion counts
// for the cqMod operations before it).
func (s *session) bw(size int, op uverbs.WROpcode) error {
	iters, tx, mod := s.o.iters, s.o.txDepth, s.cqMod
	s.sge[0] = s.r.local(size)
	wr := &s.wr[0]
	*wr = uverbs.SendWR{Opcode: op, SGE: s.sge, RemoteAddr: s.rem.addr, RKey: s.rem.rkey}
	base := uverbs.SendFlags(0)
	if size <= s.r.inline && op != uverbs.WRRDMARead {
		base |= uverbs.SendInline
	}
	wc := s.wc
	var scnt, ccnt, spins int
	for scnt < iters || ccnt < iters {
		for scnt < iters && scnt+1 <= tx+ccnt {
			wr.Flags = base
			if scnt%mod == mod-1 || scnt == iters-1 {
				wr.Flags |= uverbs.SendSignaled
			}
			s.tpost[scnt] = s.now()
			if _, err := s.r.qp.PostSend(s.wr); err != nil {
				return fmt.Errorf("couldn't post send: scnt=%d: %v", scnt, err)
			}
			scnt++
		}
		if ccnt < iters {
			n, err := s.r.scq.Poll(wc)
			if err != nil {
				return fmt.Errorf("poll CQ failed: %v", err)
			}
			if n == 0 {
				if err := s.spin(&spins); err != nil {
					return err
				}
				continue
			}
			t := s.now()
			for i := range n {
				if wc[i].Status != cq.Success {
					return fmt.Errorf("completion with error: %s (vendor error 0x%x) after %d of %d", wc[i].Status, wc[i].VendorErr, ccnt, iters)
				}
				ccnt += min(mod, iters-ccnt)
				s.tcomp[ccnt-1] = t
			}
		}
	}
	return nil
}

// bwRecv is the receiving side of send_bw: it counts receives, posts
// each consumed one again and times the first and each later one.
func (s *session) bwRecv() error {
	iters := s.o.iters
	wc := s.wc
	var rcnt, spins int
	for rcnt < iters {
		// Take no completion of the next round's messages.
		n, err := s.r.rcq.Poll(wc[:min(len(wc), iters-rcnt)])
		if err != nil {
			return fmt.Errorf("poll CQ failed: %v", err)
		}
		if n == 0 {
			if err := s.spin(&spins); err != nil {
				return err
			}
			continue
		}
		t := s.now()
		for i := range n {
			if wc[i].Status != cq.Success {
				return fmt.Errorf("receive completion with error: %s (vendor error 0x%x) after %d of %d", wc[i].Status, wc[i].VendorErr, rcnt, iters)
			}
			if rcnt == 0 {
				s.tpost[0] = t
			}
			s.tcomp[rcnt] = t
			rcnt++
		}
		if _, err := s.r.qp.PostRecv(s.rwr[:n]); err != nil {
			return fmt.Errorf("couldn't post recv: rcnt=%d: %v", rcnt, err)
		}
	}
	return nil
}
