// Package ctools_test shows Go code written against purerdma's public
// packages talking to rdma-core's C tools: the rping server (rdma_cm, SENDs,
// RDMA READ and WRITE) and ibv_rc_pingpong (an RC QP connected from numbers
// exchanged over TCP). Run it with go test -exec 'rdmavm -ctools'; it skips
// elsewhere.
package ctools_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rdmacm"
	"github.com/purerdma/purerdma/uverbs"
	"github.com/purerdma/purerdma/uverbs/uverbstest"
)

// cTool is a C program running in the background.
type cTool struct {
	cmd  *exec.Cmd
	out  bytes.Buffer // stdout and stderr; read it only once done is closed
	err  error
	done chan struct{}
}

// startC starts tool; it is killed when ctx ends or the test ends, and its
// output is logged if the test failed.
func startC(ctx context.Context, t *testing.T, tool string, args ...string) *cTool {
	t.Helper()
	path := uverbstest.CTool(t, tool)
	c := &cTool{cmd: exec.CommandContext(ctx, path, args...), done: make(chan struct{})}
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.err = c.cmd.Wait(); close(c.done) }()
	t.Cleanup(func() {
		c.cmd.Process.Kill()
		<-c.done
		if t.Failed() {
			t.Logf("%s %s: %v\n%s", tool, strings.Join(args, " "), c.err, c.out.String())
		}
	})
	return c
}

// wait waits for the tool to exit and fails the test unless it exited 0.
func (c *cTool) wait(ctx context.Context, t *testing.T) string {
	t.Helper()
	select {
	case <-c.done:
	case <-ctx.Done():
		t.Fatalf("%s did not exit: %v", c.cmd.Path, ctx.Err())
	}
	if c.err != nil {
		t.Fatalf("%s: %v", c.cmd.Path, c.err)
	}
	return c.out.String()
}

// exited fails the test if the tool has exited already: it was to wait for us.
func (c *cTool) exited(t *testing.T) {
	t.Helper()
	select {
	case <-c.done:
		t.Fatalf("%s exited early: %v", c.cmd.Path, c.err)
	default:
	}
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

func check(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// TestRpingServerC runs the Go side of rping's client against C `rping -s`.
func TestRpingServerC(t *testing.T) {
	for _, dev := range []string{"rxe", "siw"} {
		t.Run(dev, func(t *testing.T) {
			uverbstest.CTool(t, "rping")
			addr := uverbstest.Require(t, dev).Addr
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			port := freePort(t)
			const pings, size = 2, 64
			srv := startC(ctx, t, "rping", "-s", "-a", addr, "-p", port, "-C", strconv.Itoa(pings), "-v")

			// The server listens a moment after it starts: until then
			// the connection is refused (rejected on rxe, a TCP RST on siw).
			var id *rdmacm.ID
			for {
				var err error
				if id, err = rdmacm.Dial(ctx, net.JoinHostPort(addr, port)); err == nil {
					break
				} else if !errors.Is(err, syscall.ECONNREFUSED) || ctx.Err() != nil {
					t.Fatalf("dial: %v", err)
				}
				srv.exited(t)
				time.Sleep(50 * time.Millisecond)
			}
			defer id.Close()

			// id.PD() is closed with the last ID on the device: deregister first.
			var bufs []*mr.Buffer
			defer func() {
				for _, b := range bufs {
					b.Close()
				}
			}()
			reg := func(n int, access uverbs.Access) *mr.Buffer {
				b, err := mr.AllocRegister(id.PD(), n, access)
				check(t, "register", err)
				bufs = append(bufs, b)
				return b
			}
			src := reg(size, uverbs.RemoteRead)
			sink := reg(size, uverbs.LocalWrite|uverbs.RemoteWrite)
			send := reg(16, 0)
			recv := reg(16, uverbs.LocalWrite)

			// advertise SENDs {be64 addr, be32 rkey, be32 size} of b and
			// waits for the server's go-ahead SEND.
			advertise := func(b *mr.Buffer) {
				binary.BigEndian.PutUint64(send.Bytes()[0:], b.Addr())
				binary.BigEndian.PutUint32(send.Bytes()[8:], b.RKey())
				binary.BigEndian.PutUint32(send.Bytes()[12:], uint32(b.Len()))
				check(t, "post recv", id.PostRecv(1, recv.MR(), 0, recv.Len()))
				check(t, "post send", id.PostSend(2, send.MR(), 0, send.Len(), uverbs.SendSignaled))
				for _, get := range []func(context.Context) (cq.WC, error){id.GetSendComp, id.GetRecvComp} {
					wc, err := get(ctx)
					if err == nil {
						err = wc.Err()
					}
					check(t, "completion", err)
				}
			}
			for i := range pings {
				// rping's text: "rdma-ping-N: " and a rotating run of 'A'..'z', NUL-terminated.
				s := src.Bytes()
				n := copy(s, fmt.Sprintf("rdma-ping-%d: ", i))
				for j := n; j < size-1; j++ {
					s[j] = byte('A' + (i+j-n)%58)
				}
				s[size-1] = 0
				clear(sink.Bytes())
				advertise(src)  // the server RDMA READs src
				advertise(sink) // the server RDMA WRITEs it into sink
				if !bytes.Equal(sink.Bytes(), src.Bytes()) {
					t.Fatalf("ping %d: sink %q, want %q", i, sink.Bytes(), src.Bytes())
				}
			}
			check(t, "disconnect", id.Disconnect())
			out := srv.wait(ctx, t)
			if got := strings.Count(out, "server ping data: rdma-ping-"); got != pings {
				t.Errorf("the server printed %d pings, want %d:\n%s", got, pings, out)
			}
		})
	}
}

// TestRCPingpongC runs a Go client of ibv_rc_pingpong against the C server.
func TestRCPingpongC(t *testing.T) {
	uverbstest.CTool(t, "ibv_rc_pingpong")
	d := uverbstest.Require(t, "rxe")
	name, addr := d.Name, netip.MustParseAddr(d.Addr)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const iters, size = 5, 64

	dev, err := uverbs.OpenName(name)
	check(t, "open "+name, err)
	defer dev.Close()
	gidx, err := dev.GIDIndex(1, addr) // the RoCE v2 GID ::ffff:addr
	check(t, "GID index", err)
	var gid uverbs.GID
	table, err := dev.GIDTable(1)
	check(t, "GID table", err)
	for _, e := range table {
		if e.Index == gidx {
			gid = e.GID
		}
	}
	pd, err := dev.AllocPD()
	check(t, "alloc PD", err)
	defer pd.Close()
	ch, err := cq.NewChannel(dev)
	check(t, "completion channel", err)
	defer ch.Close()
	c, err := cq.New(dev, 4, &cq.Options{Channel: ch})
	check(t, "create CQ", err)
	defer c.Close()
	buf, err := mr.AllocRegister(pd, 2*size, uverbs.LocalWrite) // send half, receive half
	check(t, "register", err)
	defer buf.Close()
	qp, err := pd.CreateQP(uverbs.QPInit{Type: uverbs.RC, SendCQ: c, RecvCQ: c,
		Cap: uverbs.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}})
	check(t, "create QP", err)
	defer qp.Close()
	check(t, "QP to INIT", qp.Init(1, 0))
	sendWR := []uverbs.SendWR{{ID: 2, Opcode: uverbs.WRSend, Flags: uverbs.SendSignaled,
		SGE: []uverbs.SGE{{Addr: buf.Addr(), Length: size, LKey: buf.LKey()}}}}
	recvWR := []uverbs.RecvWR{{ID: 1, SGE: []uverbs.SGE{{Addr: buf.Addr() + size, Length: size, LKey: buf.LKey()}}}}
	_, err = qp.PostRecv(recvWR)
	check(t, "post recv", err)

	port := freePort(t)
	srv := startC(ctx, t, "ibv_rc_pingpong", "-d", name, "-g", strconv.Itoa(gidx), "-n", strconv.Itoa(iters), "-s", strconv.Itoa(size), "-p", port)

	// The TCP exchange: "LID:QPN:PSN:GID" in hex, NUL-padded to 52 bytes
	// each way, then "done" from the client.
	var conn net.Conn
	for conn == nil {
		if conn, err = new(net.Dialer).DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", port)); err != nil {
			if ctx.Err() != nil {
				t.Fatalf("connect to the server: %v", err)
			}
			srv.exited(t)
			time.Sleep(20 * time.Millisecond)
		}
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	conn.SetDeadline(deadline)
	psn := rand.Uint32() & 0xffffff
	msg := make([]byte, 52)
	copy(msg, fmt.Sprintf("%04x:%06x:%06x:%s", 0, qp.Num(), psn, hex.EncodeToString(gid[:])))
	_, err = conn.Write(msg)
	check(t, "send address", err)
	_, err = io.ReadFull(conn, msg)
	check(t, "read address", err)
	_, err = conn.Write([]byte("done\x00"))
	check(t, "send done", err)
	f := strings.Split(string(bytes.TrimRight(msg, "\x00")), ":")
	if len(f) != 4 {
		t.Fatalf("bad address message %q", msg)
	}
	var num [3]uint64
	for i := range num {
		num[i], err = strconv.ParseUint(f[i], 16, 32)
		check(t, "parse address", err)
	}
	dgid, err := hex.DecodeString(f[3])
	if err != nil || len(dgid) != len(gid) {
		t.Fatalf("bad GID %q: %v", f[3], err)
	}
	check(t, "connect QP", qp.ConnectRC(uverbs.RCPath{Port: 1, MTU: uverbs.MTU1024,
		Global: true, DGID: uverbs.GID(dgid), SGIDIndex: uint8(gidx),
		DestQPN: uint32(num[1]), DestPSN: uint32(num[2]), PSN: psn, RdAtomic: 1}))

	// Each round: send, and the server echoes its buffer back.
	wcs := make([]cq.WC, 2)
	for i := range iters {
		out, in := buf.Bytes()[:size], buf.Bytes()[size:]
		for j := range out {
			out[j] = byte(i*size + j)
		}
		_, err = qp.PostSend(sendWR)
		check(t, "post send", err)
		for done := 0; done < 2; {
			check(t, "arm CQ", c.ReqNotify(false))
			n, err := c.Poll(wcs[:2-done])
			check(t, "poll", err)
			for _, wc := range wcs[:n] {
				check(t, "completion", wc.Err())
			}
			if done += n; n == 0 {
				_, err = ch.Wait(ctx)
				check(t, "wait for a completion", err)
			}
		}
		if !bytes.Equal(in, out) {
			t.Fatalf("round %d: got %x, want %x", i, in, out)
		}
		if i < iters-1 {
			_, err = qp.PostRecv(recvWR)
			check(t, "post recv", err)
		}
	}
	srv.wait(ctx, t)
}
