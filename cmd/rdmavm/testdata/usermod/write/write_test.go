// Package write is a user's test of its own RDMA code: one process
// writes into a buffer of another connection of its own, over each
// device of the guest.
package write

import (
	"bytes"
	"context"
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
	"github.com/purerdma/purerdma/uverbs/uverbstest"
)

func TestWrite(t *testing.T) {
	for _, d := range uverbstest.All(t) {
		t.Run(d.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			l, err := rdmacm.Listen(netip.AddrPortFrom(netip.MustParseAddr(d.Addr), 0).String())
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			got, err := writeOnce(ctx, l, "hello from "+d.Name)
			if err != nil {
				t.Fatal(err)
			}
			if want := "hello from " + d.Name; got != want {
				t.Fatalf("the server's buffer holds %q, want %q", got, want)
			}
		})
	}
}

// writeOnce accepts on l with a buffer's address and rkey as private
// data, dials l, writes msg into the buffer and returns what the buffer
// holds once the writer has gone.
func writeOnce(ctx context.Context, l *rdmacm.Listener, msg string) (string, error) {
	buf, err := mr.AllocRegister(l.PD(), 64, uverbs.LocalWrite|uverbs.RemoteWrite)
	if err != nil {
		return "", err
	}
	defer buf.Close()
	private, _ := binary.Append(nil, binary.LittleEndian, rdmacm.Remote{Addr: buf.Addr(), RKey: buf.RKey()})
	l.SetPrivateData(private)
	served := make(chan error, 1)
	go func() {
		id, err := l.Accept(ctx)
		if err == nil {
			_, err = id.WaitEvent(ctx, rdmacm.EventDisconnected)
			id.Close()
		}
		served <- err
	}()
	if err := write(ctx, l.Addr().String(), msg); err != nil {
		return "", err
	}
	if err := <-served; err != nil {
		return "", err
	}
	return string(bytes.TrimRight(buf.Bytes(), "\x00")), nil
}

// write dials addr and writes msg where the server's private data says.
func write(ctx context.Context, addr, msg string) error {
	id, err := rdmacm.Dial(ctx, addr)
	if err != nil {
		return err
	}
	defer id.Close()
	var dst rdmacm.Remote
	if _, err := binary.Decode(id.PrivateData(), binary.LittleEndian, &dst); err != nil {
		return err
	}
	src, err := mr.AllocRegister(id.PD(), len(msg), uverbs.LocalWrite)
	if err != nil {
		return err
	}
	defer src.Close()
	n := copy(src.Bytes(), msg)
	if err := id.PostWrite(1, src.MR(), 0, n, uverbs.SendSignaled, dst); err != nil {
		return err
	}
	wc, err := id.GetSendComp(ctx)
	if err != nil {
		return err
	}
	return wc.Err()
}
