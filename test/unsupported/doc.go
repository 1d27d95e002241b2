// Package unsupported checks the stubs that other operating systems build
// (docs/architecture.md, "Other operating systems"): every public entry
// point that would reach the kernel fails with an error matching
// errors.ErrUnsupported, and those that ask for a device match
// uverbs.ErrNoDevice too. The stubs are selected on Linux by the
// purerdma_stub build tag, which the test needs:
//
//	CGO_ENABLED=0 go test -tags purerdma_stub ./test/unsupported
//
// Without the tag the package holds this comment only.
package unsupported
