package cq

import (
	"testing"

	"github.com/purerdma/purerdma/uverbs"
)

func TestWCAddr(t *testing.T) {
	w := WC{SLID: 0x1234, SL: 3, DLIDPathBits: 5, Flags: GRH | WithImm, SrcQP: 9}
	if got, want := w.Addr(), (uverbs.WCAddr{SLID: 0x1234, SL: 3, DLIDPathBits: 5, GRH: true}); got != want {
		t.Errorf("Addr() = %+v, want %+v", got, want)
	}
	w.Flags = WithImm
	if w.Addr().GRH {
		t.Error("Addr() says GRH for a completion without IBV_WC_GRH")
	}
}
