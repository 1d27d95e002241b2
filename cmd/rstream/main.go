// Command rstream is a Go port of rdma-core's rstream (librdmacm/
// examples/rstream.c, rdma-core v44) over package rsocket: it streams data
// between a client and a server in rounds and reports latency or
// bandwidth. It interoperates with the C tool, which uses librdmacm's
// rsockets.
//
//	rstream [-b bind_address] [-B buffer_size] [-i inline_size] [-p port]
//	        [-I iterations] [-C transfer_count] [-S transfer_size|all]
//	        [-k keepalive_time] [-T test_option]...    (server)
//	rstream -s server_address [the same options]       (client)
//
// Without -I, -C or -S it runs rstream's series of latency tests over one
// connection and bandwidth tests over a second. Each test first exchanges
// 16 bytes (client first), then per iteration the client sends
// transfer_count transfers of transfer_size bytes and the server sends as
// many back. -T v verifies the data: each direction carries the byte
// sequence 0, 1, 2, ... as the C tool's format_buf writes it. -T s uses
// TCP sockets instead of rsockets. The Go calls always block, so -T a, b
// and n change nothing; -T f and r are not supported.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/purerdma/purerdma/rsocket"
)

func main() {
	os.Exit(runContext(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// testSizes is rstream.c's test_size table: sizes with option 1 run only
// with -S all.
var testSizes = func() []struct{ size, option int } {
	t := []struct{ size, option int }{{1 << 6, 0}}
	for s := 7; s <= 22; s++ {
		opt := 1
		if s == 12 || s == 16 || s == 20 {
			opt = 0
		}
		t = append(t, struct{ size, option int }{1 << s, opt}, struct{ size, option int }{1<<s + 1<<(s-1), 1})
	}
	return t
}()

type config struct {
	dst, src       string
	port           string
	bufferSize     int
	inlineSize     int
	iterations     int
	transferCount  int
	transferSize   int
	custom         bool
	sizeOption     int
	keepalive      int
	sockets        bool
	verify         bool
	stdout, stderr io.Writer
}

// getopt parses args as getopt(3) with rstream's optstring
// "s:b:f:B:i:I:C:S:p:k:T:": every option takes a value, attached or in
// the next argument.
func parse(args []string, c *config) error {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' {
			return fmt.Errorf("unexpected argument %q", a)
		}
		op, val := a[1], a[2:]
		if !strings.ContainsRune("sbfBiICSpkT", rune(op)) {
			return fmt.Errorf("unknown option -%c", op)
		}
		if val == "" {
			if i++; i == len(args) {
				return fmt.Errorf("option -%c needs a value", op)
			}
			val = args[i]
		}
		atoi := func() int { n, _ := strconv.Atoi(val); return n } // atoi(3): 0 on junk
		switch op {
		case 's':
			c.dst = val
		case 'b':
			c.src = val
		case 'f':
			// rstream.c: "ip" numeric, "gid" AF_IB, others a warning.
			if strings.HasPrefix(strings.ToLower(val), "gid") {
				return fmt.Errorf("address format %q not supported", val)
			}
		case 'B':
			c.bufferSize = atoi()
		case 'i':
			c.inlineSize = atoi()
		case 'I':
			c.custom = true
			c.iterations = atoi()
		case 'C':
			c.custom = true
			c.transferCount = atoi()
		case 'S':
			if strings.HasPrefix(strings.ToLower(val), "all") {
				c.sizeOption = 1
			} else {
				c.custom = true
				c.transferSize = atoi()
			}
		case 'p':
			c.port = val
		case 'k':
			c.keepalive = atoi()
		case 'T':
			if err := c.testOpt(val); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *config) testOpt(arg string) error {
	l := strings.ToLower(arg)
	is := func(short, long string) bool { return l == short || (len(l) > 1 && strings.HasPrefix(l, long)) }
	switch {
	case is("s", "socket"):
		c.sockets = true
	case is("a", "async"), is("b", "block"), is("n", "nonblock"):
	case is("v", "verify"):
		c.verify = true
	default:
		return fmt.Errorf("test option %q not supported", arg)
	}
	return nil
}

const usage = `usage: rstream
	[-s server_address]
	[-b bind_address]
	[-f address_format]
	    ip
	[-B buffer_size]
	[-i inline_size]
	[-I iterations]
	[-C transfer_count]
	[-S transfer_size or all]
	[-p port_number]
	[-k keepalive_time]
	[-T test_option]
	    s|sockets - use standard tcp/ip sockets
	    a|async - asynchronous operation (no effect)
	    b|blocking - use blocking calls (no effect)
	    n|nonblocking - use nonblocking calls (no effect)
	    v|verify - verify data
`

func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := config{port: "7471", inlineSize: 64, iterations: 1, transferSize: 1000, transferCount: 1000,
		stdout: stdout, stderr: stderr}
	if err := parse(args, &c); err != nil {
		fmt.Fprintf(stderr, "rstream: %v\n", err)
		fmt.Fprint(stderr, usage)
		return 1
	}
	if err := c.run(ctx); err != nil {
		fmt.Fprintf(stderr, "rstream: %v\n", err)
		return 1
	}
	return 0
}

type optimization int

const (
	optMixed optimization = iota
	optLatency
	optBandwidth
)

// options are set_options: buffers of twice -B (1 MiB each by default,
// rstream's SO_SNDBUF of 512 KiB), the inline size by optimization.
func (c *config) options(opt optimization) *rsocket.Options {
	b := 1 << 19
	if c.bufferSize > 0 {
		b = c.bufferSize
	}
	o := &rsocket.Options{SendBuffer: b << 1, RecvBuffer: b << 1}
	switch opt {
	case optLatency:
		o.Inline = c.inlineSize
		if o.Inline == 0 {
			o.Inline = -1
		}
	case optBandwidth:
		o.Inline = -1
	}
	if c.keepalive > 0 {
		o.KeepAlive = time.Duration(c.keepalive) * time.Second
	}
	return o
}

type session struct {
	*config
	mu         sync.Mutex // ln and conn, for abort
	ln         net.Listener
	conn       net.Conn
	aborted    bool
	buf        []byte
	name       string
	sendSeq    byte // format_buf's static counter
	recvSeq    byte // verify_buf's
	totalBytes int64
}

func (c *config) run(ctx context.Context) error {
	s := &session{config: c, name: "custom"}
	// Blocking calls have no context: when ctx ends, closing the
	// listener and the connection ends them.
	defer context.AfterFunc(ctx, s.abort)()
	if c.custom {
		// rstream.c allocates transfer_size bytes and still moves 16 in
		// its sync: room for those.
		s.buf = make([]byte, max(c.transferSize, 16))
	} else {
		s.buf = make([]byte, testSizes[len(testSizes)-1].size)
	}
	if c.dst == "" {
		if err := s.listen(); err != nil {
			return err
		}
		defer s.ln.Close()
	}
	fmt.Fprintf(c.stdout, "%-10s%-8s%-8s%-8s%-8s%8s %10s%13s\n",
		"name", "bytes", "xfers", "iters", "total", "time", "Gb/sec", "usec/xfer")
	if c.custom {
		if err := s.connect(ctx, optMixed); err != nil {
			return err
		}
		defer s.conn.Close()
		return s.runTest()
	}
	for _, phase := range []struct {
		opt  optimization
		init func(int)
	}{{optLatency, s.initLatency}, {optBandwidth, s.initBandwidth}} {
		if err := s.connect(ctx, phase.opt); err != nil {
			return err
		}
		for _, ts := range testSizes {
			if ts.option > c.sizeOption {
				continue
			}
			phase.init(ts.size)
			if err := s.runTest(); err != nil {
				s.conn.Close()
				return err
			}
		}
		if err := s.conn.Close(); err != nil {
			return err
		}
	}
	return nil
}

func (s *session) abort() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.aborted = true
	if s.ln != nil {
		s.ln.Close()
	}
	if s.conn != nil {
		s.conn.Close()
	}
}

// setConn records the connection for abort; it closes it at once if
// the run was aborted meanwhile.
func (s *session) setConn(c net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conn = c
	if s.aborted {
		c.Close()
	}
}

func (s *session) listen() error {
	addr := net.JoinHostPort(s.src, s.port)
	var err error
	if s.sockets {
		s.ln, err = net.Listen("tcp", addr)
	} else {
		s.ln, err = s.options(optMixed).Listen("rdma", addr)
	}
	if err != nil {
		return fmt.Errorf("rlisten: %w", err)
	}
	s.mu.Lock()
	if s.aborted {
		s.ln.Close()
	}
	s.mu.Unlock()
	return nil
}

func (s *session) connect(ctx context.Context, opt optimization) error {
	var (
		conn net.Conn
		err  error
	)
	switch {
	case s.dst == "":
		if l, ok := s.ln.(*rsocket.Listener); ok {
			// Accepted connections take the listener's options; the
			// server sets them on the listening socket, as rstream does.
			l.SetOptions(*s.options(opt))
		}
		conn, err = s.ln.Accept()
		if err != nil {
			return fmt.Errorf("raccept: %w", err)
		}
	case s.sockets:
		d := net.Dialer{}
		if s.src != "" {
			d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(s.src)}
		}
		conn, err = d.DialContext(ctx, "tcp", net.JoinHostPort(s.dst, s.port))
	default:
		conn, err = s.options(opt).Dial(ctx, "rdma", net.JoinHostPort(s.dst, s.port))
	}
	if err != nil {
		return fmt.Errorf("rconnect: %w", err)
	}
	s.setConn(conn)
	return nil
}

// sizeToCount is common.c's size_to_count.
func sizeToCount(size int) int {
	switch {
	case size >= 1<<20:
		return 100
	case size >= 1<<16:
		return 1000
	case size >= 1<<10:
		return 10000
	}
	return 100000
}

func (s *session) initLatency(size int) {
	s.name = sizeStr(int64(size)) + "_lat"
	s.transferCount, s.transferSize, s.iterations = 1, size, sizeToCount(size)
}

func (s *session) initBandwidth(size int) {
	s.name = sizeStr(int64(size)) + "_bw"
	s.iterations, s.transferSize, s.transferCount = 1, size, sizeToCount(size)
}

func (s *session) send(size int) error {
	b := s.buf[:size]
	if s.verify {
		for i := range b {
			b[i] = s.sendSeq
			s.sendSeq++
		}
	}
	if _, err := s.conn.Write(b); err != nil {
		return fmt.Errorf("rsend: %w", err)
	}
	return nil
}

func (s *session) recv(size int) error {
	b := s.buf[:size]
	if _, err := io.ReadFull(s.conn, b); err != nil {
		return fmt.Errorf("rrecv: %w", err)
	}
	if s.verify {
		for i := range b {
			if b[i] != s.recvSeq {
				fmt.Fprintf(s.stdout, "data verification failed byte %d\n", s.totalBytes)
				return errors.New("data verification failed")
			}
			s.recvSeq++
			s.totalBytes++
		}
	}
	return nil
}

// runTest is run_test: the 16-byte sync, then the timed rounds.
func (s *session) runTest() error {
	client := s.dst != ""
	first, second := s.recv, s.send
	if client {
		first, second = s.send, s.recv
	}
	if err := first(16); err != nil {
		return err
	}
	if err := second(16); err != nil {
		return err
	}
	start := time.Now()
	for range s.iterations {
		for range s.transferCount {
			if err := first(s.transferSize); err != nil {
				return err
			}
		}
		for range s.transferCount {
			if err := second(s.transferSize); err != nil {
				return err
			}
		}
	}
	s.showPerf(time.Since(start))
	return nil
}

// showPerf prints one result line as show_perf does.
func (s *session) showPerf(d time.Duration) {
	usec := float64(d.Microseconds())
	bytes := int64(s.iterations) * int64(s.transferCount) * int64(s.transferSize) * 2
	fmt.Fprintf(s.stdout, "%-10s%-8s%-8s%-8s%-8s%8.2fs%10.2f%11.2f\n",
		s.name, sizeStr(int64(s.transferSize)), cntStr(int64(s.transferCount)), cntStr(int64(s.iterations)),
		sizeStr(bytes), usec/1e6, float64(bytes*8)/(1000*usec), (usec/float64(s.iterations))/float64(s.transferCount*2))
}

// sizeStr is common.c's size_str.
func sizeStr(size int64) string {
	base, mag := int64(1), ""
	switch {
	case size >= 1<<30:
		base, mag = 1<<30, "g"
	case size >= 1<<20:
		base, mag = 1<<20, "m"
	case size >= 1<<10:
		base, mag = 1<<10, "k"
	}
	var frac int64
	if size/base < 10 {
		frac = (size % base) * 10 / base
	}
	if frac != 0 {
		return fmt.Sprintf("%d.%d%s", size/base, frac, mag)
	}
	return fmt.Sprintf("%d%s", size/base, mag)
}

// cntStr is common.c's cnt_str.
func cntStr(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%db", n/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%dm", n/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%dk", n/1e3)
	}
	return strconv.FormatInt(n, 10)
}
