// Package faults checks what a user of rpma sees when things go wrong on
// a real kernel, on rxe and siw: the peer process dies, the link goes
// down, the RDMA device is deleted, a remote access uses a wrong key or a
// region that does not allow it, a CQ overruns, a region is deregistered
// under an operation, and a connection goes to a dead address. For each,
// the user must see the documented completion status or connection
// event, every operation posted must complete or fail (none is dropped
// silently; siw's stranded operations are the documented exception),
// everything must close, and a new connection must work in the same
// process.
//
// docs/faults.md tabulates the outcomes and docs/kernel-notes.md explains
// the kernel behaviour behind them. The peer that is killed is this test
// binary run again with PURERDMA_FAULTS_PEER set (see main_test.go).
// The tests run in the VM:
//
//	go run ./hack/vm test ./test/faults -- -test.v
package faults
