// Package conformance holds purerdma's Go providers against rdma-core's own
// C providers: a script of operations runs once through the C provider
// (test/conformance/harness.c, rdma-core's librxe/libsiw over a fake
// kernel; test/conformance/mlx5.c, libmlx5 over a fake kernel and device;
// both built by `make conformance`) and once through the Go provider over
// the same fake kernel, and the two transcripts must agree byte for byte.
// This package has the script, the transcript format, the runner of the C
// programs and the comparison; each provider's conformance_test.go has its
// Go side. It is used by tests only.
//
// A script is text, one command per line:
//
//	rxe|rxe-ud|siw SQ RQ SRQ CQ MAXSENDSGE MAXRECVSGE MAXINLINE SRQMAXSGE
//	    sets up the provider's QP (RC; UD for rxe-ud, with one address
//	    handle whose number is 0x33), SRQ (if SRQ > 0) and CQ with rings
//	    of SQ, RQ, SRQ and CQ slots. RQ 0 makes the QP take its receives
//	    from the SRQ.
//	mlx5|mlx5-ud SQ RQ SRQ CQ MAXSENDSGE MAXRECVSGE MAXINLINE SRQMAXSGE
//	    the same for mlx5, but the numbers are the capacities asked for
//	    (max_send_wr, max_recv_wr, the SRQ's max_wr, the CQ's cqe), which
//	    the provider sizes its queues from; mlx5-ud makes a UD QP and one
//	    address handle (an InfiniBand port, see test/conformance/mlx5.c).
//	    The QP is moved to RTS.
//	send N      followed by N lines "w ID OPCODE FLAGS IMM RADDR RKEY CMPADD SWAP RQPN RQKEY NSGE (ADDR LEN LKEY)*"
//	            posts the N send work requests in one call. IMM is in
//	            host order (the rkey to invalidate for SEND_WITH_INV and
//	            LOCAL_INV). With IBV_SEND_INLINE, each ADDR is an offset
//	            into Pattern.
//	recv N, srecv N  followed by N lines "r ID NSGE (ADDR LEN LKEY)*"
//	            posts receives on the QP or on the SRQ.
//	consume Q K the fake kernel takes K slots of queue Q (sq, rq, srq):
//	            it zeroes them and moves the consumer index on (not for
//	            mlx5, whose consumer is told by the CQEs).
//	cqe ...     the fake kernel writes one completion into the CQ and
//	            publishes it (fields: see the provider's test).
//	cqe HEX     mlx5: the device writes these 64 bytes (128 hex digits)
//	            into its next CQ entry, op_own last, with op_own's owner
//	            bit (bit 0) replaced by the parity of the device's pass
//	            over the ring, as hardware does.
//	poll N      polls the CQ for up to N completions.
//	arm S       requests a completion event (solicited only if S is 1).
//	modify S    mlx5: moves the QP to state S (IB_QPS_*; MODIFY_QP, then
//	            the driver's part of it: a move to RESET cleans the CQ of
//	            the QP's CQEs and starts its queues over).
//	dump Q      prints queue Q: its indices (rxe) and every slot.
//
// The transcript is one record per line:
//
//	ready
//	op I KIND N POSTED db DOORBELLS   (a post: how many of N were posted, doorbells it rang)
//	polled N
//	wc ID STATUS OPCODE VENDORERR BYTELEN IMM QPNUM SRCQP FLAGS PKEYINDEX SLID SL DLIDPATHBITS
//	index Q PRODUCER CONSUMER
//	ctrl FLAGS                         (siw: the CQ's notification word)
//	slot Q I HEX
//
// mlx5's transcript differs where the device does. After ready come the
// setup records, in the order of the commands:
//
//	cmd context HEX    GET_CONTEXT's driver request (the one the kernel took)
//	cap cq CQE         the generic CREATE_CQ's cqe
//	cmd cq HEX         CREATE_CQ's driver request
//	cap srq MAXWR MAXSGE, cmd srq HEX
//	cap qp SENDWR RECVWR SENDSGE RECVSGE INLINE, cmd qp HEX
//	mmap OFFSET LEN    the UAR pages mapped, in order of offset
//
// where every address in a driver request (buf_addr, db_addr,
// sq_buf_addr) is replaced by its offset within its page, since the
// addresses differ between processes. Posts are "op I KIND N POSTED"
// (no doorbell count: mlx5 rings the device, not the kernel). After the
// setup and after every command the device's view follows:
//
//	dbr NAME VALUE     the doorbell records qp.rq, qp.sq, srq, cq.ci and
//	                   cq.arm, as big-endian words, as the device reads them
//	uar OFF HEX        every non-zero 8-byte word of the UAR pages; OFF is
//	                   the page's mmap offset plus the word's offset in it.
//	                   The pages are then cleared.
//	kernel doorbell N  (Go side only) the driver rang the kernel's
//	                   doorbell N times, which libmlx5 never does
//
// and dumps are one slot record per 64-byte basic block of the SQ, per
// WQE stride of the RQ and SRQ, and per 64-byte CQE. Both sides find the
// queues only through the driver requests' addresses and the counts in
// them (sq_wqe_count, rq_wqe_count, rq_wqe_shift; the CQ's and SRQ's
// sizes from the generic request, as the kernel sizes them).
package conformance

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/provider"
)

// EnvHarness names the environment variable with the path of the C
// harness; `make conformance` sets it. Without it, the harness is looked
// for at .cache/conformance/harness in the module.
const EnvHarness = "PURERDMA_CONFORMANCE_C"

// Pattern is the source of inline data on both sides: byte i is i*7+3.
var Pattern = func() []byte {
	b := make([]byte, 4096)
	for i := range b {
		b[i] = byte(i*7 + 3)
	}
	return b
}()

// Setup is a script's first line.
type Setup struct {
	Provider                                     string // "rxe", "rxe-ud", "siw", "mlx5", "mlx5-ud", "mlx5dyn" or "mlx5dyn-ud"
	SQ, RQ, SRQ, CQ                              uint32 // slots
	MaxSendSGE, MaxRecvSGE, MaxInline, SRQMaxSGE uint32
}

// Op is one command after the setup.
type Op struct {
	Kind  string // send, recv, srecv, consume, cqe, poll, arm, modify, dump
	Send  []provider.SendWR
	Recv  []provider.RecvWR
	Queue string   // consume, dump
	N     uint32   // consume, poll, arm, modify
	CQE   []uint64 // cqe: the provider's fields in order
	Bytes []byte   // cqe (mlx5): the 64 bytes the device writes
}

// Script is a setup and its operations.
type Script struct {
	Setup
	Ops []Op
}

// Text encodes s in the harness's input format.
func (s *Script) Text() string {
	var b strings.Builder
	u := s.Setup
	fmt.Fprintf(&b, "%s %d %d %d %d %d %d %d %d\n", u.Provider, u.SQ, u.RQ, u.SRQ, u.CQ,
		u.MaxSendSGE, u.MaxRecvSGE, u.MaxInline, u.SRQMaxSGE)
	for _, op := range s.Ops {
		switch op.Kind {
		case "send":
			fmt.Fprintf(&b, "send %d\n", len(op.Send))
			for _, w := range op.Send {
				fmt.Fprintf(&b, "w %d %d %d %#x %#x %#x %#x %#x %#x %#x %d", w.ID, w.Opcode, w.Flags, w.Imm,
					w.RemoteAddr, w.RKey, w.CompareAdd, w.Swap, w.RemoteQPN, w.RemoteQKey, len(w.SGE))
				for _, g := range w.SGE {
					fmt.Fprintf(&b, " %#x %d %#x", g.Addr, g.Length, g.LKey)
				}
				b.WriteByte('\n')
			}
		case "recv", "srecv":
			fmt.Fprintf(&b, "%s %d\n", op.Kind, len(op.Recv))
			for _, w := range op.Recv {
				fmt.Fprintf(&b, "r %d %d", w.ID, len(w.SGE))
				for _, g := range w.SGE {
					fmt.Fprintf(&b, " %#x %d %#x", g.Addr, g.Length, g.LKey)
				}
				b.WriteByte('\n')
			}
		case "consume":
			fmt.Fprintf(&b, "consume %s %d\n", op.Queue, op.N)
		case "cqe":
			b.WriteString("cqe")
			if op.Bytes != nil {
				fmt.Fprintf(&b, " %x\n", op.Bytes)
				continue
			}
			for _, v := range op.CQE {
				fmt.Fprintf(&b, " %#x", v)
			}
			b.WriteByte('\n')
		case "poll":
			fmt.Fprintf(&b, "poll %d\n", op.N)
		case "arm":
			fmt.Fprintf(&b, "arm %d\n", op.N)
		case "modify":
			fmt.Fprintf(&b, "modify %d\n", op.N)
		case "dump":
			fmt.Fprintf(&b, "dump %s\n", op.Queue)
		default:
			panic("conformance: op " + op.Kind)
		}
	}
	return b.String()
}

// EnvHarnessMLX5 names the environment variable with the path of the
// mlx5 harness; `make conformance` sets it. Without it, the harness is
// looked for beside the one EnvHarness names, then at
// .cache/conformance/harness-mlx5 in the module.
const EnvHarnessMLX5 = "PURERDMA_CONFORMANCE_MLX5"

// Harness returns the path of the rxe and siw C harness, or skips t
// saying how to build it.
func Harness(t testing.TB) string {
	t.Helper()
	return harness(t, EnvHarness, "harness")
}

// HarnessMLX5 returns the path of the mlx5 C harness, or skips t saying
// how to build it.
func HarnessMLX5(t testing.TB) string {
	t.Helper()
	if os.Getenv(EnvHarnessMLX5) == "" {
		if p := os.Getenv(EnvHarness); p != "" {
			if q := filepath.Join(filepath.Dir(p), "harness-mlx5"); exists(q) {
				return q
			}
		}
	}
	return harness(t, EnvHarnessMLX5, "harness-mlx5")
}

func harness(t testing.TB, env, name string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=%s: %v", env, p, err)
		}
		return p
	}
	if root := moduleRoot(); root != "" {
		if p := filepath.Join(root, ".cache", "conformance", name); exists(p) {
			return p
		}
	}
	t.Skipf("conformance: no C harness %s (set %s, or run `make conformance`, which builds it from Debian's libibverbs-dev)", name, env)
	return ""
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			return ""
		}
		dir = up
	}
}

// RunC runs the script through the C harness and returns its transcript.
func RunC(t testing.TB, harness string, s *Script) []string {
	t.Helper()
	cmd := exec.Command(harness)
	cmd.Stdin = strings.NewReader(s.Text())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("C harness: %v\nstderr:\n%s\nscript:\n%s", err, stderr.String(), s.Text())
	}
	return Lines(string(out))
}

// Lines splits a transcript into its records.
func Lines(out string) []string {
	var l []string
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l = append(l, sc.Text())
	}
	return l
}

// Field is a named byte range of a queue element.
type Field struct {
	Off, Size int
	Name      string
}

// Fields lists the leaf fields of the struct type of v, at base, named
// prefix.Field.Sub (arrays of structs as Field[i]; arrays of bytes as one
// field). The abi structs are laid out as their C counterparts.
func Fields(v any, base int, prefix string) []Field {
	var fs []Field
	walk(reflect.TypeOf(v), base, prefix, &fs)
	return fs
}

func walk(t reflect.Type, off int, name string, fs *[]Field) {
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			n := f.Name
			if n == "_" {
				n = "pad"
			}
			if name != "" {
				n = name + "." + n
			}
			walk(f.Type, off+int(f.Offset), n, fs)
		}
	case reflect.Array:
		if t.Elem().Kind() == reflect.Struct {
			for i := range t.Len() {
				walk(t.Elem(), off+i*int(t.Elem().Size()), fmt.Sprintf("%s[%d]", name, i), fs)
			}
			return
		}
		*fs = append(*fs, Field{off, int(t.Size()), name})
	default:
		*fs = append(*fs, Field{off, int(t.Size()), name})
	}
}

// Name returns the field of fs holding byte off, with the byte's place in
// it for arrays.
func Name(fs []Field, off int) string {
	for _, f := range fs {
		if off >= f.Off && off < f.Off+f.Size {
			return f.Name
		}
	}
	return "unnamed"
}

// Namer names the field at byte off of a slot of queue q, given the slot
// bytes (the C side's, which tell the opcode and flags).
type Namer func(q string, slot []byte, off int) string

// LineNamer is a Namer that is also told the index of the slot's record
// in the C transcript, for slots whose fields depend on the slots around
// them (an mlx5 WQE spans several basic blocks).
type LineNamer func(line int, q string, slot []byte, off int) string

// Diff compares the Go transcript with the C transcript and returns one
// message per difference, naming the differing fields of slots through
// name, and comparing work completions as whole provider.WCs. ignore, if
// not nil, excuses a named field of a queue's slots.
func Diff(what string, goLines, cLines []string, name Namer, ignore func(q, field string) bool) []string {
	return DiffLines(what, goLines, cLines, func(_ int, q string, slot []byte, off int) string {
		return name(q, slot, off)
	}, ignore)
}

// DiffLines is Diff with a LineNamer.
func DiffLines(what string, goLines, cLines []string, name LineNamer, ignore func(q, field string) bool) []string {
	var diffs []string
	n := max(len(goLines), len(cLines))
	after := "setup"
	for i := range n {
		var g, c string
		if i < len(goLines) {
			g = goLines[i]
		}
		if i < len(cLines) {
			c = cLines[i]
		}
		switch f := strings.Fields(c); {
		case len(f) > 2 && f[0] == "op":
			after = "op " + f[1] + " (" + f[2] + ")"
		case len(f) > 1 && f[0] == "polled":
			after = "a poll"
		}
		if g == c {
			continue
		}
		gf, cf := strings.Fields(g), strings.Fields(c)
		switch {
		case len(gf) == 4 && len(cf) == 4 && gf[0] == "slot" && cf[0] == "slot" && gf[1] == cf[1] && gf[2] == cf[2]:
			gb, err1 := hex.DecodeString(gf[3])
			cb, err2 := hex.DecodeString(cf[3])
			if err1 != nil || err2 != nil || len(gb) != len(cb) {
				diffs = append(diffs, fmt.Sprintf("%s line %d: Go %q, C %q", what, i, g, c))
				continue
			}
			line := i
			diffs = append(diffs, slotDiff(what+" after "+after+":", gf[1], gf[2], gb, cb,
				func(q string, slot []byte, off int) string { return name(line, q, slot, off) }, ignore)...)
		case len(gf) == 3 && len(cf) == 3 && gf[0] == "cmd" && cf[0] == "cmd" && gf[1] == cf[1]:
			// A driver request, named as the slots of queue "cmd NAME".
			gb, err1 := hex.DecodeString(gf[2])
			cb, err2 := hex.DecodeString(cf[2])
			if err1 != nil || err2 != nil {
				diffs = append(diffs, fmt.Sprintf("%s line %d: Go %q, C %q", what, i, g, c))
				continue
			}
			if len(gb) != len(cb) {
				diffs = append(diffs, fmt.Sprintf("%s: cmd %s: the driver request has %d bytes in Go, %d in C", what, gf[1], len(gb), len(cb)))
			}
			k := min(len(gb), len(cb))
			line := i
			diffs = append(diffs, fieldDiff(what+":", "cmd "+gf[1], "cmd "+gf[1], gb[:k], cb[:k],
				func(q string, slot []byte, off int) string { return name(line, q, slot, off) }, ignore)...)
		case len(gf) > 0 && len(cf) > 0 && gf[0] == "wc" && cf[0] == "wc":
			gw, err1 := ParseWC(g)
			cw, err2 := ParseWC(c)
			if err1 != nil || err2 != nil {
				diffs = append(diffs, fmt.Sprintf("%s line %d: Go %q, C %q", what, i, g, c))
				continue
			}
			diffs = append(diffs, fmt.Sprintf("%s line %d, after %s: work completion differs (-Go +C):\n%s", what, i, after, cmp.Diff(gw, cw)))
		default:
			diffs = append(diffs, fmt.Sprintf("%s line %d, after %s: Go %q, C %q", what, i, after, short(g), short(c)))
			if len(gf) == 0 || len(cf) == 0 || gf[0] != cf[0] {
				// The transcripts no longer line up; what follows
				// would only repeat this.
				return append(diffs, fmt.Sprintf("%s: the transcripts diverge at line %d", what, i))
			}
		}
	}
	return diffs
}

func short(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

// slotDiff names each differing field of one slot once.
func slotDiff(what, q, idx string, gb, cb []byte, name Namer, ignore func(q, field string) bool) []string {
	return fieldDiff(what, q+" slot "+idx, q, gb, cb, name, ignore)
}

// fieldDiff names each differing field of gb and cb, a slot of queue q
// or a driver request (q "cmd NAME"), which label names in messages,
// once. A name ending in "/be" marks a big-endian field (mlx5's WQEs and
// CQEs): it is shown without the suffix and its values are read
// big-endian.
func fieldDiff(what, label, q string, gb, cb []byte, name Namer, ignore func(q, field string) bool) []string {
	var diffs []string
	last := ""
	for off := range gb {
		if gb[off] == cb[off] {
			continue
		}
		f := name(q, cb, off)
		if f == last {
			continue
		}
		last = f
		shown, be := strings.CutSuffix(f, "/be")
		if ignore != nil && ignore(q, shown) {
			continue
		}
		start, end := off, off
		for end < len(gb) && name(q, cb, end) == f {
			end++
		}
		for start > 0 && name(q, cb, start-1) == f {
			start--
		}
		gv, cv := hexLE(gb[start:end]), hexLE(cb[start:end])
		if be {
			gv, cv = hexBE(gb[start:end]), hexBE(cb[start:end])
		}
		diffs = append(diffs, fmt.Sprintf("%s %s: %s at offset %d: Go %s C %s", what, label, shown, start, gv, cv))
	}
	return diffs
}

// hexBE shows b as a big-endian number when it is one, else as bytes.
func hexBE(b []byte) string {
	switch len(b) {
	case 1, 2, 4, 8:
		var v uint64
		for _, x := range b {
			v = v<<8 | uint64(x)
		}
		return fmt.Sprintf("%#x", v)
	}
	return hex.EncodeToString(b)
}

// hexLE shows b as a little-endian number when it is one, else as bytes.
func hexLE(b []byte) string {
	switch len(b) {
	case 1, 2, 4, 8:
		var v uint64
		for i := len(b) - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[i])
		}
		return fmt.Sprintf("%#x", v)
	}
	return hex.EncodeToString(b)
}

// FormatWC formats a work completion as a transcript record. PortNum is
// not in it: struct ibv_wc has no port number.
func FormatWC(w *provider.WC) string {
	return fmt.Sprintf("wc %d %d %d %d %d %d %d %d %d %d %d %d %d", w.ID, w.Status, w.Opcode,
		w.VendorErr, w.ByteLen, w.ImmData, w.QPNum, w.SrcQP, w.Flags, w.PKeyIndex, w.SLID, w.SL, w.DLIDPathBits)
}

// ParseWC parses a wc record.
func ParseWC(line string) (provider.WC, error) {
	f := strings.Fields(line)
	if len(f) != 14 || f[0] != "wc" {
		return provider.WC{}, fmt.Errorf("not a wc record: %q", line)
	}
	var v [13]uint64
	for i := range v {
		x, err := strconv.ParseUint(f[i+1], 10, 64)
		if err != nil {
			return provider.WC{}, err
		}
		v[i] = x
	}
	return provider.WC{ID: v[0], Status: uint32(v[1]), Opcode: uint32(v[2]), VendorErr: uint32(v[3]),
		ByteLen: uint32(v[4]), ImmData: uint32(v[5]), QPNum: uint32(v[6]), SrcQP: uint32(v[7]),
		Flags: uint32(v[8]), PKeyIndex: uint16(v[9]), SLID: uint16(v[10]), SL: uint8(v[11]),
		DLIDPathBits: uint8(v[12])}, nil
}

// Slot formats a slot record.
func Slot(q string, i int, b []byte) string {
	return fmt.Sprintf("slot %s %d %s", q, i, hex.EncodeToString(b))
}

// Bytes hands out a fuzzer's input a little at a time; past its end it
// gives zeros, so every input makes a whole script.
type Bytes struct {
	b []byte
}

// NewBytes reads from b.
func NewBytes(b []byte) *Bytes { return &Bytes{b: b} }

// Left reports whether input remains.
func (r *Bytes) Left() bool { return len(r.b) > 0 }

// U8 returns the next byte.
func (r *Bytes) U8() uint8 {
	if len(r.b) == 0 {
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

// N returns a number in [0, n).
func (r *Bytes) N(n int) int { return int(r.U8()) % n }

// U32 returns the next four bytes, little-endian.
func (r *Bytes) U32() uint32 {
	return uint32(r.U8()) | uint32(r.U8())<<8 | uint32(r.U8())<<16 | uint32(r.U8())<<24
}

// U64 returns the next eight bytes, little-endian.
func (r *Bytes) U64() uint64 { return uint64(r.U32()) | uint64(r.U32())<<32 }

// SGEs returns up to max gather entries of any address and key; their
// lengths are shifted right by shift, which lets a caller keep the total
// below a limit one side checks and the other does not.
func (r *Bytes) SGEs(max int, shift uint) []provider.SGE {
	var sge []provider.SGE
	for range r.N(max + 1) {
		sge = append(sge, provider.SGE{Addr: r.U64(), Length: r.U32() >> shift, LKey: r.U32()})
	}
	return sge
}

// InlineSGEs returns up to three pieces of Pattern, max bytes at most in
// all, each starting in the first len(Pattern)-room bytes (the Addr of an
// inline entry is its offset in Pattern).
func (r *Bytes) InlineSGEs(max, room int) []provider.SGE {
	var sge []provider.SGE
	left := max
	for range r.N(4) {
		n := r.N(left + 1)
		sge = append(sge, provider.SGE{Addr: uint64(r.N(len(Pattern) - room)), Length: uint32(n)})
		left -= n
	}
	return sge
}
