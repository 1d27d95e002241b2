package rpma_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rpma"
)

// TestGetWCSeed checks rpma_cq_get_wc(3) as its man page states it.
func TestGetWCSeed(t *testing.T) {
	d := testenv.RoCE(t)
	client, _ := connect(t, d, nil)
	q := client.conn.CQ()
	wc := make([]cq.WC, 4)
	// num_entries is len(wc); the count is the result, so C's NULL
	// num_entries_got has no Go form.
	tests := []struct {
		name string
		wc   []cq.WC
		want error
	}{
		{"num_entries < 1", wc[:0], rpma.ErrInvalid},
		{"nil wc", nil, rpma.ErrInvalid},
		{"nothing ready", wc, rpma.ErrNoCompletion},
		{"nothing ready, num_entries 1", wc[:1], rpma.ErrNoCompletion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := q.GetWC(tt.wc)
			if !errors.Is(err, tt.want) || n != 0 {
				t.Errorf("GetWC(%d entries) = %d, %v; want 0, %v", len(tt.wc), n, err, tt.want)
			}
		})
	}
}

// TestReceiveCQ checks the receive-CQ routing rule (with a receive CQ
// the main CQ never returns receive completions), that posted receives
// form an unordered set, and that the 0.11 completion helper gives imm in
// host order.
func TestReceiveCQ(t *testing.T) {
	d := testenv.RoCE(t)
	cfg := rpma.DefaultConnConfig()
	cfg.RCQSize = 10
	client, server := connect(t, d, &cfg)
	if server.conn.RCQ() == nil || client.conn.RCQ() == nil {
		t.Fatal("no receive CQ with RCQSize 10")
	}
	for i := range 3 {
		if err := server.conn.Recv(server.mr, 1000+64*i, 64, uint64(100+i)); err != nil {
			t.Fatal(err)
		}
	}
	copy(client.buf, "msg")
	for i := range 3 {
		if err := client.conn.SendWithImm(client.mr, 0, 3, 0x12345678+uint32(i), rpma.Op{Flags: rpma.CompletionAlways, Context: uint64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		complete(t, client.conn.CQ(), uint64(i), cq.OpSend)
	}
	// The main CQ of the server has no completion: receives go to its RCQ.
	var one [1]cq.WC
	if _, err := server.conn.CQ().GetWC(one[:]); !errors.Is(err, rpma.ErrNoCompletion) {
		t.Errorf("main CQ with a receive CQ present: %v %+v, want ErrNoCompletion", err, one[0])
	}
	var ids []uint64
	var imms []uint32
	for range 3 {
		cmpl := waitCompletion(t, server.conn.RCQ())
		if cmpl.Op != rpma.OpRecv || cmpl.Status != cq.Success || cmpl.ByteLen != 3 || cmpl.Flags&cq.WithImm == 0 {
			t.Errorf("receive completion %+v", cmpl)
		}
		ids = append(ids, cmpl.OpContext)
		imms = append(imms, cmpl.Imm)
	}
	// Buffers form an unordered set: compare the sets, not the order.
	slices.Sort(ids)
	slices.Sort(imms)
	if diff := cmp.Diff([]uint64{100, 101, 102}, ids); diff != "" {
		t.Errorf("receive contexts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]uint32{0x12345678, 0x12345679, 0x1234567a}, imms); diff != "" {
		t.Errorf("immediate data in host order (-want +got):\n%s", diff)
	}
}

// waitCompletion waits for the next completion of q in the 0.11 form.
func waitCompletion(t *testing.T, q *rpma.CQ) rpma.Completion {
	t.Helper()
	ctx := ctxT(t)
	for {
		c, err := q.GetCompletion()
		if err == nil {
			return c
		}
		if !errors.Is(err, rpma.ErrNoCompletion) {
			t.Fatal(err)
		}
		if err := q.Wait(ctx); err != nil && !errors.Is(err, rpma.ErrNoCompletion) {
			t.Fatal(err)
		}
	}
}
