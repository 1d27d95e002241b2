package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/purerdma/purerdma/internal/ppdest"
)

// clientExchange is pp_client_exch_dest: it connects to the server, sends
// my address, reads the server's and answers "done".
func clientExchange(ctx context.Context, server string, port int, my ppdest.Dest) (ppdest.Dest, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(server, strconv.Itoa(port)))
	if err != nil {
		return ppdest.Dest{}, fmt.Errorf("Couldn't connect to %s:%d (%v)", server, port, err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()

	if _, err := c.Write(my.Encode()); err != nil {
		return ppdest.Dest{}, fmt.Errorf("Couldn't send local address (%v)", err)
	}
	msg := make([]byte, ppdest.MsgSize)
	if _, err := io.ReadFull(c, msg); err != nil {
		return ppdest.Dest{}, fmt.Errorf("Couldn't read/write remote address (%v)", err)
	}
	if _, err := c.Write([]byte(ppdest.DoneMsg)); err != nil {
		return ppdest.Dest{}, fmt.Errorf("Couldn't read/write remote address (%v)", err)
	}
	return ppdest.Decode(msg)
}

// serverExchange is pp_server_exch_dest: it waits for one client, reads
// its address, connects the QP to it with connect, then sends my address
// and waits for "done". The QP is ready to receive before the client
// learns its address.
func serverExchange(ctx context.Context, port int, my ppdest.Dest, connect func(ppdest.Dest) error) (ppdest.Dest, error) {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", ":"+strconv.Itoa(port))
	if err != nil {
		return ppdest.Dest{}, fmt.Errorf("Couldn't listen to port %d (%v)", port, err)
	}
	stopL := context.AfterFunc(ctx, func() { l.Close() })
	c, err := l.Accept()
	stopL()
	l.Close()
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return ppdest.Dest{}, fmt.Errorf("accept() failed (%v)", err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()

	msg := make([]byte, ppdest.MsgSize)
	if n, err := io.ReadFull(c, msg); err != nil {
		return ppdest.Dest{}, fmt.Errorf("%d/%d: Couldn't read remote address (%v)", n, ppdest.MsgSize, err)
	}
	rem, err := ppdest.Decode(msg)
	if err != nil {
		return ppdest.Dest{}, err
	}
	if err := connect(rem); err != nil {
		return ppdest.Dest{}, errors.Join(err, errors.New("Couldn't connect to remote QP"))
	}
	if _, err := c.Write(my.Encode()); err != nil {
		return ppdest.Dest{}, fmt.Errorf("Couldn't send/recv local address (%v)", err)
	}
	done := make([]byte, len(ppdest.DoneMsg))
	if _, err := io.ReadFull(c, done); err != nil {
		return ppdest.Dest{}, fmt.Errorf("Couldn't send/recv local address (%v)", err)
	}
	return rem, nil
}
