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
// for visibility, waits for the flush's completion, writes "C atomic" at
// offset 120 with rpma_atomic_write, prints its completion's opcode
// ("atomic write opcode: N": 9 native, 1 emulated) and disconnects.
//
// Debian 12 ships librpma 1.2.0 and rdma-core 44. librpma 1.2's source
// has native ATOMIC WRITE, but Debian's librpma0 1.2.0-1 was built
// without it (IBV_WR_ATOMIC_WRITE_SUPPORTED undefined): the C client's
// atomic write is a fenced inline RDMA write on every kernel, and librpma
// says so ("Native atomic write is not supported", printed with the client's
// log threshold at INFO). No librpma 1.2 has native FLUSH (ibv_wr_flush
// came in rdma-core 45, librpma's native flush in 1.3). So the native
// operations between Go and C are the Go client's ATOMIC WRITE into the
// C server's memory, and the Go client flushes C memory with a
// FlushEmulated peer; TestCServerGoClientNativeFlush shows what a default
// peer's native flush gets instead. docs/librpma-mapping.md has the
// details.
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
