package uverbs

import (
	"testing"

	"github.com/purerdma/purerdma/internal/provider"
)

// TestPostSendAllocs checks that a request built on the caller's stack
// stays there: PostSend copies what the provider needs, so nothing the
// request points to escapes. (Keeping the pointer to a UD request's
// address handle in the QP once moved every caller's SGE array to the
// heap.) The QP is the host cost table's, on rxe's queues over Go rings.
func TestPostSendAllocs(t *testing.T) {
	ah := &AH{av: provider.AH{Num: 5}}
	for _, typ := range []QPType{RC, UD} {
		t.Run(typ.String(), func(t *testing.T) {
			qp, _, takeSQ, _ := hostQP(t)
			qp.typ = typ
			var failed error
			allocs := testing.AllocsPerRun(100, func() {
				sge := [1]SGE{{Addr: 0x10000, Length: 64, LKey: 0x55}}
				wr := [1]SendWR{{ID: 1, Opcode: WRSend, SGE: sge[:], AH: ah, RemoteQPN: 3, RemoteQKey: 4}}
				if _, err := qp.PostSend(wr[:]); err != nil {
					failed = err
				}
				takeSQ()
			})
			if failed != nil {
				t.Fatal(failed)
			}
			if allocs != 0 {
				t.Errorf("PostSend of a request on the stack allocates %v times, want 0", allocs)
			}
		})
	}
}
