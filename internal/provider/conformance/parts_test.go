package conformance

import "testing"

// TestPartsOf splits callgrind_annotate's per-function counts, Go's and
// C's, into the table's parts.
func TestPartsOf(t *testing.T) {
	tests := []struct {
		name, annotated string
		want            [nParts]uint64
	}{
		{"go", `--------------------------------------------------------------------------------
Ir                 
--------------------------------------------------------------------------------
4,721,678 (100.0%)  PROGRAM TOTALS

--------------------------------------------------------------------------------
Ir                  file:function
--------------------------------------------------------------------------------
2,375,724 (50.32%)  /w/internal/provider/rxe/sq.go:github.com/purerdma/purerdma/internal/provider/rxe.(*sq).putPlain [/tmp/uv]
  393,216 ( 8.33%)  /w/uverbs/post.go:github.com/purerdma/purerdma/uverbs.(*QP).PostSend [/tmp/uv]
  361,728 ( 7.66%)  /w/uverbs/hostcost_test.go:github.com/purerdma/purerdma/uverbs.hostLoopSend [/tmp/uv]
   16,406 ( 0.35%)  /usr/local/go/src/sync/atomic/type.go:github.com/purerdma/purerdma/internal/provider/rxe.(*sq).putPlain
      100 ( 0.00%)  /usr/local/go/src/runtime/asm_amd64.s:runtime.morestack_noctxt.abi0 [/tmp/uv]
`, [nParts]uint64{partLoop: 361728, partLayer: 393316, partDriver: 2392130}},
		{"c", `3,343,736 (100.0%)  PROGRAM TOTALS
2,883,584 (86.24%)  ???:rxe_post_send [/h/harness]
  181,440 ( 5.43%)  ???:hostloop_send [/h/harness]
  163,840 ( 4.90%)  ???:__memcpy_avx_unaligned_erms [/h/harness]
   65,536 ( 1.96%)  ???:pthread_spin_lock [/h/harness]
   49,152 ( 1.47%)  ???:pthread_spin_init [/h/harness]
`, [nParts]uint64{partLoop: 181440, partLayer: 114688, partDriver: 3047424}},
	}
	for _, tt := range tests {
		if got := partsOf(tt.annotated); got != tt.want {
			t.Errorf("%s: parts %v, want %v", tt.name, got, tt.want)
		}
	}
}
