package uverbs

import (
	"fmt"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/ucmd"
	"github.com/purerdma/purerdma/internal/verbs"
)

// AttachMcast makes the UD QP receive the datagrams sent to the multicast
// group gid (ibv_attach_mcast). lid is the group's multicast LID on
// InfiniBand; RoCE ignores it (pass 0). On RoCE a group is an IPv6
// multicast address (ff00::/8), or an IPv4 one (224.0.0.0/4) in its
// IPv4-mapped form ::ffff:a.b.c.d, as the connection manager names IPv4
// groups. Any other GID fails with ErrInvalid before any system call, as
// the kernel would; the kernel refuses QPs other than UD (EINVAL).
//
// A QP cannot be destroyed while attached (EBUSY): detach it first.
//
// Joining the group in the fabric (the subnet manager's multicast tree on
// InfiniBand) is the connection manager's part (rdmacm's JoinMulticast),
// which also gives the group's address and QKey to send with.
func (qp *QP) AttachMcast(gid GID, lid uint16) error {
	if qp == nil {
		return ErrClosed
	}
	if qp.closed.Load() {
		return ErrClosed
	}
	if !gid.IsMulticast() {
		return invalid("uverbs: attach QP %d to multicast group %v: not a multicast GID", qp.num, gid)
	}
	req := abi.AttachMcast{GID: gid, QPHandle: qp.handle, MLID: lid}
	cmd := ucmd.Cmd{Num: abi.IB_USER_VERBS_CMD_ATTACH_MCAST, Req: ucmd.Bytes(&req)}
	if err := qp.do(&cmd); err != nil {
		return fmt.Errorf("uverbs: attach QP %d to multicast group %v: %w", qp.num, gid, verbs.Public(err))
	}
	return nil
}

// DetachMcast undoes AttachMcast (ibv_detach_mcast). Detaching from a
// group the QP is not attached to fails (EINVAL from the kernel).
func (qp *QP) DetachMcast(gid GID, lid uint16) error {
	if qp == nil {
		return ErrClosed
	}
	if qp.closed.Load() {
		return ErrClosed
	}
	if !gid.IsMulticast() {
		return invalid("uverbs: detach QP %d from multicast group %v: not a multicast GID", qp.num, gid)
	}
	req := abi.DetachMcast{GID: gid, QPHandle: qp.handle, MLID: lid}
	cmd := ucmd.Cmd{Num: abi.IB_USER_VERBS_CMD_DETACH_MCAST, Req: ucmd.Bytes(&req)}
	if err := qp.do(&cmd); err != nil {
		return fmt.Errorf("uverbs: detach QP %d from multicast group %v: %w", qp.num, gid, verbs.Public(err))
	}
	return nil
}

// IsMulticast reports whether g names a multicast group: an IPv6
// multicast address, or an IPv4-mapped IPv4 one (rdma_is_multicast_addr).
func (g GID) IsMulticast() bool {
	if g[0] == 0xff {
		return true
	}
	return [12]byte(g[:12]) == [12]byte{10: 0xff, 11: 0xff} && g[12]&0xf0 == 0xe0
}
