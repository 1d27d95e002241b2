// Package errvocab holds the cross-package tests of purerdma's error
// vocabulary (docs/architecture.md, Errors): each kind of failure has one
// sentinel, every package returns it for that kind, and each sentinel also
// matches its errno.
//
// sentinels_test.go checks the vocabulary itself and runs on any host;
// misuse_vm_test.go makes the same misuse of uverbs, cq, mr, rdmacm and
// rsocket on each device and wants the same sentinel from all of them; rpma
// has its rows in both tables (rpma_vm_test.go for the misuse).
package errvocab
