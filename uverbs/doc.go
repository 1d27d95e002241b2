// Package uverbs is the verbs layer of purerdma: what libibverbs is to C,
// without C. It finds RDMA devices, opens their /dev/infiniband/uverbs*
// character devices and creates the kernel objects (protection domains,
// queue pairs, shared receive queues) that the data path runs on.
//
// Discovery asks the kernel over RDMA netlink, which knows each device's
// driver, and falls back to sysfs where netlink is unavailable.
//
// Every object may be used from several goroutines: a QP's PostSend and
// PostRecv each take a lock of their own, and Close (of an object or of
// its Context) may race with them, which then return ErrClosed. A method
// on a nil object returns ErrClosed too. docs/concurrency.md has the whole
// contract.
package uverbs
