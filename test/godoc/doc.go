// Package godoc checks what a user of purerdma reads: the documentation of
// each public package (go doc -all) names nothing of an internal package,
// neither an internal/... import path nor an abi.NAME constant, so that
// every value, type and constant it shows is one a user can write.
// Constants that stand for the kernel's are written as literals with the
// C name in a comment, and each package's abi_test.go pins them to
// internal/abi.
//
// The test runs the go tool, so only on the host: the VM has neither the
// source tree nor the tool.
package godoc
