package rxe

import (
	"encoding/binary"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
)

// FuzzCQ maps a CQ ring whose header and slots are arbitrary bytes, as a
// broken or hostile kernel could leave them, moves the producer to an
// arbitrary value and drains the ring. The ring is taken only when its
// header describes slots that fit the mapping; then Next returns exactly
// the completions between the consumer and the masked producer, each one
// what its slot holds, and leaves the consumer at the producer.
func FuzzCQ(f *testing.F) {
	seed := ring(7, 4, 0, 1)
	for i, wc := range []abi.WC{
		{WrID: 1, Opcode: abi.IB_WC_RECV, ByteLen: 10, WCFlags: abi.IB_WC_WITH_IMM, Ex: 0x04030201, QPNum: 0x11, PortNum: 1},
		{WrID: 2, Status: abi.IB_WC_WR_FLUSH_ERR, VendorErr: 7},
	} {
		b, err := binary.Append(nil, binary.NativeEndian, wc)
		if err != nil {
			f.Fatal(err)
		}
		copy(slotOf(seed, 1+i), b)
	}
	f.Add(seed[:queueHdr], seed[queueHdr:], uint32(3))
	f.Add(seed[:queueHdr], seed[queueHdr:], uint32(1<<31|1)) // wraps past the consumer
	small := ring(6, 1, 0, 0)
	f.Add(small[:queueHdr], small[queueHdr:], uint32(0))
	bad := ring(5, 8, 0, 0) // 32-byte slots cannot hold a 48-byte WC
	f.Add(bad[:queueHdr], bad[queueHdr:], uint32(5))
	f.Add([]byte{7, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}, make([]byte, 256), uint32(2))

	f.Fuzz(func(t *testing.T, hdr, slots []byte, prod uint32) {
		if len(slots) > 1<<16 {
			return
		}
		buf := make([]byte, queueHdr+len(slots))
		copy(buf[:queueHdr], hdr)
		copy(buf[queueHdr:], slots)
		log2 := binary.NativeEndian.Uint32(buf[offElemLog:])
		mask := binary.NativeEndian.Uint32(buf[offMask:])
		cons := consumer(buf)
		valid := log2 <= maxLog2Elem && mask != 0 && mask&(mask+1) == 0 && 1<<log2 >= wcSize &&
			(uint64(mask)+1)<<log2 <= uint64(len(slots)) && producer(buf) <= mask && cons <= mask

		dev := &fakeDev{maps: map[uint64][]byte{4096: buf}}
		c, err := createCQ(dev, resp(t, abi.RxeCreateCQResp{MI: mi(4096, buf)}))
		if (err == nil) != valid {
			t.Fatalf("NewCQ on log2 %d, mask %#x, %d bytes of slots: %v", log2, mask, len(slots), err)
		}
		if err != nil {
			return
		}
		setProducer(buf, prod)
		n := (prod&mask - cons) & mask
		var wc provider.WC
		for i := uint32(0); i < n; i++ {
			if !next(c, &wc) {
				t.Fatalf("Next %d of %d found nothing", i, n)
			}
			s := slotOf(buf, int((cons+i)&mask))
			u := decode[abi.WC](t, s[:wcSize])
			want := provider.WC{ID: u.WrID, Status: u.Status, Opcode: u.Opcode, VendorErr: u.VendorErr, ByteLen: u.ByteLen,
				ImmData: u.Ex, QPNum: u.QPNum, SrcQP: u.SrcQP, Flags: u.WCFlags, PKeyIndex: u.PKeyIndex, SLID: u.SLID,
				SL: u.SL, DLIDPathBits: u.DLIDPathBits, PortNum: u.PortNum}
			if u.WCFlags&abi.IB_WC_WITH_IMM != 0 {
				want.ImmData = binary.BigEndian.Uint32(s[24:]) // ib_uverbs_wc.ex
			}
			if want != wc {
				t.Fatalf("completion %d (-want +got):\n%s", i, cmp.Diff(want, wc))
			}
		}
		if next(c, &wc) {
			t.Fatalf("Next found a completion past the producer %#x (consumer %#x, mask %#x)", prod, cons, mask)
		}
		if got := consumer(buf); got != prod&mask {
			t.Fatalf("consumer %#x after draining, want %#x", got, prod&mask)
		}
		if err := c.Close(); err != nil || dev.unmapped != 1 {
			t.Fatalf("Close: %v, %d unmapped", err, dev.unmapped)
		}
	})
}
