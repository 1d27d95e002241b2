// Constants from include/uapi/linux/veth.h (Linux 6.1), which
// golang.org/x/sys/unix does not carry.

package abi

// VETH_INFO_PEER is the attribute of IFLA_INFO_DATA that describes the
// peer of a new veth: an ifinfomsg followed by IFLA_* attributes.
const VETH_INFO_PEER = 1
