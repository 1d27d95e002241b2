// Command rdmavm runs Go tests and programs in a QEMU guest that has RDMA
// devices: soft-RoCE (rxe0) and SoftiWARP (siw0) on Debian's kernel, so
// that code written with purerdma can be tested on a laptop or in CI with
// no RDMA NIC.
//
//	go test -exec rdmavm ./...
//	go test -exec 'rdmavm -kernel 6.12 -ctools' ./...
//	go test -exec 'rdmavm -pair' ./transport
//	rdmavm [flags] [--] program [args]
//
// Each invocation boots one guest (two with -pair) from a cached kernel,
// runs the program there with its arguments, its working directory
// (copied into the guest at the same path, testdata included) and the
// host's environment, streams its output and exits with its status.
// purerdma needs no cgo, so a test binary is static and runs in a bare
// initramfs: no root file system, no libibverbs.
//
// The guest tells the program what it has in the environment:
// PURERDMA_VM=1, PURERDMA_VM_ARCH, PURERDMA_VM_KERNEL, and per device
// PURERDMA_RXE=rxe0, PURERDMA_RXE_NETDEV, PURERDMA_RXE_ADDR (an IPv4
// address on the device's netdev), the same for SIW; PURERDMA_CTOOLS=1
// with -ctools; with -pair PURERDMA_PAIR (a or b), PURERDMA_PAIR_ROLE
// (server in a, client in b), PURERDMA_PAIR_DEV, _NETDEV, _ADDR and
// _PEER (the other guest's address). Package uverbs/uverbstest reads them
// for tests.
//
// Kernels come from Debian through apt and are cached, with the siw.ko
// built for each, under the user's cache directory (PURERDMA_CACHE moves
// it); a host without apt passes -vmlinuz and -modules. When the kernel
// starts rdmavm as PID 1 it is the guest's init (package
// internal/vm/guest): the binary users install boots the guests it runs
// in. See docs/testing.md.
package main
