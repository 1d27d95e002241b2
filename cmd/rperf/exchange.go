package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/purerdma/purerdma/uverbs"
)

// dest is one side's address and memory as the TCP exchange carries it.
// The client also sends the run's parameters, which the server adopts.
type dest struct {
	test  uint8
	all   bool
	lid   uint16
	qpn   uint32
	psn   uint32
	rkey  uint32
	addr  uint64 // where the peer writes, reads or adds
	size  uint32
	iters uint32
	gid   uverbs.GID
}

const (
	magic   = "RPRF"
	msgSize = 4 + 1 + 1 + 2 + 4 + 4 + 4 + 8 + 4 + 4 + 16
)

func (d dest) encode() []byte {
	b := make([]byte, 0, msgSize)
	b = append(b, magic...)
	b = append(b, d.test)
	if d.all {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.BigEndian.AppendUint16(b, d.lid)
	b = binary.BigEndian.AppendUint32(b, d.qpn)
	b = binary.BigEndian.AppendUint32(b, d.psn)
	b = binary.BigEndian.AppendUint32(b, d.rkey)
	b = binary.BigEndian.AppendUint64(b, d.addr)
	b = binary.BigEndian.AppendUint32(b, d.size)
	b = binary.BigEndian.AppendUint32(b, d.iters)
	return append(b, d.gid[:]...)
}

func decodeDest(b []byte) (dest, error) {
	if len(b) != msgSize || string(b[:4]) != magic {
		return dest{}, errors.New("the peer is not rperf (bad exchange message)")
	}
	d := dest{test: b[4], all: b[5] != 0}
	d.lid = binary.BigEndian.Uint16(b[6:])
	d.qpn = binary.BigEndian.Uint32(b[8:])
	d.psn = binary.BigEndian.Uint32(b[12:])
	d.rkey = binary.BigEndian.Uint32(b[16:])
	d.addr = binary.BigEndian.Uint64(b[20:])
	d.size = binary.BigEndian.Uint32(b[28:])
	d.iters = binary.BigEndian.Uint32(b[32:])
	copy(d.gid[:], b[36:])
	return d, nil
}

// oob is the out-of-band TCP connection, kept for the barriers between
// the runs of each size.
type oob struct {
	c    net.Conn
	stop func() bool
}

// dialOOB connects to the server, retrying while it is not listening yet
// (as perftest's client retries) for a few seconds.
func dialOOB(ctx context.Context, server string, port int) (*oob, error) {
	var d net.Dialer
	addr := net.JoinHostPort(server, strconv.Itoa(port))
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("couldn't connect to %s: %v", addr, err)
	}
	return newOOB(ctx, c), nil
}

// listenOOB waits for one client.
func listenOOB(ctx context.Context, port int) (*oob, error) {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", ":"+strconv.Itoa(port))
	if err != nil {
		return nil, fmt.Errorf("couldn't listen on port %d: %v", port, err)
	}
	stop := context.AfterFunc(ctx, func() { l.Close() })
	c, err := l.Accept()
	stop()
	l.Close()
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("accept: %v", err)
	}
	return newOOB(ctx, c), nil
}

func newOOB(ctx context.Context, c net.Conn) *oob {
	return &oob{c: c, stop: context.AfterFunc(ctx, func() { c.Close() })}
}

func (o *oob) close() {
	o.stop()
	o.c.Close()
}

// exchange sends my address and reads the peer's.
func (o *oob) exchange(my dest) (dest, error) {
	if _, err := o.c.Write(my.encode()); err != nil {
		return dest{}, fmt.Errorf("couldn't send the local address: %v", err)
	}
	b := make([]byte, msgSize)
	if _, err := io.ReadFull(o.c, b); err != nil {
		return dest{}, fmt.Errorf("couldn't read the remote address: %v", err)
	}
	return decodeDest(b)
}

// sync is a barrier: each side sends tag and waits for the peer's.
func (o *oob) sync(tag byte) error {
	if _, err := o.c.Write([]byte{tag}); err != nil {
		return fmt.Errorf("sync: %v", err)
	}
	var b [1]byte
	if _, err := io.ReadFull(o.c, b[:]); err != nil {
		return fmt.Errorf("sync: %v", err)
	}
	if b[0] != tag {
		return fmt.Errorf("sync: the peer sent %q, want %q", b[0], tag)
	}
	return nil
}
