// Package abi holds the Linux RDMA user ABI: the structs and constants of
// the kernel's uapi headers, one Go file per header, named after it. The
// structs carry explicit padding, so that their Go layout is the C layout on
// amd64 and arm64; the tests check every size, offset and constant against
// numbers the C compiler made of the kernel's headers (abi_test.go).
//
// Constants keep their C names so that they can be grepped against the
// headers; struct names are the C names in Go case without the common
// prefix (struct ib_uverbs_create_cq is CreateCQ).
package abi

// The layout and constant tables: see hack/abigen. The headers come from
// make abi-check, which extracts them into .cache/abi/<series>/.
//go:generate go run ../../hack/abigen -headers ../../.cache/abi/6.12/include/uapi
