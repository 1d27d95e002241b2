package main

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/purerdma/purerdma/uverbs"
)

// latWrite is perftest's run_iter_lat_write: both sides RDMA-write size
// bytes into the peer's second half in turn, the last byte carrying the
// iteration count, and each waits for the peer's write by polling the
// last byte of its own second half. The server writes first.
func (s *session) latWrite(size int) error {
	iters := s.o.iters
	buf := s.r.buf
	wr := &s.wr[0]
	s.sge[0] = s.r.local(size)
	*wr = uverbs.SendWR{Opcode: uverbs.WRRDMAWrite, Flags: uverbs.SendSignaled, SGE: s.sge,
		RemoteAddr: s.rem.addr, RKey: s.rem.rkey}
	if size <= s.r.inline {
		wr.Flags |= uverbs.SendInline
	}
	// The NIC writes the polled byte behind Go's back: load the aligned
	// word that holds it atomically, so that the compiler reads memory on
	// every turn.
	pollIdx := s.r.half + size - 1
	word := (*uint32)(unsafe.Pointer(&buf[pollIdx&^3]))
	shift := pollIdx & 3
	postIdx := size - 1

	var scnt, ccnt, rcnt int
	for scnt < iters || ccnt < iters || rcnt < iters {
		if rcnt < iters && !(scnt < 1 && s.server) {
			rcnt++
			want := byte(rcnt)
			spins := 0
			for {
				w := atomic.LoadUint32(word)
				if (*[4]byte)(unsafe.Pointer(&w))[shift] == want {
					break
				}
				if err := s.spin(&spins); err != nil {
					return fmt.Errorf("waiting for write %d: %v", rcnt, err)
				}
			}
		}
		if scnt < iters {
			s.tpost[scnt] = s.now()
			scnt++
			buf[postIdx] = byte(scnt)
			if _, err := s.r.qp.PostSend(s.wr); err != nil {
				return fmt.Errorf("couldn't post send: scnt=%d: %v", scnt, err)
			}
		}
		if ccnt < iters {
			if err := s.pollOne(s.r.scq); err != nil {
				return err
			}
			ccnt++
		}
	}
	return nil
}

// latRead is run_iter_lat for RDMA read and atomics: one operation at a
// time, timed from post to post.
func (s *session) latRead(size int, op uverbs.WROpcode) error {
	s.sge[0] = s.r.local(size)
	s.wr[0] = uverbs.SendWR{Opcode: op, Flags: uverbs.SendSignaled, SGE: s.sge,
		RemoteAddr: s.rem.addr, RKey: s.rem.rkey, CompareAdd: 1}
	for scnt := 0; scnt < s.o.iters; scnt++ {
		s.tpost[scnt] = s.now()
		if _, err := s.r.qp.PostSend(s.wr); err != nil {
			return fmt.Errorf("couldn't post send: scnt=%d: %v", scnt, err)
		}
		if err := s.pollOne(s.r.scq); err != nil {
			return err
		}
	}
	return nil
}

// latSend is run_iter_lat_send: send/receive ping-pong, the client sends
// first. Sends are signaled every cqMod and on the last one only.
func (s *session) latSend(size int) error {
	iters := s.o.iters
	s.sge[0] = s.r.local(size)
	wr := &s.wr[0]
	*wr = uverbs.SendWR{Opcode: uverbs.WRSend, SGE: s.sge}
	base := uverbs.SendFlags(0)
	if size <= s.r.inline {
		base |= uverbs.SendInline
	}
	var scnt, rcnt int
	for scnt < iters || rcnt < iters {
		if rcnt < iters && !(scnt < 1 && !s.server) {
			if err := s.pollOne(s.r.rcq); err != nil {
				return err
			}
			rcnt++
			// Post the consumed receive again.
			if _, err := s.r.qp.PostRecv(s.rwr[:1]); err != nil {
				return fmt.Errorf("couldn't post recv: rcnt=%d: %v", rcnt, err)
			}
		}
		if scnt < iters {
			s.tpost[scnt] = s.now()
			scnt++
			signaled := scnt%s.cqMod == 0 || scnt == iters
			wr.Flags = base
			if signaled {
				wr.Flags |= uverbs.SendSignaled
			}
			if _, err := s.r.qp.PostSend(s.wr); err != nil {
				return fmt.Errorf("couldn't post send: scnt=%d: %v", scnt, err)
			}
			if signaled {
				if err := s.pollOne(s.r.scq); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
