// Package rpmaexamples holds, in testdata/peer.c, the C peer of
// cmd/rpma-examples' TestCPeer: our own C program on Debian's librpma
// that does on the wire what each of librpma's examples does (private
// data, message order, flags, who disconnects first), so that every Go
// port is checked against C librpma in both directions in make test.
// hack/vm compiles it with -ctools into /opt/purerdma/test/rpmaexamples,
// where testenv.TestPeer finds it. The package has no Go code of its
// own: peer.c is in testdata because go build refuses C files in a
// package that does not use cgo.
package rpmaexamples
