// Package soak runs purerdma for a long time under faults and checks that
// nothing is lost and nothing grows (issue 20).
//
// On each device of the test VM (rxe and siw, side by side, each on a
// device the soak creates on a veth pair of its own) a worker makes
// connections through rpma over and over, moves verified data over each
// (RDMA write, an 8-byte atomic write, flush, RDMA read of the same bytes,
// send and receive; on a device with atomics, fetch-and-add and
// compare-and-swap over an rdmacm connection), disconnects and closes
// everything. At random intervals a cycle gets a fault mid-transfer: the
// peer, a child process, is killed (SIGKILL); the network device goes
// down and up; or the RDMA device is deleted and created again. Every
// operation posted must end in exactly one completion: a success whose
// data verifies, or an error status after a fault. The one exception is
// the siw gap of docs/faults.md ("Stranded operations on siw"): there the
// last operations posted after the QP failed may never complete, and are
// counted apart. After every teardown the device's RDMA resource counts
// must be back at their baseline; while the workers are paused between
// cycles the process's RSS, fds, mappings and goroutines are sampled, and
// the median of the last tenth of the samples must not exceed that of the
// first tenth after warm-up by more than a stated tolerance. The guest
// kernel's log must show no defect (a BUG, a WARNING, refcount or list
// corruption, an oops) while the soak runs.
//
// It runs in the VM, for -soak.duration (1m by default):
//
//	go run ./hack/vm test -ctools ./test/soak -- -soak.duration 30m -test.timeout 40m
//
// make soak DURATION=30m does the same; make test runs a minute of it.
// The summary it prints is recorded in docs/faults.md ("Soak").
package soak
