package pingpong

import (
	"errors"
	"fmt"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/uverbs"
)

// OpenDevice finds the device as the C tools do: by name, or the first
// one.
func OpenDevice(name string) (*uverbs.Context, error) {
	devs, err := uverbs.Devices()
	if err != nil {
		return nil, fmt.Errorf("Failed to get IB devices list: %v", err)
	}
	var dev *uverbs.Device
	for i := range devs {
		if name == "" || devs[i].Name == name {
			dev = &devs[i]
			break
		}
	}
	switch {
	case dev == nil && name == "":
		return nil, errors.New("No IB devices found")
	case dev == nil:
		return nil, fmt.Errorf("IB device %s not found", name)
	}
	c, err := uverbs.Open(*dev)
	if err != nil {
		return nil, fmt.Errorf("Couldn't get context for %s (%v)", dev.Name, err)
	}
	return c, nil
}

// Base is the part of struct pingpong_context the three tools share: the
// device, the completion channel, PD, buffer, MR and CQ. Each tool adds
// its queue pairs (and SRQ or address handles).
type Base struct {
	Ctx      *uverbs.Context
	Ch       *cq.Channel // nil without -e
	PD       *uverbs.PD
	Buf      []byte // from mr.Alloc, zeroed
	MR       *mr.MR
	CQ       *cq.CQ
	PortInfo uverbs.PortAttr // the port's attributes, once queried
}

// Alloc is the middle of pp_init_ctx, after the device is open: the
// channel when events is set, the PD, a buffer of bufSize bytes and its MR
// for local writes, and a CQ of cqe entries. What it made is left for
// Close on error.
func (b *Base) Alloc(events bool, bufSize, cqe int) (err error) {
	if events {
		if b.Ch, err = cq.NewChannel(b.Ctx); err != nil {
			return fmt.Errorf("Couldn't create completion channel (%v)", err)
		}
	}
	if b.PD, err = b.Ctx.AllocPD(); err != nil {
		return fmt.Errorf("Couldn't allocate PD (%v)", err)
	}
	if b.Buf, err = mr.Alloc(bufSize); err != nil {
		return fmt.Errorf("Couldn't allocate work buf. (%v)", err)
	}
	if b.MR, err = mr.Register(b.PD, b.Buf, uverbs.LocalWrite); err != nil {
		return fmt.Errorf("Couldn't register MR (%v)", err)
	}
	var opts *cq.Options
	if b.Ch != nil {
		opts = &cq.Options{Channel: b.Ch}
	}
	if b.CQ, err = cq.New(b.Ctx, cqe, opts); err != nil {
		return fmt.Errorf("Couldn't create CQ (%v)", err)
	}
	return nil
}

// Close is the end of pp_close_ctx, after the tool released its queue
// pairs: it releases what exists in the C tools' order into c. afterMR,
// when not nil, runs between the MR and the buffer, where ibv_ud_pingpong
// destroys its address handle.
func (b *Base) Close(c *Closer, afterMR func()) {
	c.Step(b.CQ != nil, func() error { return b.CQ.Close() }, "Couldn't destroy CQ")
	c.Step(b.MR != nil, func() error { return b.MR.Close() }, "Couldn't deregister MR")
	if afterMR != nil {
		afterMR()
	}
	c.Step(b.Buf != nil, func() error { return mr.Free(b.Buf) }, "Couldn't free work buf")
	c.Step(b.PD != nil, func() error { return b.PD.Close() }, "Couldn't deallocate PD")
	c.Step(b.Ch != nil, func() error { return b.Ch.Close() }, "Couldn't destroy completion channel")
	c.Step(b.Ctx != nil, func() error { return b.Ctx.Close() }, "Couldn't release context")
}

// LocalGID is ibv_query_gid on the queried port: the GID at index, zero
// for an empty entry, and an error for an index outside the table.
func (b *Base) LocalGID(port uint8, index int) (uverbs.GID, error) {
	if index >= b.PortInfo.GIDTblLen {
		return uverbs.GID{}, fmt.Errorf("index %d, the table has %d entries", index, b.PortInfo.GIDTblLen)
	}
	ents, err := b.Ctx.GIDTable(port)
	if err != nil {
		return uverbs.GID{}, err
	}
	for _, e := range ents {
		if e.Index == index {
			return e.GID, nil
		}
	}
	return uverbs.GID{}, nil
}

// Closer runs the steps of pp_close_ctx: each releases one object if it
// exists, every step runs, and the first failure is kept as the C tools
// word it.
type Closer struct{ first error }

// Step runs f when ok (the object exists), keeping the first failure as
// "msg (err)".
func (c *Closer) Step(ok bool, f func() error, msg string) {
	if !ok {
		return
	}
	if err := f(); err != nil && c.first == nil {
		c.first = fmt.Errorf("%s (%v)", msg, err)
	}
}

// Err is the first failure.
func (c *Closer) Err() error { return c.first }
