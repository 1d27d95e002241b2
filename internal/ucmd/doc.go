// Package ucmd frames uverbs commands for the kernel. It knows the two
// transports of /dev/infiniband/uverbsN, the legacy write() of a command
// header and body and the RDMA_VERBS_IOCTL of attributes, and nothing of
// what the commands mean: the verbs packages fill the abi structs.
//
// Requests and responses are abi structs passed by pointer. The kernel
// copies them during the system call only, so Go memory is safe to use: the
// garbage collector does not move heap objects, and every call keeps its
// buffers alive until the kernel has returned.
package ucmd
