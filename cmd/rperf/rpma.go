package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/internal/perftest"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rpma"
)

// rperf rpma measures the rpma package's latency between two hosts, or
// on one, as perftest's latency tests measure the verbs': what an
// application on rpma pays per read, per write made visible with a flush,
// and per message. It does what test/rpmabench/testdata/peer.c does with
// librpma, with the same arguments and output, so that either side may be
// Go or C (hack/benchcmp's rpma rows pair them):
//
//	rperf rpma server <addr> <port> <size>
//	rperf rpma client <addr> <port> <test> <size> <iters>
//
// test is read, write_flush or sendrecv ("rpma_" prefix allowed). The
// server registers 2*size bytes (rounded up to a page), prints
// "listening", accepts one connection with a receive posted and sends
// struct common_data (librpma's examples' private data: u16 data_offset,
// u8 mr_desc_size, u8 pcfg_desc_size, 24 bytes of descriptors). The
// client's private data, "rpmabench <test> <count>\x00", tells it how many
// messages of a sendrecv client to answer, busy-polling. The client runs
// iters/10 (at least 5) warm-up iterations, then iters timed ones,
// busy-polling GetWC, and prints
//
//	RESULT test=<test> bytes=<size> iters=<iters> median_us=<median>
//
// read is a Read of size bytes (CompletionAlways); write_flush a Write
// (CompletionOnError) and a FlushVisibility (CompletionAlways), waiting
// for the flush; sendrecv a Recv and a Send (CompletionAlways), waiting
// for both completions, reported as half the round trip.

// rpmaArgs are rperf rpma's parsed arguments.
type rpmaArgs struct {
	// emulatedFlush makes the peer flush as librpma 1.2 does (an 8-byte
	// read; rpma.FlushEmulated) even where the kernel has RDMA FLUSH:
	// the work Debian's librpma does on every kernel, for a comparison
	// with it.
	emulatedFlush bool
	server        bool
	addr          netip.Addr
	port          uint16
	test          string // client only
	size          int
	iters         int // client only
}

const rpmaUsage = `Usage:
  rperf rpma [-emulated-flush] server <addr> <port> <size>
  rperf rpma [-emulated-flush] client <addr> <port> read|write_flush|sendrecv <size> <iters>
`

func parseRPMAArgs(args []string) (rpmaArgs, error) {
	var a rpmaArgs
	if len(args) > 0 && args[0] == "-emulated-flush" {
		a.emulatedFlush, args = true, args[1:]
	}
	switch {
	case len(args) == 4 && args[0] == "server":
		a.server = true
	case len(args) == 6 && args[0] == "client":
		a.test = strings.TrimPrefix(args[3], "rpma_")
		if !slices.Contains(perftest.RPMATests, a.test) {
			return a, fmt.Errorf("unknown test %q", args[3])
		}
	default:
		return a, errors.New("wrong arguments")
	}
	var err error
	if a.addr, err = netip.ParseAddr(args[1]); err != nil {
		return a, err
	}
	p, err := strconv.ParseUint(args[2], 10, 16)
	if err != nil {
		return a, fmt.Errorf("invalid port %q", args[2])
	}
	a.port = uint16(p)
	sizeArg := args[3]
	if !a.server {
		sizeArg = args[4]
	}
	if a.size, err = strconv.Atoi(sizeArg); err != nil || a.size < 1 || a.size > 1<<20 {
		return a, fmt.Errorf("invalid size %q", sizeArg)
	}
	if !a.server {
		if a.iters, err = strconv.Atoi(args[5]); err != nil || a.iters < 1 || a.iters > 1<<24 {
			return a, fmt.Errorf("invalid iterations %q", args[5])
		}
	}
	return a, nil
}

// rpmaMain is rperf rpma.
func rpmaMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a, err := parseRPMAArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "rperf rpma: %v\n%s", err, rpmaUsage)
		return 2
	}
	if a.server {
		err = rpmaServer(ctx, a, stdout)
	} else {
		var r perftest.RPMAResult
		if r, err = rpmaClient(ctx, a); err == nil {
			fmt.Fprintln(stdout, r)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "rperf rpma: %v\n", err)
		return 1
	}
	return 0
}

const (
	rpmaPage         = 4096
	rpmaHelloPrefix  = "rpmabench "
	commonDataSize   = 28 // sizeof(struct common_data)
	maxDescriptors   = commonDataSize - 4
	rpmaServerUsage  = rpma.UsageReadSrc | rpma.UsageWriteDst | rpma.UsageFlushTypeVisibility | rpma.UsageSend | rpma.UsageRecv
	rpmaClientUsage  = rpma.UsageReadDst | rpma.UsageWriteSrc | rpma.UsageSend | rpma.UsageRecv
	rpmaPollCtxEvery = 1 << 16 // empty polls between looks at the context
)

// rpmaPeer is an opened device, its peer and a registered buffer of at
// least n bytes.
type rpmaPeer struct {
	uctx interface{ Close() error }
	peer *rpma.Peer
	buf  []byte
	mr   *rpma.MR
}

func openRPMAPeer(ctx context.Context, a rpmaArgs, typ rpma.ContextType, n int, usage rpma.Usage) (*rpmaPeer, error) {
	uctx, err := rpma.ContextByAddr(ctx, a.addr, typ)
	if err != nil {
		return nil, err
	}
	p := &rpmaPeer{uctx: uctx}
	opts := rpma.PeerOptions{}
	if a.emulatedFlush {
		opts.Flush = rpma.FlushEmulated
	}
	if p.peer, err = rpma.NewPeerWithOptions(uctx, opts); err != nil {
		p.close()
		return nil, err
	}
	if p.buf, err = mr.Alloc((n + rpmaPage - 1) / rpmaPage * rpmaPage); err != nil {
		p.close()
		return nil, err
	}
	if p.mr, err = p.peer.RegisterMR(p.buf, usage); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

func (p *rpmaPeer) close() error {
	var errs []error
	if p.mr != nil {
		errs = append(errs, p.mr.Close())
	}
	if p.buf != nil {
		errs = append(errs, mr.Free(p.buf))
	}
	if p.peer != nil {
		errs = append(errs, p.peer.Close())
	}
	errs = append(errs, p.uctx.Close())
	return errors.Join(errs...)
}

// pollWC busy-polls q for one successful completion.
func pollWC(ctx context.Context, q *rpma.CQ, wc *[1]cq.WC) error {
	for i := 1; ; i++ {
		_, err := q.GetWC(wc[:])
		if err == nil {
			break
		}
		// The compare first: GetWC returns the sentinel itself, and
		// errors.Is on every empty poll was a tenth of the loop.
		if err != rpma.ErrNoCompletion && !errors.Is(err, rpma.ErrNoCompletion) {
			return err
		}
		if i%rpmaPollCtxEvery == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if wc[0].Status != cq.Success {
		return fmt.Errorf("completion (opcode %v): %v", wc[0].Opcode, wc[0].Status)
	}
	return nil
}

// nextEvent waits for the connection event want.
func nextEvent(ctx context.Context, c *rpma.Conn, want rpma.ConnEvent) error {
	ev, err := c.NextEvent(ctx)
	if err != nil {
		return err
	}
	if ev != want {
		return fmt.Errorf("connection event %v, want %v", ev, want)
	}
	return nil
}

func rpmaServer(ctx context.Context, a rpmaArgs, stdout io.Writer) (err error) {
	size := a.size
	p, err := openRPMAPeer(ctx, a, rpma.ContextLocal, 2*size, rpmaServerUsage)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, p.close()) }()
	mrDesc, pcfgDesc := p.mr.Descriptor(), rpma.PeerConfig{}.Descriptor()
	if len(mrDesc)+len(pcfgDesc) > maxDescriptors {
		return fmt.Errorf("descriptors of %d + %d bytes", len(mrDesc), len(pcfgDesc))
	}
	data := make([]byte, commonDataSize)
	binary.LittleEndian.PutUint16(data, 0) // data_offset
	data[2], data[3] = byte(len(mrDesc)), byte(len(pcfgDesc))
	copy(data[4+copy(data[4:], mrDesc):], pcfgDesc)

	ep, err := p.peer.Listen(netip.AddrPortFrom(a.addr, a.port))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, ep.Close()) }()
	fmt.Fprintln(stdout, "listening")

	req, err := ep.NextConnRequest(ctx, nil)
	if err != nil {
		return err
	}
	hello, _, _ := strings.Cut(string(req.PrivateData()), "\x00")
	var test string
	var count int
	if n, _ := fmt.Sscanf(hello, rpmaHelloPrefix+"%s %d", &test, &count); n != 2 || count < 0 {
		req.Close()
		return fmt.Errorf("client's private data %q", hello)
	}
	if test != "sendrecv" {
		count = 0
	}
	if err := req.Recv(p.mr, size, size, 0); err != nil {
		req.Close()
		return err
	}
	conn, err := req.Connect(data)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, conn.Close()) }()
	if err := nextEvent(ctx, conn, rpma.ConnEstablished); err != nil {
		return err
	}
	q := conn.CQ()
	var wc [1]cq.WC
	// Answer every message, keeping a receive posted.
	for replies, sent := 0, 0; replies < count || sent < count; {
		if err := pollWC(ctx, q, &wc); err != nil {
			return err
		}
		switch wc[0].Opcode {
		case cq.OpRecv:
			if replies++; replies < count {
				if err := conn.Recv(p.mr, size, size, 0); err != nil {
					return err
				}
			}
			if err := conn.Send(p.mr, 0, size, rpma.Op{Flags: rpma.CompletionAlways}); err != nil {
				return err
			}
		case cq.OpSend:
			sent++
		default:
			return fmt.Errorf("completion opcode %v", wc[0].Opcode)
		}
	}
	if err := nextEvent(ctx, conn, rpma.ConnClosed); err != nil {
		return err
	}
	return conn.Disconnect()
}

func rpmaClient(ctx context.Context, a rpmaArgs) (res perftest.RPMAResult, err error) {
	size, iters := a.size, a.iters
	warm := perftest.RPMAWarmup(iters)
	p, err := openRPMAPeer(ctx, a, rpma.ContextRemote, 2*size, rpmaClientUsage)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, p.close()) }()
	count := 0
	if a.test == "sendrecv" {
		count = warm + iters
	}
	req, err := p.peer.NewConnRequest(ctx, netip.AddrPortFrom(a.addr, a.port), nil)
	if err != nil {
		return res, err
	}
	conn, err := req.Connect([]byte(fmt.Sprintf("%s%s %d\x00", rpmaHelloPrefix, a.test, count)))
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, conn.Close()) }()
	if err := nextEvent(ctx, conn, rpma.ConnEstablished); err != nil {
		return res, err
	}
	pd := conn.PrivateData()
	if len(pd) < commonDataSize {
		return res, fmt.Errorf("private data of %d bytes, want %d", len(pd), commonDataSize)
	}
	off, mrSize, pcfgSize := int(binary.LittleEndian.Uint16(pd)), int(pd[2]), int(pd[3])
	if mrSize+pcfgSize > maxDescriptors {
		return res, fmt.Errorf("descriptors of %d + %d bytes", mrSize, pcfgSize)
	}
	remote, err := rpma.RemoteMRFromDescriptor(pd[4 : 4+mrSize])
	if err != nil {
		return res, err
	}
	pcfg, err := rpma.PeerConfigFromDescriptor(pd[4+mrSize : 4+mrSize+pcfgSize])
	if err != nil {
		return res, err
	}
	conn.ApplyRemotePeerConfig(pcfg)
	if uint64(off+size) > remote.Len() {
		return res, fmt.Errorf("remote region of %d bytes at %d, want %d", remote.Len(), off, size)
	}

	q := conn.CQ()
	var wc [1]cq.WC
	lat := make([]float64, iters)
	// Two monotonic readings per iteration, as the C peer's two
	// clock_gettime(CLOCK_MONOTONIC): time.Now reads the wall clock too,
	// a third vDSO call (about 200 ns under TCG).
	base := time.Now()
	for i := -warm; i < iters; i++ {
		t0 := time.Since(base)
		switch a.test {
		case "read":
			if err := conn.Read(p.mr, 0, remote, off, size, rpma.Op{Flags: rpma.CompletionAlways}); err != nil {
				return res, err
			}
			if err := pollWC(ctx, q, &wc); err != nil {
				return res, err
			}
		case "write_flush":
			if err := conn.Write(remote, off, p.mr, 0, size, rpma.Op{Flags: rpma.CompletionOnError}); err != nil {
				return res, err
			}
			if err := conn.Flush(remote, off, size, rpma.FlushVisibility, rpma.Op{Flags: rpma.CompletionAlways}); err != nil {
				return res, err
			}
			if err := pollWC(ctx, q, &wc); err != nil {
				return res, err
			}
		case "sendrecv":
			if err := conn.Recv(p.mr, size, size, 0); err != nil {
				return res, err
			}
			if err := conn.Send(p.mr, 0, size, rpma.Op{Flags: rpma.CompletionAlways}); err != nil {
				return res, err
			}
			for gotSend, gotRecv := false, false; !gotSend || !gotRecv; {
				if err := pollWC(ctx, q, &wc); err != nil {
					return res, err
				}
				switch wc[0].Opcode {
				case cq.OpSend:
					gotSend = true
				case cq.OpRecv:
					gotRecv = true
				}
			}
		}
		if i >= 0 {
			lat[i] = float64((time.Since(base) - t0).Nanoseconds()) / 1e3
		}
	}
	if err := conn.Disconnect(); err != nil {
		return res, err
	}
	if err := nextEvent(ctx, conn, rpma.ConnClosed); err != nil {
		return res, err
	}
	median := perftest.Median(lat)
	if a.test == "sendrecv" {
		median /= 2
	}
	return perftest.RPMAResult{Test: a.test, Bytes: size, Iters: iters, MedianUS: median}, nil
}
