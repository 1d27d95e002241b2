// Package uverbs is the verbs layer of purerdma: what libibverbs is to C,
// without C. It finds RDMA devices, opens their /dev/infiniband/uverbs*
// character devices and creates the kernel objects (protection domains,
// queue pairs, shared receive queues) that the data path runs on.
//
// Discovery asks the kernel over RDMA netlink, which knows each device's
// driver, and falls back to sysfs where netlink is unavailable.
package uverbs
