// Package abi holds the Linux RDMA user ABI: the structs and constants of
// the kernel's uapi headers, one Go file per header, named after it. The
// structs carry explicit padding, so that their Go layout is the C layout on
// amd64 and arm64; the tests check every size and offset against numbers
// printed by the C compiler from the Linux 6.1 headers.
//
// Constants keep their C names so that they can be grepped against the
// headers; struct names are the C names in Go case without the common
// prefix (struct ib_uverbs_create_cq is CreateCQ).
package abi
