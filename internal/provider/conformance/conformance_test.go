package conformance

import (
	"strings"
	"testing"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/provider"
)

// TestFields checks the field tables against offsets of struct
// rxe_send_wqe and struct rxe_sge that are fixed by the ABI.
func TestFields(t *testing.T) {
	fs := Fields(abi.RxeSendWQE{}, 0, "")
	for off, want := range map[int]string{
		0: "Wr.WrID", 12: "Wr.Opcode", 16: "Wr.SendFlags", 20: "Wr.Ex", 24: "Wr.Wr",
		144: "Status", 152: "Iova", 176: "SSN", 184: "Dma.Length", 196: "Dma.NumSGE", 207: "Dma.Reserved",
	} {
		if got := Name(fs, off); got != want {
			t.Errorf("byte %d of rxe_send_wqe: %s, want %s", off, got, want)
		}
	}
	sge := Fields(abi.RxeSGE{}, 208, "sge")
	if got := Name(sge, 208+12); got != "sge.LKey" {
		t.Errorf("byte 12 of rxe_sge: %s", got)
	}
	if got := Name(fs, 208); got != "unnamed" {
		t.Errorf("past the header: %s", got)
	}
}

// TestDiff checks that Diff reports equal transcripts as equal, names a
// differing field once with its whole value, compares completions as
// WCs, and stops where the transcripts no longer line up.
func TestDiff(t *testing.T) {
	name := func(q string, slot []byte, off int) string {
		return Name(Fields(abi.RxeRecvWQE{}, 0, ""), off)
	}
	slot := make([]byte, 40)
	slot[0] = 7
	c := []string{"ready", "op 0 recv 1 1 db 0", Slot("rq", 0, slot),
		FormatWC(&provider.WC{ID: 1, ImmData: 5}), "polled 1"}
	g := append([]string(nil), c...)
	if d := Diff("x", g, c, name, nil); len(d) != 0 {
		t.Fatalf("equal transcripts: %q", d)
	}

	slot2 := append([]byte(nil), slot...)
	slot2[1], slot2[2] = 1, 2 // two bytes of one field
	g[2] = Slot("rq", 0, slot2)
	g[3] = FormatWC(&provider.WC{ID: 1, ImmData: 6})
	d := Diff("x", g, c, name, nil)
	if len(d) != 2 || d[0] != "x after op 0 (recv): rq slot 0: WrID at offset 0: Go 0x20107 C 0x7" ||
		!strings.Contains(d[1], "ImmData") {
		t.Errorf("differences %q", d)
	}
	if d := Diff("x", g, c, name, func(q, f string) bool { return f == "WrID" }); len(d) != 1 {
		t.Errorf("ignored field still reported: %q", d)
	}

	g = append([]string{"ready", "polled 0"}, c[1:]...)
	d = Diff("x", g, c, name, nil)
	if len(d) != 2 || !strings.Contains(d[1], "diverge at line 1") {
		t.Errorf("shifted transcripts: %q", d)
	}
}

// TestScriptText checks the harness's input format for one of each
// command.
func TestScriptText(t *testing.T) {
	s := &Script{Setup: Setup{Provider: "rxe", SQ: 4, RQ: 2, CQ: 8, MaxSendSGE: 1, MaxRecvSGE: 1, MaxInline: 8},
		Ops: []Op{
			{Kind: "send", Send: []provider.SendWR{{ID: 1, Opcode: 2, Flags: 3, Imm: 4, RemoteAddr: 5, RKey: 6,
				CompareAdd: 7, Swap: 8, RemoteQPN: 9, RemoteQKey: 10, SGE: []provider.SGE{{Addr: 11, Length: 12, LKey: 13}}}}},
			{Kind: "recv", Recv: []provider.RecvWR{{ID: 2}}},
			{Kind: "consume", Queue: "sq", N: 1},
			{Kind: "cqe", CQE: []uint64{1, 2}},
			{Kind: "poll", N: 3},
			{Kind: "arm", N: 1},
			{Kind: "dump", Queue: "cq"},
		}}
	want := "rxe 4 2 0 8 1 1 8 0\nsend 1\nw 1 2 3 0x4 0x5 0x6 0x7 0x8 0x9 0xa 1 0xb 12 0xd\n" +
		"recv 1\nr 2 0\nconsume sq 1\ncqe 0x1 0x2\npoll 3\narm 1\ndump cq\n"
	if got := s.Text(); got != want {
		t.Errorf("script:\n%s\nwant:\n%s", got, want)
	}
}
