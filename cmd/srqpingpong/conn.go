package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/purerdma/purerdma/cmd/internal/pingpong"
)

// encodeAll is what each side writes: maxQP address messages, the ones
// past -q all zero, as the C tool's zeroed array prints them.
func encodeAll(my []pingpong.Dest) []byte {
	b := make([]byte, 0, maxQP*pingpong.MsgSize)
	for i := range maxQP {
		var d pingpong.Dest
		if i < len(my) {
			d = my[i]
		}
		b = append(b, d.Encode()...)
	}
	return b
}

// readAll reads maxQP address messages and decodes the first n.
func readAll(r io.Reader, n int) ([]pingpong.Dest, error) {
	msg := make([]byte, maxQP*pingpong.MsgSize)
	if _, err := io.ReadFull(r, msg); err != nil {
		return nil, err
	}
	rem := make([]pingpong.Dest, n)
	for i := range rem {
		d, err := pingpong.Decode(msg[i*pingpong.MsgSize : (i+1)*pingpong.MsgSize])
		if err != nil {
			return nil, err
		}
		rem[i] = d
	}
	return rem, nil
}

// clientExchange is pp_client_exch_dest: it connects to the server, sends
// my addresses, reads the server's and answers "done".
func clientExchange(ctx context.Context, server string, port int, my []pingpong.Dest) ([]pingpong.Dest, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(server, strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("Couldn't connect to %s:%d (%v)", server, port, err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()

	if _, err := c.Write(encodeAll(my)); err != nil {
		return nil, fmt.Errorf("Couldn't send local address (%v)", err)
	}
	rem, err := readAll(c, len(my))
	if err != nil {
		return nil, fmt.Errorf("Couldn't read remote address (%v)", err)
	}
	if _, err := c.Write([]byte(pingpong.DoneMsg)); err != nil {
		return nil, fmt.Errorf("client write (%v)", err)
	}
	return rem, nil
}

// serverExchange is pp_server_exch_dest: it waits for one client, reads
// its addresses, connects the QPs with connect, then sends my addresses
// and waits for "done".
func serverExchange(ctx context.Context, port int, my []pingpong.Dest, connect func([]pingpong.Dest) error) ([]pingpong.Dest, error) {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", ":"+strconv.Itoa(port))
	if err != nil {
		return nil, fmt.Errorf("Couldn't listen to port %d (%v)", port, err)
	}
	stopL := context.AfterFunc(ctx, func() { l.Close() })
	c, err := l.Accept()
	stopL()
	l.Close()
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("accept() failed (%v)", err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()

	rem, err := readAll(c, len(my))
	if err != nil {
		return nil, fmt.Errorf("Couldn't read remote address (%v)", err)
	}
	if err := connect(rem); err != nil {
		return nil, errors.Join(err, errors.New("Couldn't connect to remote QP"))
	}
	if _, err := c.Write(encodeAll(my)); err != nil {
		return nil, fmt.Errorf("Couldn't send local address (%v)", err)
	}
	done := make([]byte, len(pingpong.DoneMsg))
	if _, err := io.ReadFull(c, done); err != nil {
		return nil, fmt.Errorf("client write (%v)", err)
	}
	return rem, nil
}
