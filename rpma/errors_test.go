package rpma_test

// Every case of the ERRORS sections of librpma 1.3.0's man pages (the
// doc comments of src/include/librpma.h at tag 1.3.0, from which
// doc/manuals_3.txt's pages are generated) is a row of a table-driven
// test, here (no device needed) or in errors_vm_test.go (rxe and siw in
// the test VM), when it has a Go equivalent. A row checks
// errors.Is(err, the man page's sentinel). Rows marked "Go:" test a check
// the Go API adds that C does not list. The sentinel of RPMA_E_INVAL is
// ErrInvalid (uverbs.ErrInvalid), of RPMA_E_NOSUPP ErrUnsupported
// (uverbs.ErrUnsupported); a closed object answers ErrClosed, which Code
// maps to RPMA_E_INVAL (sentinels_test.go).
//
// The C cases with no Go equivalent, and why:
//
//	| librpma 1.3 function                    | C case                                            | Why there is no Go equivalent |
//	|-----------------------------------------|---------------------------------------------------|-------------------------------|
//	| every function                          | INVAL: an out-pointer (…_ptr, fd, size, qp_num,   | Results are return values, not out-pointers. A nil object (the receiver) is |
//	|                                         | pdata, desc, level…) is NULL                      | ErrInvalid, as in C: TestNilReceivers (badinput_test.go) calls every method on nil. |
//	| rpma_cq_get_wc                          | INVAL: num_entries > 1 and num_entries_got NULL   | The count is GetWC's result; num_entries is len(wc), never negative. |
//	| rpma_peer_cfg_new/delete/set/get_direct_write_to_pmem, get_descriptor(_size) | INVAL: NULL | PeerConfig is a value; the size is a constant. Cannot fail. |
//	| rpma_conn_cfg_* (new, delete, all get/set but timeout) | INVAL: cfg or out-pointer NULL     | ConnConfig is a struct with exported fields; a nil *ConnConfig means the defaults. |
//	| rpma_srq_cfg_* (new, delete, get/set)   | INVAL: cfg or out-pointer NULL                    | SRQConfig is a struct; a nil *SRQConfig means the defaults. |
//	| rpma_mr_get_descriptor(_size), get_ptr, get_size, remote_get_size, remote_get_flush_type, remote_delete | INVAL: NULL | Getters of non-nil receivers and constants; *RemoteMR is garbage collected. |
//	| rpma_conn_get_event_fd, get_private_data, get_qp_num, get_cq, get_rcq, apply_remote_peer_cfg, rpma_cq_get_fd, rpma_ep_get_fd, rpma_srq_get_rcq, rpma_conn_req_get_private_data | INVAL: NULL | Getters without an error result. |
//	| rpma_atomic_write                       | INVAL: src is NULL                                | src is a [8]byte value. |
//	| rpma_conn_req_connect                   | INVAL: pdata != NULL && pdata->len == 0           | private is a []byte; nil and empty both mean "no private data". |
//	| rpma_log_get_threshold                  | INVAL: *level is NULL                             | The level is the return value. |
//	| rpma_log_set_threshold, rpma_log_set_function | AGAIN: temporary error                      | Go's mutex cannot fail; SetLogger has no error result. |
//	| every function that allocates           | NOMEM: out of memory                              | Go's allocator panics instead of failing; PD/CQ/QP creation ENOMEM from the |
//	|                                         |                                                   | kernel is ErrProvider wrapping unix.ENOMEM (not triggerable in a test). |
//	| rpma_peer_new                           | UNKNOWN: PD allocation failed without an errno    | The ioctl always has an errno. |
//	| rpma_cq_get_wc                          | UNKNOWN: poll failed without a provider error     | cq.Poll returns an error with its cause, or a count. |
//	| rpma_conn_next_event                    | UNKNOWN: unexpected event                         | No event the kernel sends to a connected ID is unmapped; not triggerable. |
//	| rpma_conn_wait                          | UNKNOWN: ibv_get_cq_event returned an unknown CQ  | Only the connection's CQs are on its channel; not triggerable. |
//	| rpma_cq_wait, rpma_conn_wait            | NO_COMPLETION: no completion (non-blocking fd) /  | Waiting takes a context: an ended context returns ctx.Err() (Code: |
//	|                                         | ibv_get_cq_event failed                           | CodeUnknown); a failed read of the channel is not triggerable. |
//	| rpma_ep_next_conn_req                   | INVAL: an event other than a connection request   | A listener only gets other events on device removal; not triggerable in the VM. |
//	| rpma_mr_advise                          | INVAL: the usage does not allow the advice        | Go does not check usage against advice: with no ADVISE_MR ioctl every valid |
//	|                                         |                                                   | call is ErrUnsupported (see the mismatches). |
//	| rpma_mr_advise                          | PROVIDER: ibv_advise_mr failed                    | No ADVISE_MR ioctl: Advise never calls the kernel. |
//	| rpma_read, rpma_write, rpma_write_with_imm, rpma_atomic_write, rpma_flush, rpma_send, rpma_send_with_imm, rpma_recv, rpma_srq_recv, rpma_conn_req_recv | PROVIDER: ibv_post_send/recv failed | Not deterministically triggerable on rxe/siw (a full queue depends on completion timing); Go checks ranges first (ErrInvalid). |
//	| rpma_cq_wait, rpma_conn_wait, rpma_cq_get_wc | PROVIDER: ibv_req_notify_cq / ibv_poll_cq failed | Not triggerable on a live CQ. |
//	| rpma_peer_delete, rpma_mr_reg, rpma_mr_dereg, rpma_conn_delete, rpma_conn_disconnect, rpma_conn_req_delete, rpma_ep_shutdown, rpma_srq_new, rpma_srq_delete, rpma_conn_next_event | PROVIDER: a verbs or rdma_cm call failed | Not triggerable on a healthy device without breaking the kernel objects first. |
//	| rpma_conn_delete                        | INVAL: munmap() failed                            | Not triggerable: the scratch page is the connection's own mapping. |
//	| rpma_conn_req_connect                   | PROVIDER: accepting failed / freeing the event failed (passive side) | Not tested: only the active side's oversized private data is (errors_vm_test.go). |
//
// Mismatches between a man page and the Go code (not tested for the man
// page's sentinel):
//
//	| Go                        | C man page says                                     | Go returns |
//	|---------------------------|-----------------------------------------------------|------------|
//	| rpma.RemoteMRFromDescriptor (rpma/mr.go) | NOSUPP: the descriptor is not a valid region (usage 0) | ErrInvalid (as librpma 1.3's code does; tested as a "Go:" row) |
//
// Checked in the VM but outside the man pages: a receive on a connection
// that takes its receives from an SRQ is ErrInvalid in Go (C posts it and
// gets PROVIDER); rpma_recv(3) does not list it.

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/rpma"
)

// errCase is one row: a call and the sentinel its error must match.
type errCase struct {
	name string // "rpma_function: the man page's case"
	call func() error
	want error
}

// notHere is what a row's call returns when its case cannot be made on
// this host; the row skips, saying why.
type notHere string

func (n notHere) Error() string { return string(n) }

// runErrCases runs each row as a subtest.
func runErrCases(t *testing.T, cases []errCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if why, ok := err.(notHere); ok {
				t.Skip(string(why))
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
}

// TestErrCasesHost covers the man pages' error cases that need no device.
func TestErrCasesHost(t *testing.T) {
	ctx := t.Context()
	wc := make([]cq.WC, 2)
	runErrCases(t, []errCase{
		// rpma_utils_get_ibv_context(3)
		{"rpma_utils_get_ibv_context: addr is NULL", func() error {
			_, err := rpma.ContextByAddr(ctx, netip.Addr{}, rpma.ContextLocal)
			return err
		}, rpma.ErrInvalid},
		{"rpma_utils_get_ibv_context: addr is NULL, remote", func() error {
			_, err := rpma.ContextByAddr(ctx, netip.Addr{}, rpma.ContextRemote)
			return err
		}, rpma.ErrInvalid},
		{"rpma_utils_get_ibv_context: type is unknown", func() error {
			_, err := rpma.ContextByAddr(ctx, netip.MustParseAddr("127.0.0.1"), rpma.ContextType(2))
			return err
		}, rpma.ErrInvalid},
		{"rpma_utils_get_ibv_context: type is negative", func() error {
			_, err := rpma.ContextByAddr(ctx, netip.MustParseAddr("127.0.0.1"), rpma.ContextType(-1))
			return err
		}, rpma.ErrInvalid},

		// rpma_utils_ibv_context_is_odp_capable(3)
		{"rpma_utils_ibv_context_is_odp_capable: ibv_ctx is NULL", func() error {
			_, err := rpma.IsODPCapable(nil)
			return err
		}, rpma.ErrInvalid},

		// rpma_peer_cfg_from_descriptor(3)
		{"rpma_peer_cfg_from_descriptor: desc is NULL", func() error {
			_, err := rpma.PeerConfigFromDescriptor(nil)
			return err
		}, rpma.ErrInvalid},
		{"rpma_peer_cfg_from_descriptor: desc is empty", func() error {
			_, err := rpma.PeerConfigFromDescriptor([]byte{})
			return err
		}, rpma.ErrInvalid},

		// rpma_peer_new(3)
		{"rpma_peer_new: ibv_ctx is NULL", func() error {
			_, err := rpma.NewPeer(nil)
			return err
		}, rpma.ErrInvalid},
		{"Go: NewPeerWithOptions: ibv_ctx is NULL", func() error {
			_, err := rpma.NewPeerWithOptions(nil, rpma.PeerOptions{Flush: rpma.FlushEmulated})
			return err
		}, rpma.ErrInvalid},

		// rpma_mr_remote_from_descriptor(3)
		{"rpma_mr_remote_from_descriptor: desc is NULL", func() error {
			_, err := rpma.RemoteMRFromDescriptor(nil)
			return err
		}, rpma.ErrInvalid},
		{"rpma_mr_remote_from_descriptor: incompatible descriptor size", func() error {
			_, err := rpma.RemoteMRFromDescriptor(make([]byte, rpma.DescriptorSize-1))
			return err
		}, rpma.ErrInvalid},
		{"Go: rpma_mr_remote_from_descriptor: usage 0 (man page: NOSUPP, code: INVAL)", func() error {
			_, err := rpma.RemoteMRFromDescriptor(make([]byte, rpma.DescriptorSize))
			return err
		}, rpma.ErrInvalid},

		// rpma_mr_advise(3): a nil region; the range and flag cases need a
		// registered region (errors_vm_test.go and advise_test.go).
		{"Go: rpma_mr_advise: mr is NULL", func() error {
			return (*rpma.MR)(nil).Advise(0, 0, rpma.AdvicePrefetch, 0)
		}, rpma.ErrInvalid},

		// rpma_cq_get_wc(3): a nil CQ; the count cases need a CQ
		// (errors_vm_test.go).
		{"rpma_cq_get_wc: cq is NULL", func() error {
			_, err := (*rpma.CQ)(nil).GetWC(wc)
			return err
		}, rpma.ErrInvalid},

		// rpma_log_set_threshold(3)
		{"rpma_log_set_threshold: threshold is not RPMA_LOG_THRESHOLD nor RPMA_LOG_THRESHOLD_AUX", func() error {
			return rpma.SetLogThreshold(rpma.LogThresholdKind(2), rpma.LogWarning)
		}, rpma.ErrInvalid},
		{"rpma_log_set_threshold: threshold is negative", func() error {
			return rpma.SetLogThreshold(rpma.LogThresholdKind(-1), rpma.LogWarning)
		}, rpma.ErrInvalid},
		{"rpma_log_set_threshold: level above RPMA_LOG_LEVEL_DEBUG", func() error {
			return rpma.SetLogThreshold(rpma.LogThresholdPrimary, rpma.LogDebug+1)
		}, rpma.ErrInvalid},
		{"rpma_log_set_threshold: level below RPMA_LOG_DISABLED", func() error {
			return rpma.SetLogThreshold(rpma.LogThresholdAux, rpma.LogDisabled-1)
		}, rpma.ErrInvalid},

		// rpma_log_get_threshold(3)
		{"rpma_log_get_threshold: threshold is not RPMA_LOG_THRESHOLD nor RPMA_LOG_THRESHOLD_AUX", func() error {
			_, err := rpma.LogThreshold(rpma.LogThresholdKind(2))
			return err
		}, rpma.ErrInvalid},
		{"rpma_log_get_threshold: threshold is negative", func() error {
			_, err := rpma.LogThreshold(rpma.LogThresholdKind(-1))
			return err
		}, rpma.ErrInvalid},
	})
}
