package pingpong

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
)

// ClientExchange is pp_client_exch_dest: it connects to the server, sends
// my address, reads the server's and answers "done".
func ClientExchange(ctx context.Context, server string, port int, my Dest) (Dest, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(server, strconv.Itoa(port)))
	if err != nil {
		return Dest{}, fmt.Errorf("Couldn't connect to %s:%d (%v)", server, port, err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()

	if _, err := c.Write(my.Encode()); err != nil {
		return Dest{}, fmt.Errorf("Couldn't send local address (%v)", err)
	}
	msg := make([]byte, MsgSize)
	if _, err := io.ReadFull(c, msg); err != nil {
		return Dest{}, fmt.Errorf("Couldn't read/write remote address (%v)", err)
	}
	if _, err := c.Write([]byte(DoneMsg)); err != nil {
		return Dest{}, fmt.Errorf("Couldn't read/write remote address (%v)", err)
	}
	return Decode(msg)
}

// ServerExchange is pp_server_exch_dest: it waits for one client, reads
// its address, connects the QP to it with connect, then sends my address
// and waits for "done". The QP is ready to receive before the client
// learns its address.
func ServerExchange(ctx context.Context, port int, my Dest, connect func(Dest) error) (Dest, error) {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", ":"+strconv.Itoa(port))
	if err != nil {
		return Dest{}, fmt.Errorf("Couldn't listen to port %d (%v)", port, err)
	}
	stopL := context.AfterFunc(ctx, func() { l.Close() })
	c, err := l.Accept()
	stopL()
	l.Close()
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return Dest{}, fmt.Errorf("accept() failed (%v)", err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()

	msg := make([]byte, MsgSize)
	if n, err := io.ReadFull(c, msg); err != nil {
		return Dest{}, fmt.Errorf("%d/%d: Couldn't read remote address (%v)", n, MsgSize, err)
	}
	rem, err := Decode(msg)
	if err != nil {
		return Dest{}, err
	}
	if err := connect(rem); err != nil {
		return Dest{}, errors.Join(err, errors.New("Couldn't connect to remote QP"))
	}
	if _, err := c.Write(my.Encode()); err != nil {
		return Dest{}, fmt.Errorf("Couldn't send/recv local address (%v)", err)
	}
	done := make([]byte, len(DoneMsg))
	if _, err := io.ReadFull(c, done); err != nil {
		return Dest{}, fmt.Errorf("Couldn't send/recv local address (%v)", err)
	}
	return rem, nil
}

// Exchange is the exchange of ibv_rc_pingpong and ibv_ud_pingpong: as the
// client when o.Server is set, else as the server, which connects its QP
// before it answers. It prints the remote address line, then the client
// connects its QP.
func Exchange(ctx context.Context, o *Options, my Dest, stdout io.Writer, connect func(Dest) error) (Dest, error) {
	var rem Dest
	var err error
	if o.Server != "" {
		rem, err = ClientExchange(ctx, o.Server, o.Port, my)
	} else {
		rem, err = ServerExchange(ctx, o.Port, my, connect)
	}
	if err != nil {
		return Dest{}, err
	}
	PrintRemote(stdout, rem)
	if o.Server != "" {
		if err := connect(rem); err != nil {
			return Dest{}, err
		}
	}
	return rem, nil
}
