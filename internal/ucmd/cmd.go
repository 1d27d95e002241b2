package ucmd

import (
	"encoding/binary"
	"fmt"

	"github.com/purerdma/purerdma/internal/abi"
)

// Cmd is one uverbs write command: the core request and response of
// ib_user_verbs.h, and the provider's (udata) bytes that follow each.
type Cmd struct {
	Num    uint32 // IB_USER_VERBS_CMD_* or, with Ex, IB_USER_VERBS_EX_CMD_*
	Ex     bool   // an extended command, framed with ib_uverbs_ex_cmd_hdr
	Req    []byte // core request; for a non-Ex command with a response its first 8 bytes are the response pointer, which Do fills in
	Resp   []byte // core response, written by the kernel
	DrvIn  []byte // provider request
	DrvOut []byte // provider response, written by the kernel
}

// FD is an open uverbs command file descriptor.
type FD struct {
	fd       int
	driverID uint32
	ioctl    bool
}

// NewFD wraps the command fd of a device whose driver is driverID (the
// ioctl path must name it). The caller keeps ownership of fd.
func NewFD(fd int, driverID uint32) *FD { return &FD{fd: fd, driverID: driverID} }

// UseIoctl makes Do send write commands through the ioctl path
// (UVERBS_METHOD_INVOKE_WRITE), as rdma-core does when the kernel has it.
func (f *FD) UseIoctl(on bool) { f.ioctl = on }

// Ioctl reports whether Do uses the ioctl path.
func (f *FD) Ioctl() bool { return f.ioctl }

// Int returns the file descriptor number.
func (f *FD) Int() int { return f.fd }

// Do runs c and fills its Resp and DrvOut.
func (f *FD) Do(c *Cmd) error {
	if f.ioctl {
		return f.invokeWrite(c)
	}
	return f.write(c)
}

// encodeWrite frames c for write(). It returns the bytes to write and the
// buffer the kernel writes the response into: the core response followed
// directly by the provider's, as the kernel expects them.
func encodeWrite(c *Cmd) (in, out []byte, err error) {
	out = make([]byte, len(c.Resp)+len(c.DrvOut))
	hdr := abi.CmdHdr{Command: c.Num}
	if c.Ex {
		// Extended commands count 8-byte words of the core payload only.
		if len(c.Req)%8 != 0 || len(c.Resp)%8 != 0 || len(c.DrvIn)%8 != 0 || len(c.DrvOut)%8 != 0 {
			return nil, nil, fmt.Errorf("%s: extended command parts must be multiples of 8 bytes", cmdName(c))
		}
		hdr.Command |= abi.IB_USER_VERBS_CMD_FLAG_EXTENDED
		hdr.InWords = uint16(len(c.Req) / 8)
		hdr.OutWords = uint16(len(c.Resp) / 8)
		ex := abi.ExCmdHdr{
			Response:         addr(out),
			ProviderInWords:  uint16(len(c.DrvIn) / 8),
			ProviderOutWords: uint16(len(c.DrvOut) / 8),
		}
		in = concat(bytesOf(&hdr), bytesOf(&ex), c.Req, c.DrvIn)
		return in, out, nil
	}
	// Legacy commands count 4-byte words of everything, header included.
	size := sizeofCmdHdr + len(c.Req) + len(c.DrvIn)
	if size%4 != 0 || len(out)%4 != 0 {
		return nil, nil, fmt.Errorf("%s: command parts must be multiples of 4 bytes", cmdName(c))
	}
	hdr.InWords = uint16(size / 4)
	hdr.OutWords = uint16(len(out) / 4)
	in = concat(bytesOf(&hdr), c.Req, c.DrvIn)
	if len(c.Resp) > 0 {
		if len(c.Req) < 8 {
			return nil, nil, fmt.Errorf("%s: request has no response field", cmdName(c))
		}
		binary.NativeEndian.PutUint64(in[sizeofCmdHdr:], addr(out))
	}
	return in, out, nil
}

const sizeofCmdHdr = 8

func concat(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}
