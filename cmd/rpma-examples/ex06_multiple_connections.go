package main

// 06-multiple-connections and 06scch-multiple-connections: each client
// offers its name for the server to read; the server serves up to
// CLIENT_MAX clients from one epoll loop until it has been idle for 15 s.
// The scch variant gives each connection one completion channel shared by
// its CQs.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/rpma"
)

const (
	maxNameSize = 32 // MAX_NAME_SIZE
	clientMax   = 10 // CLIENT_MAX
)

var names = []string{"Andy", "Chet", "Derek", "Janek", "Kacper", "Lukasz", "Oksana", "Pawel", "Piotr", "Tomasz", "Xiang", "Xiaoran", "Xiaoyan"}

// multiIdle is how long the server waits for any event before it ends
// (TIMEOUT_15S); tests shorten it.
var multiIdle = 15 * time.Second

// glibcRand returns the first rand() after srand(seed) of glibc, whose
// generator the C client picks its name with.
func glibcRand(seed uint32) uint32 {
	if seed == 0 {
		seed = 1
	}
	r := make([]int32, 344+1)
	r[0] = int32(seed)
	for i := 1; i < 31; i++ {
		hi, lo := int64(r[i-1])/127773, int64(r[i-1])%127773
		w := 16807*lo - 2836*hi
		if w < 0 {
			w += 2147483647
		}
		r[i] = int32(w)
	}
	for i := 31; i < 34; i++ {
		r[i] = r[i-31]
	}
	for i := 34; i <= 344; i++ {
		r[i] = int32(uint32(r[i-31]) + uint32(r[i-3]))
	}
	return uint32(r[344]) >> 1
}

func multiClient(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 3 {
		return usageErr(stderr, "06-multiple-connections", "client", "<server_address> <port> <seed>")
	}
	seed, err := strtoul(args[2])
	if err != nil {
		fmt.Fprintf(stderr, "strtoul(seed) overflowed\n")
		return -1
	}
	u, p, err := clientPeer(ctx, args)
	defer u.run()
	if err != nil {
		return code(err)
	}
	buf, err := u.alloc(maxNameSize)
	if err != nil {
		return -1
	}
	name := names[glibcRand(uint32(seed%0xffffffff))%uint32(len(names))]
	copy(buf.b[:maxNameSize-1], name)
	fmt.Fprintf(stdout, "My names is: %s\n", cstr(buf.b))
	pdata, err := u.offer(p, buf.b, rpma.UsageReadSrc, 0, nil)
	if err != nil {
		return code(err)
	}
	conn, err := p.clientConnect(ctx, nil, pdata, stderr)
	if err != nil {
		return code(err)
	}
	return code(waitForCloseAndDisconnect(ctx, conn, stderr))
}

// multiClientRes is struct client_res.
type multiClientRes struct {
	conn   *rpma.Conn
	offset int
	id     int
	fds    []int
}

// multiServerRes is struct server_res.
type multiServerRes struct {
	ep       *rpma.Endpoint
	cfg      *rpma.ConnConfig
	scch     bool
	dst      *buffer
	dstMR    *rpma.MR
	epoll    int
	handlers map[int]func()
	clients  [clientMax]multiClientRes
	stdout   io.Writer
	stderr   io.Writer
}

func multiServer(scch bool) mainFunc {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		if len(args) < 2 {
			return usageErr(stderr, "06-multiple-connections", "server", "<server_address> <port>")
		}
		s := &multiServerRes{scch: scch, handlers: map[int]func(){}, stdout: stdout, stderr: stderr}
		if scch {
			cfg := rpma.DefaultConnConfig()
			cfg.SharedCompChannel = true
			s.cfg = &cfg
		}
		var u undo
		defer u.run()
		_, ep, err := u.listenAt(ctx, args, func(p *peer) (err error) {
			if s.epoll, err = epollCreate(); err != nil {
				return err
			}
			u.push(func() { epollClose(s.epoll) })
			if s.dst, err = u.alloc(maxNameSize * clientMax); err == nil {
				s.dstMR, err = u.register(p, s.dst.b, rpma.UsageReadDst)
			}
			return err
		})
		if err != nil {
			return code(err)
		}
		s.ep = ep
		if err := s.add(s.ep.Fd(), s.handleIncoming); err != nil {
			return -1
		}
		fmt.Fprintf(stdout, "Today I have got in touch with:\n")
		err = s.loop(ctx)
		for i := range s.clients {
			if c := &s.clients[i]; c.conn != nil {
				c.conn.Disconnect()
				s.delete(c)
			}
		}
		if errors.Is(err, errTimedOut) {
			fmt.Fprintf(stderr, "Server timed out.\n")
			return 0
		}
		return code(err)
	}
}

var errTimedOut = errors.New("timed out")

// delete is client_delete.
func (s *multiServerRes) delete(c *multiClientRes) {
	for _, fd := range c.fds {
		epollDel(s.epoll, fd)
		delete(s.handlers, fd)
	}
	c.fds = nil
	c.conn.Close()
	c.conn = nil
}

// handleIncoming is server_handle_incoming_client.
func (s *multiServerRes) handleIncoming() {
	req, err := s.ep.TryNextConnRequest(s.cfg)
	if err != nil {
		return
	}
	var c *multiClientRes
	for i := range s.clients {
		if s.clients[i].conn == nil {
			c = &s.clients[i]
			c.id, c.offset = i, maxNameSize*i
			break
		}
	}
	if c == nil {
		req.Close()
		return
	}
	if c.conn, err = req.Connect(nil); err != nil {
		return
	}
	cfd := -1
	if s.scch {
		cfd, err = c.conn.CompletionFd()
	} else {
		cfd = c.conn.CQ().Fd()
	}
	if err == nil {
		err = s.add(c.conn.EventFd(), func() { s.handleConnEvent(c) })
	}
	if err == nil {
		c.fds = append(c.fds, c.conn.EventFd())
		err = s.add(cfd, func() { s.handleCompletion(c) })
	}
	if err == nil {
		c.fds = append(c.fds, cfd)
	} else {
		c.conn.Disconnect()
	}
}

// shortly bounds a wait on an fd epoll found ready.
func shortly() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Second)
}

// handleCompletion is client_handle_completion.
func (s *multiServerRes) handleCompletion(c *multiClientRes) {
	ctx, cancel := shortly()
	defer cancel()
	q := c.conn.CQ()
	var err error
	if s.scch {
		q, _, err = c.conn.Wait(ctx)
	} else {
		err = q.Wait(ctx)
	}
	if err != nil {
		if !errors.Is(err, rpma.ErrNoCompletion) {
			c.conn.Disconnect()
		}
		return
	}
	var wc [1]cq.WC
	if _, err := q.GetWC(wc[:]); err != nil {
		if !errors.Is(err, rpma.ErrNoCompletion) {
			c.conn.Disconnect()
		}
		return
	}
	switch {
	case wc[0].Status != cq.Success:
		fmt.Fprintf(s.stderr, "[%d] rpma_read() failed: %s\n", c.id, wc[0].Status)
	case wc[0].Opcode != cq.OpRDMARead:
		fmt.Fprintf(s.stderr, "[%d] received unexpected wc.opcode value (%d != %d)\n", c.id, wc[0].Opcode, cq.OpRDMARead)
	default:
		fmt.Fprintf(s.stdout, "- %s\n", cstr(s.dst.b[c.offset:c.offset+maxNameSize]))
	}
	c.conn.Disconnect()
}

// handleConnEvent is client_handle_connection_event.
func (s *multiServerRes) handleConnEvent(c *multiClientRes) {
	ctx, cancel := shortly()
	defer cancel()
	ev, err := c.conn.NextEvent(ctx)
	if err != nil {
		if !errors.Is(err, rpma.ErrNoEvent) {
			c.conn.Disconnect()
		}
		return
	}
	if ev != rpma.ConnEstablished {
		s.delete(c)
		return
	}
	if err := s.fetchName(c); err != nil {
		c.conn.Disconnect()
	}
}

// fetchName is client_fetch_name: it reads the client's name.
func (s *multiServerRes) fetchName(c *multiClientRes) error {
	pdata := c.conn.PrivateData()
	data, err := decodeCommonData(pdata)
	if err != nil {
		fmt.Fprintf(s.stderr, "[%d] received connection's private data is too small (%d < %d)\n", c.id, len(pdata), commonDataSize)
		return err
	}
	src, err := data.remoteMR()
	if err != nil {
		return err
	}
	return c.conn.Read(s.dstMR, c.offset, src, 0, maxNameSize, rpma.Op{Flags: rpma.CompletionAlways})
}
