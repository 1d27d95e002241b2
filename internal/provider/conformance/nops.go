package conformance

import (
	"bufio"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// The NOPs of a row: instructions that execute and do nothing. Go's
// assembler pads jumps so that none crosses or ends on a 32-byte
// boundary (the Intel JCC erratum; always on for Go code), with multi-byte
// NOPs before the compare of a fused compare-and-jump, sometimes inside a
// loop; and the compiler marks an inlined call with a 1-byte NOP when no
// instruction of the caller carries the call's line. C executes few: gcc
// aligns loop heads, outside the loop. Callgrind counts them as
// instructions like any other, so the table says how many of a row's
// instructions they are: callgrind dumps each instruction's count
// (--dump-instr=yes, which changes only the output file, not the counts),
// and the bytes at its address in the binary say whether it is a NOP.

// instrCosts are the instructions callgrind counted, by object file (its
// ob= name) and address: how many times the instruction there executed.
type instrCosts map[string]map[uint64]uint64

// parseInstrCosts reads a callgrind output file written with
// --dump-instr=yes: the instructions counted, by address. They must sum
// to its totals (and summary), the check that every line was read as
// callgrind meant it.
// The format (valgrind's manual, "Callgrind Format Specification"): a
// header of "key: value" lines, of which positions names the
// subpositions that start each cost line ("instr line") and events the
// counters that follow them; then the body: name lines (ob=, fl=, fn=,
// ...; "(id) name" defines a compressed name, "(id)" alone refers back
// to it), cost lines, and calls= lines. A subposition is absolute
// (decimal or 0x hex), "+N" or "-N" relative to the same subposition of
// the last cost line, or "*" for the same. A calls= line names the
// call's target (its subpositions are relative too, but it is no cost
// line: the next one is still relative to the line before), and the cost
// line after it is the call's position and its inclusive cost, which the
// callee's own lines already count: it moves the position, adds nothing.
func parseInstrCosts(r io.Reader) (instrCosts, error) {
	p := costParser{costs: instrCosts{}, names: map[string]string{}, instr: -1, ir: -1}
	s := bufio.NewScanner(r)
	s.Buffer(nil, 1<<20)
	for n := 1; s.Scan(); n++ {
		if err := p.line(s.Text()); err != nil {
			return nil, fmt.Errorf("callgrind output line %d: %w", n, err)
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	for _, t := range p.totals {
		if t != p.sum {
			return nil, fmt.Errorf("callgrind output: the instructions sum to %d, its totals say %d", p.sum, t)
		}
	}
	return p.costs, nil
}

// costParser is parseInstrCosts's state.
type costParser struct {
	costs    instrCosts
	sum      uint64
	names    map[string]string // ob= names by their compressed id
	obj      string            // the current ob=
	npos     int               // subpositions per cost line
	instr    int               // which of them is the address
	ir       int               // which counter is Ir
	last     []uint64          // the last cost line's subpositions
	callCost bool              // the next cost line is a call's
	totals   []uint64          // the Ir of the totals: and summary: lines
}

func (p *costParser) line(l string) error {
	switch {
	case l == "" || l[0] == '#':
		return nil
	case isCostLine(l):
		return p.cost(l)
	}
	i := strings.IndexAny(l, ":=")
	if i < 0 || l[i] == ':' {
		return p.header(l)
	}
	switch key, val := l[:i], l[i+1:]; key {
	case "ob":
		p.obj = p.name(val)
	case "calls":
		// "calls=COUNT TARGET": the target's subpositions are read
		// (a malformed one is still an error) but do not move the
		// position.
		f := strings.Fields(val)
		if len(f) != 1+p.npos {
			return fmt.Errorf("calls=%s: want a count and %d subpositions", val, p.npos)
		}
		if _, err := p.positions(f[1:]); err != nil {
			return err
		}
		p.callCost = true
	case "fl", "fi", "fe", "fn", "cob", "cfi", "cfl", "cfn", "jfi", "jfn":
		// Names the count does not need: the object is enough to find
		// the bytes.
	default:
		// jump= and jcnd= (--collect-jumps) are associations like
		// calls=, with lines of their own; not asked for, not read.
		return fmt.Errorf("unexpected %q", l)
	}
	return nil
}

// isCostLine says whether l starts with a subposition.
func isCostLine(l string) bool {
	c := l[0]
	return c >= '0' && c <= '9' || c == '+' || c == '-' || c == '*'
}

// header reads a "key: value" line: the positions and events the cost
// lines follow, and the totals to check them against; the others
// (desc:, cmd:, ...) say nothing about single instructions.
func (p *costParser) header(l string) error {
	key, val, ok := strings.Cut(l, ":")
	if !ok {
		return fmt.Errorf("unexpected %q", l)
	}
	switch key {
	case "positions":
		f := strings.Fields(val)
		p.npos, p.instr = len(f), slices.Index(f, "instr")
		p.last = make([]uint64, len(f))
	case "events":
		p.ir = slices.Index(strings.Fields(val), "Ir")
	case "totals", "summary":
		f := strings.Fields(val)
		if p.ir < 0 || p.ir >= len(f) {
			return fmt.Errorf("%q: no Ir", l)
		}
		n, err := strconv.ParseUint(f[p.ir], 10, 64)
		if err != nil {
			return err
		}
		p.totals = append(p.totals, n)
	}
	return nil
}

// name resolves name compression: "(id) name" defines id, "(id)" refers
// to it, anything else is the name itself.
func (p *costParser) name(v string) string {
	if !strings.HasPrefix(v, "(") {
		return v
	}
	id, name, ok := strings.Cut(v, ")")
	if !ok {
		return v
	}
	if name = strings.TrimSpace(name); name != "" {
		p.names[id] = name
		return name
	}
	return p.names[id]
}

// cost reads a cost line: its subpositions, then its counters (fewer
// than the events are zeros).
func (p *costParser) cost(l string) error {
	if p.instr < 0 || p.ir < 0 {
		return errors.New("cost line before positions: with instr and events: with Ir")
	}
	f := strings.Fields(l)
	if len(f) < p.npos {
		return fmt.Errorf("%q: want %d subpositions", l, p.npos)
	}
	pos, err := p.positions(f[:p.npos])
	if err != nil {
		return err
	}
	p.last = pos
	call := p.callCost
	p.callCost = false
	if call || p.ir >= len(f)-p.npos {
		return nil
	}
	ir, err := strconv.ParseUint(f[p.npos+p.ir], 10, 64)
	if err != nil {
		return err
	}
	if p.costs[p.obj] == nil {
		p.costs[p.obj] = map[uint64]uint64{}
	}
	p.costs[p.obj][pos[p.instr]] += ir
	p.sum += ir
	return nil
}

// positions reads subpositions against the last cost line's.
func (p *costParser) positions(f []string) ([]uint64, error) {
	pos := make([]uint64, len(f))
	for i, s := range f {
		var err error
		switch s[0] {
		case '*':
			pos[i] = p.last[i]
			if s != "*" {
				err = fmt.Errorf("subposition %q", s)
			}
		case '+', '-':
			var d uint64
			d, err = strconv.ParseUint(s[1:], 0, 64)
			if s[0] == '+' {
				pos[i] = p.last[i] + d
			} else {
				pos[i] = p.last[i] - d
			}
		default:
			pos[i], err = strconv.ParseUint(s, 0, 64)
		}
		if err != nil {
			return nil, err
		}
	}
	return pos, nil
}

// nopLen is the length of the NOP that b starts with, or 0 when b does
// not start with one. The NOPs are 0x90 (NOP; 0x66 0x90 is xchg %ax,%ax)
// and 0x0f 0x1f /0 (NOPL, NOPW with 0x66: a memory operand that is not
// read), behind any number of 0x66 (operand size) and 0x2e (CS segment)
// prefixes, as Go's assembler and gcc pad with them. Not a NOP: 0xf3
// 0x90 (PAUSE), a REX prefix before 0x90 (xchg with r8), a 0x90 inside
// another encoding (VEX's c4 e1 f8 90, KMOVQ).
func nopLen(b []byte) int {
	i := 0
	for i < len(b) && (b[i] == 0x66 || b[i] == 0x2e) {
		i++
	}
	switch {
	case i < len(b) && b[i] == 0x90:
		return i + 1
	case i+2 < len(b) && b[i] == 0x0f && b[i+1] == 0x1f && b[i+2]>>3&7 == 0:
		n := i + 3 + modrmExtra(b[i+2], b[i+3:])
		if n > len(b) {
			return 0
		}
		return n
	}
	return 0
}

// modrmExtra is how many bytes follow ModRM byte m: the SIB byte and the
// displacement; rest is what follows m.
func modrmExtra(m byte, rest []byte) int {
	mod, rm := m>>6, m&7
	if mod == 3 {
		return 0 // a register operand
	}
	n := 0
	if rm == 4 { // a SIB byte
		n++
		if mod == 0 && len(rest) > 0 && rest[0]&7 == 5 {
			n += 4 // no base: a 32-bit displacement
		}
	}
	switch {
	case mod == 1:
		n++
	case mod == 2, mod == 0 && rm == 5: // RIP-relative in 64-bit mode
		n += 4
	}
	return n
}

// maxInstr is the longest x86 instruction.
const maxInstr = 15

// countNOPs is how many of the instructions in costs (address: times
// executed) were NOPs; code returns the bytes at an address (up to
// maxInstr of them, fewer at the end of the code).
func countNOPs(costs map[uint64]uint64, code func(addr uint64) ([]byte, error)) (uint64, error) {
	var n uint64
	for a, c := range costs {
		b, err := code(a)
		if err != nil {
			return 0, err
		}
		if nopLen(b) > 0 {
			n += c
		}
	}
	return n, nil
}

// elfNOPs counts the NOPs of costs, instructions of the ELF executable
// at path (its ob= in callgrind's output), from the bytes of its
// executable segments. Both binaries counted are position-dependent
// (Go's linux/amd64 default, the harnesses linked -static), so an
// address in callgrind's output is the address in the file.
func elfNOPs(path string, costs map[uint64]uint64) (uint64, error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if f.Type != elf.ET_EXEC {
		return 0, fmt.Errorf("%s: not a position-dependent executable (%v)", path, f.Type)
	}
	return countNOPs(costs, func(a uint64) ([]byte, error) {
		for _, p := range f.Progs {
			if p.Type != elf.PT_LOAD || p.Flags&elf.PF_X == 0 || a < p.Vaddr || a >= p.Vaddr+p.Filesz {
				continue
			}
			b := make([]byte, min(maxInstr, p.Vaddr+p.Filesz-a))
			_, err := p.ReadAt(b, int64(a-p.Vaddr))
			return b, err
		}
		return nil, fmt.Errorf("%s: no code at %#x", path, a)
	})
}

// binaryNOPs counts the NOPs of a run of bin from callgrind's output: all
// the instructions counted must be bin's (the loops run nothing else, the
// binaries are static), or the count would leave some out unread.
func binaryNOPs(bin string, costs instrCosts) (uint64, error) {
	var n uint64
	for obj, c := range costs {
		if !sameFile(obj, bin) {
			return 0, fmt.Errorf("callgrind counted instructions in %s, not only in %s", obj, bin)
		}
		m, err := elfNOPs(bin, c)
		if err != nil {
			return 0, err
		}
		n += m
	}
	return n, nil
}

// sameFile says whether paths a and b name the same file.
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
