package conformance

import (
	"errors"
	"maps"
	"strings"
	"testing"
)

// TestParseInstrCosts reads callgrind's per-instruction counts: name
// compression of the objects, subpositions absolute (hex, decimal),
// relative and repeated, a calls= line whose target does not move the
// position and whose inclusive cost is not the caller's, an inlined
// file's fi=/fe=, cost lines with fewer counters than events.
func TestParseInstrCosts(t *testing.T) {
	const out = `# callgrind format
version: 1
creator: callgrind-3.19.0
cmd:  /tmp/uv -test.run=^TestHostCostPost$ -test.count=1
desc: I1 cache: 
positions: instr line
events: Ir Dr
summary: 27

ob=(5) /tmp/uv
fl=(462) /w/uverbs/post.go
fn=(3526) github.com/purerdma/purerdma/uverbs.(*QP).PostSend
0x68c320 22 4
+1 * 4
fi=(510) /w/internal/spin/gate.go
+3 146 4 7
fe=(462)
+5 -124 4
cfi=(496) /w/internal/provider/rxe/sq.go
cfn=(3528) github.com/purerdma/purerdma/internal/provider/rxe.(*sq).PutPlain
calls=4 0x612f80 +11
* * 1000
+5 * 4
ob=(6) /usr/lib/libc.so
fn=(7) memcpy
4198400 3 2
-16 * 1
ob=(5)
fn=(3526)
0x68c320 22 4
totals: 27 99
`
	costs, err := parseInstrCosts(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	want := instrCosts{
		"/tmp/uv": {
			0x68c320: 8, 0x68c321: 4, 0x68c324: 4, 0x68c329: 4,
			0x68c32e: 4, // after the call at 0x68c329, not after its target
		},
		"/usr/lib/libc.so": {0x401000: 2, 0x400ff0: 1},
	}
	if !maps.EqualFunc(costs, want, maps.Equal) {
		t.Errorf("costs %v, want %v", costs, want)
	}
}

// TestParseInstrCostsErrors: what the count cannot read is an error,
// not a count of less.
func TestParseInstrCostsErrors(t *testing.T) {
	tests := []struct{ name, out string }{
		{"no positions", "events: Ir\nfn=f\n0x10 4\n"},
		{"no Ir", "positions: instr line\nevents: Dr\nfn=f\n0x10 1 4\n"},
		{"lines only", "positions: line\nevents: Ir\nfn=f\n10 4\n"},
		{"short", "positions: instr line\nevents: Ir\nfn=f\n0x10\n"},
		{"subposition", "positions: instr line\nevents: Ir\nfn=f\n0x10 *1 4\n"},
		{"counter", "positions: instr line\nevents: Ir\nfn=f\n0x10 1 x\n"},
		{"calls", "positions: instr line\nevents: Ir\nfn=f\ncalls=1 0x10\n0x10 1 4\n"},
		{"jump", "positions: instr line\nevents: Ir\nfn=f\n0x10 1 4\njump=1 +4 *\n"},
		{"totals", "positions: instr line\nevents: Ir\nfn=f\n0x10 1 4\ntotals: 5\n"},
		{"summary", "positions: instr line\nevents: Ir\nsummary: 5\nfn=f\n0x10 1 4\ntotals: 4\n"},
		{"garbage", "positions: instr line\nevents: Ir\nfn=f\nhello\n"},
	}
	for _, tt := range tests {
		if _, err := parseInstrCosts(strings.NewReader(tt.out)); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
}

// TestNopLen classifies instructions by their bytes, as gcc's objdump -d
// and go tool objdump print them from the two binaries counted.
func TestNopLen(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
		nop  bool
	}{
		{"nop", []byte{0x90}, true},
		{"xchg %ax,%ax", []byte{0x66, 0x90}, true},
		{"nopl (%rax)", []byte{0x0f, 0x1f, 0x00}, true},
		{"nopl 0x0(%rax)", []byte{0x0f, 0x1f, 0x40, 0x00}, true},
		{"nopl 0x0(%rax,%rax,1)", []byte{0x0f, 0x1f, 0x44, 0x00, 0x00}, true},
		{"nopw 0x0(%rax,%rax,1)", []byte{0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00}, true},
		{"nopl 0x0(%rax) disp32", []byte{0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00}, true},
		{"nopl 0x0(%rax,%rax,1) disp32", []byte{0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00}, true},
		{"nopw 0x0(%rax,%rax,1) disp32", []byte{0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00}, true},
		{"cs nopw", []byte{0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00}, true},
		{"data16 cs nopw", []byte{0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00}, true},
		{"nopl 0x0(%rip)", []byte{0x0f, 0x1f, 0x05, 0x00, 0x00, 0x00, 0x00}, true},
		{"nopl 0x0(,%rax,1)", []byte{0x0f, 0x1f, 0x04, 0x05, 0x00, 0x00, 0x00, 0x00}, true},
		{"nop %eax", []byte{0x0f, 0x1f, 0xc0}, true},
		{"pause", []byte{0xf3, 0x90}, false},
		{"xchg %eax,%r8d", []byte{0x41, 0x90}, false},
		{"kmovq %k0,(%rsp)", []byte{0xc4, 0xe1, 0xf8, 0x90, 0x04, 0x24}, false},
		{"push %rbp", []byte{0x55}, false},
		{"sub $0x28,%rsp", []byte{0x48, 0x83, 0xec, 0x28}, false},
		{"0f 1f /1", []byte{0x0f, 0x1f, 0x48, 0x00}, false},
		{"prefixes only", []byte{0x66, 0x2e}, false},
		{"cut short", []byte{0x0f, 0x1f, 0x84, 0x00, 0x00}, false},
		{"empty", nil, false},
	}
	for _, tt := range tests {
		want := 0
		if tt.nop {
			want = len(tt.b)
		}
		if got := nopLen(tt.b); got != want {
			t.Errorf("%s % x: nopLen %d, want %d", tt.name, tt.b, got, want)
		}
		// What follows an instruction does not change it.
		if got := nopLen(append(tt.b[:len(tt.b):len(tt.b)], 0x90, 0x55)); tt.nop && got != want {
			t.Errorf("%s % x, then more: nopLen %d, want %d", tt.name, tt.b, got, want)
		}
	}
}

// TestCountNOPs counts the executions of the NOPs among counted
// instructions, and fails with the code's error.
func TestCountNOPs(t *testing.T) {
	code := map[uint64][]byte{
		0x10: {0x90},
		0x11: {0x48, 0x83, 0xec, 0x28},
		0x15: {0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
		0x1f: {0xf3, 0x90},
	}
	read := func(a uint64) ([]byte, error) {
		if b, ok := code[a]; ok {
			return b, nil
		}
		return nil, errors.New("no code")
	}
	n, err := countNOPs(map[uint64]uint64{0x10: 3, 0x11: 3, 0x15: 5, 0x1f: 7}, read)
	if err != nil || n != 8 {
		t.Errorf("countNOPs %d, %v; want 8", n, err)
	}
	if _, err := countNOPs(map[uint64]uint64{0x10: 3, 0x20: 1}, read); err == nil {
		t.Error("countNOPs of an address without code: no error")
	}
}
