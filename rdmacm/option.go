package rdmacm

import (
	"encoding/binary"
	"fmt"
	"runtime"

	"github.com/purerdma/purerdma/internal/abi"
	"github.com/purerdma/purerdma/internal/ucmd"
	"github.com/purerdma/purerdma/uverbs"
)

// setOption runs RDMA_USER_CM_CMD_SET_OPTION with val as the option's
// bytes.
func (id *ID) setOption(level, name uint32, val []byte) error {
	// The kernel reads val through a pointer hidden in the request:
	// pinning puts it on the heap and keeps it there for the call.
	var pin runtime.Pinner
	pin.Pin(&val[0])
	defer pin.Unpin()
	req := abi.UcmSetOption{Optval: ucmd.Addr(val), ID: id.handle, Level: level, Optname: name, Optlen: uint32(len(val))}
	return id.do(abi.RDMA_USER_CM_CMD_SET_OPTION, ucmd.Bytes(&req), -1, nil)
}

// SetTOS sets the type of service of the ID's traffic
// (RDMA_OPTION_ID_TOS); set it before resolving the route.
func (id *ID) SetTOS(tos uint8) error {
	if id == nil {
		return ErrClosed
	}
	if err := id.setOption(abi.RDMA_OPTION_ID, abi.RDMA_OPTION_ID_TOS, []byte{tos}); err != nil {
		return fmt.Errorf("rdmacm: set TOS: %w", err)
	}
	return nil
}

// SetReuseAddr lets the ID bind an address and port others use
// (RDMA_OPTION_ID_REUSEADDR); set it before Bind.
func (id *ID) SetReuseAddr(on bool) error {
	if id == nil {
		return ErrClosed
	}
	v := make([]byte, 4)
	if on {
		binary.NativeEndian.PutUint32(v, 1)
	}
	if err := id.setOption(abi.RDMA_OPTION_ID, abi.RDMA_OPTION_ID_REUSEADDR, v); err != nil {
		return fmt.Errorf("rdmacm: set REUSEADDR: %w", err)
	}
	return nil
}

// SetAckTimeout sets the QP's local ACK timeout exponent
// (RDMA_OPTION_ID_ACK_TIMEOUT): 4.096 µs × 2^timeout.
func (id *ID) SetAckTimeout(timeout uint8) error {
	if id == nil {
		return ErrClosed
	}
	if err := id.setOption(abi.RDMA_OPTION_ID, abi.RDMA_OPTION_ID_ACK_TIMEOUT, []byte{timeout}); err != nil {
		return fmt.Errorf("rdmacm: set ACK timeout: %w", err)
	}
	return nil
}

// GIDs returns the source and destination GIDs of the ID's route
// (RDMA_USER_CM_QUERY_GID), as rdma_get_local_addr shows them on AF_IB.
func (id *ID) GIDs() (src, dst uverbs.GID, err error) {
	if id == nil {
		return uverbs.GID{}, uverbs.GID{}, ErrClosed
	}
	req := abi.UcmQuery{ID: id.handle, Option: abi.RDMA_USER_CM_QUERY_GID}
	var r abi.UcmQueryAddrResp
	if err := id.do(abi.RDMA_USER_CM_CMD_QUERY, ucmd.Bytes(&req), 0, ucmd.Bytes(&r)); err != nil {
		return src, dst, fmt.Errorf("rdmacm: query GIDs: %w", err)
	}
	// struct sockaddr_ib: family, pkey, flowinfo, then the GID at 8.
	copy(src[:], r.SrcAddr[8:24])
	copy(dst[:], r.DstAddr[8:24])
	return src, dst, nil
}

// NumPaths returns how many path records the ID's resolved route has
// (RDMA_USER_CM_QUERY_PATH); 0 before route resolution.
func (id *ID) NumPaths() (int, error) {
	if id == nil {
		return 0, ErrClosed
	}
	req := abi.UcmQuery{ID: id.handle, Option: abi.RDMA_USER_CM_QUERY_PATH}
	// Room for the header and six records, as librdmacm asks.
	resp := make([]byte, 8+6*72)
	if err := id.do(abi.RDMA_USER_CM_CMD_QUERY, ucmd.Bytes(&req), 0, resp); err != nil {
		return 0, fmt.Errorf("rdmacm: query route: %w", err)
	}
	return int(binary.NativeEndian.Uint32(resp)), nil
}

// Migrate moves the ID to another event channel (rdma_migrate_id); its
// pending events move with it.
func (id *ID) Migrate(to *EventChannel) error {
	if id == nil {
		return ErrClosed
	}
	if err := id.alive(); err != nil {
		return err
	}
	if to == nil {
		return fmt.Errorf("rdmacm: migrate to a nil channel: %w", uverbs.ErrInvalid)
	}
	if to == id.ch {
		return nil
	}
	var oldFD int
	id.ch.raw.Control(func(fd uintptr) { oldFD = int(fd) })
	req := abi.UcmMigrateID{ID: id.handle, FD: uint32(oldFD)}
	var resp abi.UcmMigrateResp
	if err := to.do(abi.RDMA_USER_CM_CMD_MIGRATE_ID, ucmd.Bytes(&req), 0, ucmd.Bytes(&resp)); err != nil {
		return fmt.Errorf("rdmacm: migrate: %w", err)
	}
	from := id.ch
	from.unregister(id)
	id.ch = to
	to.mu.Lock()
	to.ids[id.uid] = id
	to.mu.Unlock()
	return nil
}
