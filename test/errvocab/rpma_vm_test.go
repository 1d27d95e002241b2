package errvocab_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/purerdma/purerdma/rpma"
	"github.com/purerdma/purerdma/uverbs"
)

// rpmaRows: rpma's misuse, on a peer of the fixture's device. A closed
// object answers uverbs.ErrClosed (rpma.Code: librpma's INVAL), a bad
// argument uverbs.ErrInvalid, what cannot be done uverbs.ErrUnsupported.
// rpma's own tests (rpma/sentinels_test.go, TestClosedObjects) cover
// every method; these rows are the vocabulary's view.
func (f *fixture) rpmaRows(t *testing.T) []misuse {
	t.Helper()
	// Advise logs its NOSUPP at LogError, as librpma does.
	rpma.SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { rpma.SetLogger(nil) })
	peer, err := rpma.NewPeer(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })
	region, err := peer.RegisterMR(f.buf, rpma.UsageReadSrc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { region.Close() })
	closedMR, err := peer.RegisterMR(f.buf, rpma.UsageReadSrc)
	if err != nil {
		t.Fatal(err)
	}
	closedMR.Close()
	closedPeer, err := rpma.NewPeer(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	closedPeer.Close()
	// A device with on-demand paging (6.18's rxe) has ADVISE_MR; for a
	// region not registered on demand it answers EFAULT, librpma's
	// RPMA_E_INVAL. Elsewhere there is no ADVISE_MR to answer.
	advise, adviseWant := "Advise (no ADVISE_MR)", uverbs.ErrUnsupported
	if peer.ODP() {
		advise, adviseWant = "Advise a region not on demand (ADVISE_MR's EFAULT)", uverbs.ErrInvalid
	}
	return []misuse{
		{pkg: "rpma", what: "RegisterMR on a closed Peer", want: uverbs.ErrClosed,
			call: func() error { _, err := closedPeer.RegisterMR(f.buf, rpma.UsageReadSrc); return err }},
		{pkg: "rpma", what: "Advise a closed MR", want: uverbs.ErrClosed,
			call: func() error { return closedMR.Advise(0, 8, rpma.AdvicePrefetch, 0) }},
		{pkg: "rpma", what: "RegisterMR an empty buffer", want: uverbs.ErrInvalid,
			call: func() error { _, err := peer.RegisterMR(f.buf[:0], rpma.UsageReadSrc); return err }},
		{pkg: "rpma", what: "RegisterMR Go memory", want: uverbs.ErrInvalid,
			call: func() error { _, err := peer.RegisterMR(make([]byte, 64), rpma.UsageReadSrc); return err }},
		{pkg: "rpma", what: "RegisterMR with usage 0", want: uverbs.ErrInvalid,
			call: func() error { _, err := peer.RegisterMR(f.buf, 0); return err }},
		{pkg: "rpma", what: "Advise past the region", want: uverbs.ErrInvalid,
			call: func() error { return region.Advise(4096, 1, rpma.AdvicePrefetch, 0) }},
		{pkg: "rpma", what: advise, want: adviseWant,
			call: func() error { return region.Advise(0, 8, rpma.AdvicePrefetch, 0) }},
	}
}
