package siw

import (
	"encoding/binary"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mem"
)

// FuzzCQ fills a CQ of 1 to 8 elements with arbitrary bytes, as a broken
// or hostile kernel could, and drains it. Next returns exactly the run of
// valid elements from the first one on, each one what its element holds
// mapped to ibv_wc's statuses and opcodes (an unknown status is a general
// error), with no field left from the WC it overwrote, and hands every
// element it read back by clearing its flags word. siw's CQE is read in
// little-endian order, as the hosts it builds for are.
func FuzzCQ(f *testing.F) {
	ring := make([]byte, 4*cqeSize)
	for i, c := range []abi.SiwCQE{
		{ID: 1, Flags: abi.SIW_WQE_VALID, Opcode: abi.SIW_OP_SEND, Bytes: 100, QPID: 7},
		{ID: 2, Flags: abi.SIW_WQE_VALID | abi.SIW_WQE_REM_INVAL, Opcode: abi.SIW_OP_RECEIVE, ImmData: 0xabcd, QPID: 1 << 40},
		{ID: 3, Flags: abi.SIW_WQE_VALID, Opcode: 200, Status: 999},
	} {
		*mem.At[abi.SiwCQE](ring, i*cqeSize) = c
	}
	f.Add(uint8(4), ring)
	f.Add(uint8(3), ring)
	f.Add(uint8(1), []byte{})
	f.Fuzz(func(t *testing.T, n uint8, b []byte) {
		num := 1 + int(n%8)
		_, q := newCQ(t, uint32(num))
		copy(q.buf[:num*cqeSize], b)
		ref := append([]byte(nil), q.buf[:num*cqeSize]...)

		for i := 0; i <= num; i++ {
			e := ref[i%num*cqeSize:][:cqeSize]
			valid := i < num && e[flagsWord]&abi.SIW_WQE_VALID != 0
			wc := provider.WC{SrcQP: 99, PortNum: 3, SL: 1, PKeyIndex: 2, SLID: 3, DLIDPathBits: 4, VendorErr: 5, ImmData: 6, Flags: 7}
			if got := next(q, &wc); got != valid {
				t.Fatalf("Next %d of a %d-element CQ: %v, want %v", i, num, got, valid)
			}
			if !valid {
				break
			}
			flags, opcode, status := e[flagsWord], e[flagsWord+1], binary.LittleEndian.Uint16(e[flagsWord+2:])
			want := provider.WC{
				ID:      binary.LittleEndian.Uint64(e[0:]),
				Status:  abi.IB_WC_GENERAL_ERR,
				Opcode:  abi.IB_WC_SEND,
				ByteLen: binary.LittleEndian.Uint32(e[12:]),
				QPNum:   binary.LittleEndian.Uint32(e[24:]),
			}
			if int(status) < len(wcStatus) {
				want.Status = wcStatus[status]
			}
			if opcode < abi.SIW_NUM_OPCODES { // beyond the enum: a send
				want.Opcode = wcOpcode[opcode]
			}
			if flags&abi.SIW_WQE_REM_INVAL != 0 {
				want.Flags, want.ImmData = abi.IB_WC_WITH_INVALIDATE, binary.LittleEndian.Uint32(e[16:])
			}
			if want != wc {
				t.Fatalf("completion %d (-want +got):\n%s", i, cmp.Diff(want, wc))
			}
			// Next clears the flags byte only (as rdma-core does).
			if w, want := mem.Uint32(q.buf, i*cqeSize+flagsWord).Load(), uint32(opcode)<<8|uint32(status)<<16; w != want {
				t.Fatalf("flags word %#x after Next %d, want %#x", w, i, want)
			}
		}
	})
}
