package twohost_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
)

const dataSize = 1 << 17 // both sides' registered memory

// pattern fills b with bytes that depend on seed and position.
func pattern(b []byte, seed int) {
	for i := range b {
		b[i] = byte(seed*31 + i*7 + i>>8)
	}
}

// remoteMem is the server's memory as the client addresses it.
type remoteMem struct {
	addr uint64
	rkey uint32
}

func (m remoteMem) String() string { return fmt.Sprintf("%d %d", m.addr, m.rkey) }

func parseRemote(s string) (remoteMem, error) {
	var m remoteMem
	_, err := fmt.Sscanf(s, "%d %d", &m.addr, &m.rkey)
	return m, err
}

// postOne posts one signaled work request on the ID's QP with one SGE
// of length bytes at off of m, and waits for its completion.
func postOne(p *side, id *rdmacm.ID, wr uverbs.SendWR, m *mr.MR, off, length int) cq.WC {
	t := p.t
	t.Helper()
	wr.Flags |= uverbs.SendSignaled
	wr.SGE = []uverbs.SGE{{Addr: m.Addr() + uint64(off), Length: uint32(length), LKey: m.LKey()}}
	if _, err := id.QP().PostSend([]uverbs.SendWR{wr}); err != nil {
		t.Fatalf("post %v: %v", wr.Opcode, err)
	}
	wc, err := id.GetSendComp(ctxT(t, 2*time.Minute))
	if err != nil {
		t.Fatalf("guest %s: %v completion: %v", p.Name, wr.Opcode, err)
	}
	if wc.Status != cq.Success || wc.ID != wr.ID {
		t.Fatalf("guest %s: %v completion %+v", p.Name, wr.Opcode, wc)
	}
	return wc
}

// TestDataPath is the uverbs data path across the wire on an
// rdmacm-connected RC QP: every operation of the Go provider, from b's QP
// to a's, at sizes below, at and above the path MTU (1024 on rxe) and
// across many packets. b posts; a checks what arrived in its memory and
// receive queue; b checks what came back (reads, atomics).
func TestDataPath(t *testing.T) {
	p := begin(t)
	ctx := ctxT(t, 5*time.Minute)
	id := p.connect(ctx, connParam)
	buf, m := memory(t, id.PD(), dataSize)
	if p.Server() {
		p.send("memory", remoteMem{m.Addr(), m.RKey()}.String())
	}
	var rm remoteMem
	if !p.Server() {
		var err error
		if rm, err = parseRemote(p.recv("memory")); err != nil {
			t.Fatal(err)
		}
	}
	ops := []uverbs.WROpcode{uverbs.WRSend, uverbs.WRSendWithImm, uverbs.WRRDMAWrite, uverbs.WRRDMAWriteWithImm, uverbs.WRRDMARead}
	sizes := []int{1, 1000, 1024, 4097, 65536}
	seed := 0
	for _, op := range ops {
		for _, size := range sizes {
			seed++
			t.Run(fmt.Sprintf("%v/%d", op, size), func(t *testing.T) {
				dataCase(p.sub(t), id, buf, m, rm, op, size, seed)
			})
		}
	}
	t.Run("ATOMIC", func(t *testing.T) {
		atomics(p.sub(t), id, buf, m, rm)
	})
	p.hangUp(ctx, id)
}

// dataCase runs one operation of size bytes. The data sits at different
// offsets on both sides, so that an offset mix-up shows.
func dataCase(p *side, id *rdmacm.ID, buf []byte, m *mr.MR, rm remoteMem, op uverbs.WROpcode, size, seed int) {
	t := p.t
	const srvOff, cliOff = 64, 128
	recv := op == uverbs.WRSend || op == uverbs.WRSendWithImm || op == uverbs.WRRDMAWriteWithImm
	imm := uint32(0xc0de0000 + seed)
	if p.Server() {
		clear(buf)
		if op == uverbs.WRRDMARead {
			pattern(buf[srvOff:srvOff+size], seed)
		}
		if recv {
			if err := id.PostRecv(uint64(seed), m, srvOff, dataSize-srvOff); err != nil {
				t.Fatal(err)
			}
		}
		p.send("ready", "")
		p.recv("posted")
		if recv {
			wc, err := id.GetRecvComp(ctxT(t, 2*time.Minute))
			if err != nil || wc.Status != cq.Success || wc.ID != uint64(seed) {
				t.Fatalf("receive completion %+v, %v", wc, err)
			}
			if op != uverbs.WRRDMAWriteWithImm && int(wc.ByteLen) != size {
				t.Errorf("received %d bytes, want %d", wc.ByteLen, size)
			}
			if op != uverbs.WRSend && (wc.Flags&cq.WithImm == 0 || wc.Imm != imm) {
				t.Errorf("completion %+v, want immediate data %#x", wc, imm)
			}
		}
		if op != uverbs.WRRDMARead {
			want := make([]byte, size)
			pattern(want, seed)
			if !bytes.Equal(buf[srvOff:srvOff+size], want) {
				t.Errorf("guest %s's memory differs from what guest %s sent (%d bytes)", p.Name, p.PeerName, size)
			}
			if strings.Trim(string(buf[srvOff+size:srvOff+size+64]), "\x00") != "" {
				t.Errorf("bytes after the %d sent were written", size)
			}
		}
		p.send("checked", "")
		return
	}
	clear(buf)
	if op != uverbs.WRRDMARead {
		pattern(buf[cliOff:cliOff+size], seed)
	}
	p.recv("ready")
	wr := uverbs.SendWR{ID: uint64(seed), Opcode: op, Imm: imm, RemoteAddr: rm.addr + srvOff, RKey: rm.rkey}
	wc := postOne(p, id, wr, m, cliOff, size)
	p.send("posted", "")
	if op == uverbs.WRRDMARead {
		want := make([]byte, size)
		pattern(want, seed)
		if wc.Opcode != cq.OpRDMARead || !bytes.Equal(buf[cliOff:cliOff+size], want) {
			t.Errorf("read %d bytes from guest %s: they differ from its memory (completion %+v)", size, p.PeerName, wc)
		}
	}
	p.recv("checked")
}

// atomics runs compare-and-swap (a match and a miss) and fetch-and-add
// on an 8-byte word of a's memory.
func atomics(p *side, id *rdmacm.ID, buf []byte, m *mr.MR, rm remoteMem) {
	t := p.t
	const start = 0x1122334455667788
	steps := []struct {
		op                uverbs.WROpcode
		compareAdd, swap  uint64
		wantOld, wantWord uint64
	}{
		{uverbs.WRAtomicCmpAndSwp, start, 42, start, 42},
		{uverbs.WRAtomicCmpAndSwp, start, 7, 42, 42}, // no match: unchanged
		{uverbs.WRAtomicFetchAndAdd, 1000, 0, 42, 1042},
	}
	if p.Server() {
		binary.NativeEndian.PutUint64(buf[8:], start)
	} else {
		clear(buf[:64])
	}
	for i, s := range steps {
		if p.Server() {
			p.send("ready", "")
			p.recv("posted")
			if got := binary.NativeEndian.Uint64(buf[8:]); got != s.wantWord {
				t.Errorf("step %d %v: guest %s's word is %#x, want %#x", i, s.op, p.Name, got, s.wantWord)
			}
			p.send("checked", "")
			continue
		}
		p.recv("ready")
		wr := uverbs.SendWR{ID: uint64(100 + i), Opcode: s.op, CompareAdd: s.compareAdd, Swap: s.swap, RemoteAddr: rm.addr + 8, RKey: rm.rkey}
		postOne(p, id, wr, m, 16, 8)
		p.send("posted", "")
		if got := binary.NativeEndian.Uint64(buf[16:]); got != s.wantOld {
			t.Errorf("step %d %v: old value %#x from guest %s, want %#x", i, s.op, got, p.PeerName, s.wantOld)
		}
		p.recv("checked")
	}
}
