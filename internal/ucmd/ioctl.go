package ucmd

import (
	"encoding/binary"
	"fmt"
	"runtime"

	"github.com/purerdma/purerdma/internal/abi"
)

// Method is one RDMA_VERBS_IOCTL call under construction: an object, a
// method and its attributes. Build it with the attribute methods, run it
// with FD.Run, then read back what the kernel wrote.
type Method struct {
	Object, ID uint16
	attrs      []abi.Attr
	bufs       []attrBuf // memory the attributes point to, kept alive through the call
}

// attrBuf is the memory attribute id points to.
type attrBuf struct {
	id uint16
	b  []byte
}

// NewMethod starts a call of method id on object.
func NewMethod(object, id uint16) *Method { return &Method{Object: object, ID: id} }

func (m *Method) add(a abi.Attr, buf []byte) {
	a.Flags |= abi.UVERBS_ATTR_F_MANDATORY
	m.attrs = append(m.attrs, a)
	if buf != nil {
		m.bufs = append(m.bufs, attrBuf{a.AttrID, buf})
	}
}

// In adds a PTR_IN attribute. Up to 8 bytes travel inline in the attribute.
func (m *Method) In(id uint16, b []byte) {
	a := abi.Attr{AttrID: id, Len: uint16(len(b))}
	if len(b) <= 8 {
		var v [8]byte
		copy(v[:], b)
		a.Data = binary.NativeEndian.Uint64(v[:])
		m.add(a, nil)
		return
	}
	a.Data = addr(b)
	m.add(a, b)
}

// Out adds a PTR_OUT attribute: the kernel writes up to len(b) bytes to b.
func (m *Method) Out(id uint16, b []byte) {
	m.add(abi.Attr{AttrID: id, Len: uint16(len(b)), Data: addr(b)}, b)
}

// Const adds a CONST_IN attribute, sent as rdma-core does: 8 bytes inline.
func (m *Method) Const(id uint16, v uint64) {
	m.add(abi.Attr{AttrID: id, Len: 8, Data: v}, nil)
}

// Handle adds an IDR or FD attribute: an existing object handle or fd, or
// for a new object a placeholder the kernel overwrites (see Data).
func (m *Method) Handle(id uint16, h uint64) {
	m.add(abi.Attr{AttrID: id, Data: h}, nil)
}

// Data returns the data field of attribute id after the call: the handle
// or fd of a new object.
func (m *Method) Data(id uint16) (uint64, bool) {
	for _, a := range m.attrs {
		if a.AttrID == id {
			return a.Data, true
		}
	}
	return 0, false
}

// Frame returns what Run hands the kernel for m on a device of driver
// driverID (RDMA_DRIVER_*): the ioctl header and the attributes. A test
// compares it with the bytes rdma-core sends.
func (m *Method) Frame(driverID uint32) []byte {
	hdr := abi.IoctlHdr{
		Length:   uint16(sizeofIoctlHdr + sizeofAttr*len(m.attrs)),
		ObjectID: m.Object,
		MethodID: m.ID,
		NumAttrs: uint16(len(m.attrs)),
		DriverID: driverID,
	}
	buf := make([]byte, 0, hdr.Length)
	buf = append(buf, bytesOf(&hdr)...)
	for i := range m.attrs {
		buf = append(buf, bytesOf(&m.attrs[i])...)
	}
	return buf
}

// Payload returns the bytes attribute id carries: those inline in its
// data field, or the memory it points to. A test checks an array
// attribute's contents with it.
func (m *Method) Payload(id uint16) []byte {
	for _, b := range m.bufs {
		if b.id == id {
			return b.b
		}
	}
	for _, a := range m.attrs {
		if a.AttrID == id && a.Len <= 8 {
			var v [8]byte
			binary.NativeEndian.PutUint64(v[:], a.Data)
			return v[:a.Len]
		}
	}
	return nil
}

// Run calls the method on f's device.
func (f *FD) Run(m *Method) error {
	buf := m.Frame(f.driverID)
	err := ioctl(f.fd, abi.RDMA_VERBS_IOCTL, buf)
	runtime.KeepAlive(m.bufs)
	// The kernel writes back new handles and VALID_OUTPUT flags.
	for i := range m.attrs {
		copy(bytesOf(&m.attrs[i]), buf[sizeofIoctlHdr+i*sizeofAttr:])
	}
	if err != nil {
		return fmt.Errorf("ioctl object %d method %d: %w", m.Object, m.ID, err)
	}
	return nil
}

const (
	sizeofIoctlHdr = 24
	sizeofAttr     = 16
)

// invokeWrite sends a write command through UVERBS_METHOD_INVOKE_WRITE.
// The core request goes without its headers; the kernel takes the response
// buffer from CORE_OUT and ignores the request's response field.
func (f *FD) invokeWrite(c *Cmd) error {
	m := NewMethod(abi.UVERBS_OBJECT_DEVICE, abi.UVERBS_METHOD_INVOKE_WRITE)
	num := uint64(c.Num)
	if c.Ex {
		num |= abi.IB_USER_VERBS_CMD_FLAG_EXTENDED
	}
	m.Const(abi.UVERBS_ATTR_WRITE_CMD, num)
	m.In(abi.UVERBS_ATTR_CORE_IN, c.Req)
	if len(c.Resp) > 0 {
		m.Out(abi.UVERBS_ATTR_CORE_OUT, c.Resp)
	}
	if len(c.DrvIn) > 0 {
		m.In(abi.UVERBS_ATTR_UHW_IN, c.DrvIn)
	}
	if len(c.DrvOut) > 0 {
		m.Out(abi.UVERBS_ATTR_UHW_OUT, c.DrvOut)
	}
	if err := f.Run(m); err != nil {
		return cmdError(c, err)
	}
	return nil
}
