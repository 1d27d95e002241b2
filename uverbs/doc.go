// Package uverbs is the verbs layer of purerdma: what libibverbs is to C,
// without C. It finds RDMA devices, opens their /dev/infiniband/uverbs*
// character devices and creates the kernel objects (protection domains,
// queue pairs, shared receive queues) that the data path runs on.
//
// Discovery asks the kernel over RDMA netlink, which knows each device's
// driver, and falls back to sysfs where netlink is unavailable.
//
// An RC QP connects either through the connection manager (package
// rdmacm, which moves the QP itself and is the only way on iWARP), or
// from numbers the two sides exchange out of band, as ibv_rc_pingpong
// and perftest do: QP.Init moves a new QP to INIT, where receives may be
// posted, and QP.ConnectRC on to RTR and RTS with the peer's QP number,
// PSN and GID. QP.Modify does any single transition.
//
// A UD receive lands after GRHSize bytes of global route header, and
// Context.AHAttrFromWC turns that header and the completion (cq.WC.Addr)
// into the address that replies to the sender, as ibv_init_ah_from_wc
// does. QP.AttachMcast makes a UD QP receive a multicast group's
// datagrams; sends go to the group through an AH whose DGID is the group
// and QP number 0xffffff.
//
// Memory windows (PD.AllocMW, bound with a WRBindMW send work request and
// taken back with WRLocalInv) give a peer access to part of a region under
// an rkey of their own; rxe has them, siw does not (EOPNOTSUPP).
//
// For observing a device from outside its data path, Device.Resources
// returns the kernel's count of each kind of object on the device (what
// `rdma resource show` prints, for every process and the kernel), and
// Device.PortCounters a port's counters from sysfs (what `rdma statistic
// show` prints, where the driver keeps any: rxe does, siw does not).
//
// Every object may be used from several goroutines: a QP's PostSend and
// PostRecv each take a lock of their own, and Close (of an object or of
// its Context) may race with them, which then return ErrClosed. A method
// on a nil object returns ErrClosed too. docs/concurrency.md has the whole
// contract.
//
// On operating systems other than Linux the package compiles, and every
// call that would reach the kernel returns an error matching
// errors.ErrUnsupported, and ErrNoDevice as well where a device is asked
// for (Devices, DeviceByName, Open, OpenName).
package uverbs
