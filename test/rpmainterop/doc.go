// Package rpmainterop checks the Go rpma package against Debian's C
// librpma, in both directions, on rxe and siw. The Go sides of the
// exchange and the C peer's process (sides.go) are exported for
// test/twohost, which runs the same exchange between two guests.
//
// testdata/peer.c is a small librpma program: `peer server <addr>
// <port>` and `peer client <addr> <port>`. The server registers a 4096-byte region
// (READ_SRC|WRITE_DST|FLUSH_TYPE_VISIBILITY) starting with "C server
// memory", prints "listening" once rpma_ep_listen returns, accepts one
// connection with librpma's examples' struct common_data as private data
// (uint16 data_offset, uint8 mr_desc_size, uint8 pcfg_desc_size, then
// the 21-byte MR descriptor and the 1-byte peer config descriptor in 24
// bytes: 28 bytes), and after the client disconnects prints its first 128
// bytes as "server memory: ..." (NULs and unprintable bytes as '.'). The
// client decodes the server's common_data, reads 16 bytes from offset 0
// (printing "read: ..."), writes "written by C" at offset 100, flushes it
// for visibility, waits for the flush's completion and disconnects.
//
// hack/vm compiles testdata/peer.c with the host's gcc against -lrpma
// when it packs the C tools (-ctools, as make vm-test does) and puts it
// in the guest as /opt/purerdma/test/rpmainterop, with its shared
// libraries; testenv.TestPeer finds it. (peer.c is in testdata because go
// build refuses C files in a package that does not use cgo.) Run the tests with
//
//	go run ./hack/vm test -ctools ./test/rpmainterop -- -test.v
//
// On a host they skip unless make test-native provides devices and
// PURERDMA_TEST_PEERS names a directory with the compiled peer, named
// rpmainterop.
package rpmainterop
