package uverbs

// Access says what a memory region or a QP allows its peers and the local
// device to do (enum ibv_access_flags). Package mr registers regions with
// it; QPAttr.Access sets it for a QP's remote peer.
type Access uint32

// Access flags. Remote write and remote atomic need LocalWrite too, as in
// libibverbs.
const (
	LocalWrite   Access = 1 << 0 // IB_UVERBS_ACCESS_LOCAL_WRITE
	RemoteWrite  Access = 1 << 1 // IB_UVERBS_ACCESS_REMOTE_WRITE
	RemoteRead   Access = 1 << 2 // IB_UVERBS_ACCESS_REMOTE_READ
	RemoteAtomic Access = 1 << 3 // IB_UVERBS_ACCESS_REMOTE_ATOMIC
	// AccessMWBind lets memory windows be bound to a region (see MW).
	AccessMWBind Access = 1 << 4  // IB_UVERBS_ACCESS_MW_BIND
	ZeroBased    Access = 1 << 5  // IB_UVERBS_ACCESS_ZERO_BASED
	OnDemand     Access = 1 << 6  // IB_UVERBS_ACCESS_ON_DEMAND
	RelaxedOrder Access = 1 << 20 // IB_UVERBS_ACCESS_RELAXED_ORDERING
	// AccessFlushGlobal and AccessFlushPersistent let peers send RDMA FLUSH of that
	// type to a region, or through a QP (QPAttr.Access). Linux 6.2 and
	// later, only on a device whose DeviceAttr.FlushTypes has the type:
	// older kernels refuse the bits (EINVAL), newer ones refuse them on
	// such a device. rxe refuses FlushPersistent for memory that is not
	// persistent memory (EINVAL).
	AccessFlushGlobal     Access = 1 << 8 // IB_UVERBS_ACCESS_FLUSH_GLOBAL
	AccessFlushPersistent Access = 1 << 9 // IB_UVERBS_ACCESS_FLUSH_PERSISTENT
)
