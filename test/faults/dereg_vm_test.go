package faults_test

import (
	"errors"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/rpma"
)

// TestDeregisterInFlight deregisters a region while reads that use it
// are posted: the client's local destination, or the server's source.
// The kernel lets the region go (no EBUSY); rxe waits in the
// deregistration for the operations holding the region. Every read
// completes, none succeeds after one failed, and an operation that comes
// after the deregistration fails: rpma refuses a closed local region
// with ErrInvalid, and the peer refuses its closed one.
func TestDeregisterInFlight(t *testing.T) {
	const ops = 8
	for _, tc := range []struct {
		name   string
		remote bool // deregister the server's region, else the client's
	}{
		{"local destination", false},
		{"remote source", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testenv.Run(t, func(t *testing.T, d testenv.Dev) {
				cfg := rpma.DefaultConnConfig()
				cfg.SQSize, cfg.CQSize = ops+1, ops+1
				p := connect(t, d, &cfg, usageServer)
				for id := uint64(1); id <= ops; id++ {
					if err := p.cc.Read(p.client.mr, 0, p.remote, 0, regionSize, rpma.Op{Flags: rpma.CompletionAlways, Context: id}); err != nil {
						t.Fatalf("read %d: %v", id, err)
					}
				}
				gone := p.client.mr
				if tc.remote {
					gone = p.server.mr
				}
				if err := gone.Close(); err != nil {
					t.Errorf("deregister: %v", err)
				}
				n := ops
				err := p.cc.Read(p.client.mr, 0, p.remote, 0, 8, rpma.Op{Flags: rpma.CompletionAlways, Context: ops + 1})
				switch {
				case tc.remote && err == nil:
					n++
				case tc.remote:
					t.Fatalf("read after the peer's deregistration: %v", err)
				case !errors.Is(err, rpma.ErrClosed) || rpma.Code(err) != rpma.CodeInval:
					t.Errorf("read into a closed region: %v, want ErrClosed (librpma's INVAL)", err)
				}
				got := statuses(collect(t, p.cc, n, strands(d), 30*time.Second), n)
				t.Logf("%s: %v", d.Name, got)
				failed := false
				for i, s := range got {
					switch {
					case s == stranded:
					case s == cq.Success && failed:
						t.Errorf("read %d succeeded after a failed one: %v", i+1, got)
					case s != cq.Success:
						failed = true
					}
				}
				if tc.remote && got[ops] == cq.Success {
					t.Errorf("read of the peer's closed region succeeded")
				}
				p.close(t)
				reconnect(t, d)
			})
		})
	}
}
