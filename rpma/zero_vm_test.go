package rpma_test

import (
	"errors"
	"testing"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rpma"
)

// TestZeroValues checks on each device that a connection made from a
// ConnConfig literal that sets only RCQSize works (its other fields
// take librpma's defaults, so its queues are not of 0 entries): a send
// completes on the sender's CQ and the receive on the receiver's receive
// CQ. And that the zero Op posts a write and a read that report their
// completions, with ID 0, while an explicit CompletionOnError stays
// silent on success.
func TestZeroValues(t *testing.T) {
	testenv.Run(t, func(t *testing.T, d testenv.Dev) {
		client, server := connect(t, d, &rpma.ConnConfig{RCQSize: 4})
		if server.conn.RCQ() == nil || client.conn.RCQ() == nil {
			t.Fatal("no receive CQ with ConnConfig{RCQSize: 4}")
		}

		// Send and receive: the receive completes on the RCQ.
		if err := server.conn.Recv(server.mr, 2048, 64, 77); err != nil {
			t.Fatal(err)
		}
		copy(client.buf, "hello")
		if err := client.conn.Send(client.mr, 0, 5, rpma.Op{}); err != nil {
			t.Fatal(err)
		}
		complete(t, client.conn.CQ(), 0, cq.OpSend)
		wc := complete(t, server.conn.RCQ(), 77, cq.OpRecv)
		if wc.ByteLen != 5 || string(server.buf[2048:2053]) != "hello" {
			t.Errorf("received %d bytes %q, want 5 bytes \"hello\"", wc.ByteLen, server.buf[2048:2053])
		}
		var one [1]cq.WC
		if _, err := server.conn.CQ().GetWC(one[:]); !errors.Is(err, rpma.ErrNoCompletion) {
			t.Errorf("server's main CQ with a receive CQ present: %v %+v, want ErrNoCompletion", err, one[0])
		}

		// Write and read with the zero Op: each reports its completion.
		remote, err := rpma.RemoteMRFromDescriptor(client.conn.PrivateData())
		if err != nil {
			t.Fatal(err)
		}
		q := client.conn.CQ()
		copy(client.buf[100:], "zero-op!")
		if err := client.conn.Write(remote, 300, client.mr, 100, 8, rpma.Op{}); err != nil {
			t.Fatal(err)
		}
		complete(t, q, 0, cq.OpRDMAWrite)
		if got := string(server.buf[300:308]); got != "zero-op!" {
			t.Errorf("the zero Op's write left %q", got)
		}
		if err := client.conn.Read(client.mr, 200, remote, 300, 8, rpma.Op{}); err != nil {
			t.Fatal(err)
		}
		complete(t, q, 0, cq.OpRDMARead)
		if got := string(client.buf[200:208]); got != "zero-op!" {
			t.Errorf("the zero Op's read got %q", got)
		}

		// CompletionOnError is still there: a successful write with it
		// reports nothing, so the next completion is the next op's.
		if err := client.conn.Write(remote, 400, client.mr, 100, 8, rpma.Op{Flags: rpma.CompletionOnError, Context: 8}); err != nil {
			t.Fatal(err)
		}
		if err := client.conn.Write(remote, 500, client.mr, 100, 8, rpma.Op{Context: 9}); err != nil {
			t.Fatal(err)
		}
		complete(t, q, 9, cq.OpRDMAWrite)
		if _, err := q.GetWC(one[:]); !errors.Is(err, rpma.ErrNoCompletion) {
			t.Errorf("after the signaled write: %v %+v, want ErrNoCompletion", err, one[0])
		}
	})
}
