package rdmacm

import (
	"errors"
	"fmt"
	"net/netip"
	"syscall"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/ucmd"
	"github.com/purerdma/purerdma/internal/verbs"
	"github.com/purerdma/purerdma/uverbs"
)

// ErrNotJoined is returned, wrapped, by LeaveMulticast for a group the ID
// has not joined. It matches syscall.EADDRNOTAVAIL as well, the errno of
// rdma_leave_multicast for it.
var ErrNotJoined = verbs.NewSentinel("multicast group not joined", syscall.EADDRNOTAVAIL)

// mcJoin is one multicast group an ID joined.
type mcJoin struct {
	addr   netip.Addr
	handle uint32 // the kernel's id of the join
	joined bool   // EventMulticastJoin came
	gid    uverbs.GID
	lid    uint16
	attach bool // the ID's QP is attached to gid
}

// JoinMulticast joins the multicast group addr (rdma_join_multicast) on a
// UDP-port-space ID bound to a local address (Bind or ResolveAddr). The
// outcome comes as an event on the ID: EventMulticastJoin, whose Param
// holds the group's address (AH; its DGID is the group's GID), QP number
// (0xffffff) and QKey to send to it with, or EventMulticastError. On
// EventMulticastJoin the ID's QP, if CreateQP made one, is attached to the
// group, as librdmacm does, so that it receives the group's datagrams.
// On RoCE the join also makes the network interface a member of the IP
// group (IGMP/MLD), which the datagrams need to arrive.
func (id *ID) JoinMulticast(addr netip.Addr) error {
	if id == nil {
		return ErrClosed
	}
	if err := id.alive(); err != nil {
		return err
	}
	if !addr.IsValid() || !addr.Unmap().IsMulticast() {
		return fmt.Errorf("rdmacm: join multicast %v: not a multicast address: %w", addr, uverbs.ErrInvalid)
	}
	if id.ps != UDP {
		return fmt.Errorf("rdmacm: join multicast %v: needs the UDP port space: %w", addr, uverbs.ErrInvalid)
	}
	req := abi.UcmJoinMcast{UID: id.uid, ID: id.handle, JoinFlags: abi.RDMA_MC_JOIN_FLAG_FULLMEMBER}
	req.AddrSize = uint16(encodeSockaddr(req.Addr[:], netip.AddrPortFrom(addr.Unmap(), 0)))
	var resp abi.UcmCreateIDResp
	if err := id.do(abi.RDMA_USER_CM_CMD_JOIN_MCAST, ucmd.Bytes(&req), 0, ucmd.Bytes(&resp)); err != nil {
		return fmt.Errorf("rdmacm: join multicast %v: %w", addr, err)
	}
	id.mu.Lock()
	id.joins = append(id.joins, &mcJoin{addr: addr.Unmap(), handle: resp.ID})
	id.mu.Unlock()
	return nil
}

// LeaveMulticast leaves a group joined with JoinMulticast
// (rdma_leave_multicast), detaching the ID's QP from it first.
func (id *ID) LeaveMulticast(addr netip.Addr) error {
	if id == nil {
		return ErrClosed
	}
	if err := id.alive(); err != nil {
		return err
	}
	id.mu.Lock()
	var j *mcJoin
	for i, x := range id.joins {
		if x.addr == addr.Unmap() {
			j = x
			id.joins = append(id.joins[:i], id.joins[i+1:]...)
			break
		}
	}
	qp := id.qp
	id.mu.Unlock()
	if j == nil {
		return fmt.Errorf("rdmacm: leave multicast %v: %w", addr, ErrNotJoined)
	}
	var errs []error
	if j.attach && qp != nil {
		if err := qp.DetachMcast(j.gid, j.lid); err != nil {
			errs = append(errs, err)
		}
	}
	req := abi.UcmDestroyID{ID: j.handle}
	var resp abi.UcmDestroyIDResp
	if err := id.do(abi.RDMA_USER_CM_CMD_LEAVE_MCAST, ucmd.Bytes(&req), 0, ucmd.Bytes(&resp)); err != nil {
		errs = append(errs, fmt.Errorf("rdmacm: leave multicast %v: %w", addr, err))
	}
	return errors.Join(errs...)
}

// joinedEvent records the group of an EventMulticastJoin and attaches the
// ID's QP to it. The event names the ID, not the join, so it goes to the
// pending join whose address is the group GID (IPv4 groups are mapped,
// as on RoCE), else to the oldest pending one.
func (id *ID) joinedEvent(p *ConnParam) error {
	g := p.AH.GRH.DGID
	id.mu.Lock()
	var j *mcJoin
	for _, x := range id.joins {
		if !x.joined && x.addr.As16() == [16]byte(g) {
			j = x
			break
		}
	}
	if j == nil {
		for _, x := range id.joins {
			if !x.joined {
				j = x
				break
			}
		}
	}
	qp := id.qp
	if j != nil {
		j.joined, j.gid, j.lid = true, g, p.AH.DLID
	}
	id.mu.Unlock()
	if j == nil || qp == nil {
		return nil
	}
	if err := qp.AttachMcast(g, p.AH.DLID); err != nil {
		return fmt.Errorf("rdmacm: join multicast: %w", err)
	}
	id.mu.Lock()
	j.attach = true
	id.mu.Unlock()
	return nil
}

// detachAll detaches the QP from every group before it is destroyed,
// which the kernel refuses while it is attached.
func (id *ID) detachAll() {
	id.mu.Lock()
	joins, qp := id.joins, id.qp
	id.joins = nil
	id.mu.Unlock()
	for _, j := range joins {
		if j.attach && qp != nil {
			qp.DetachMcast(j.gid, j.lid)
		}
	}
}
