package main

// What librpma 1.3's examples/common directory holds: struct common_data,
// struct hello_t, the connect and accept helpers of common-conn.c and the
// ping-pong completion handling of common-messages-ping-pong.c.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/mr"
	"github.com/purerdma/purerdma/rpma"
)

const (
	kilobyte = 1024
	// noPmemMsg is NO_PMEM_MSG of a build without libpmem.
	noPmemMsg = "The example is unable to use libpmem. If unintended please check the build log. Using DRAM instead.\n"
	// pmemIgnored is printed when a <pmem-path> is given anyway.
	pmemIgnored = "rpma-examples: <pmem-path> %q ignored: persistent memory is not supported\n"
)

// descriptorsMaxSize is DESCRIPTORS_MAX_SIZE.
const descriptorsMaxSize = 24

// commonDataSize is sizeof(struct common_data).
const commonDataSize = 4 + descriptorsMaxSize

// commonData is struct common_data, sent as the connection's private data:
// a uint16 offset, the sizes of the MR and peer config descriptors, and
// both descriptors one after the other, in host byte order.
type commonData struct {
	DataOffset   uint16
	MRDescSize   uint8
	PcfgDescSize uint8
	Descriptors  [descriptorsMaxSize]byte
}

// newCommonData packs m's descriptor and, if pcfg is not nil, the peer
// config's after it.
func newCommonData(offset uint16, m *rpma.MR, pcfg *rpma.PeerConfig) (commonData, error) {
	d := commonData{DataOffset: offset}
	desc := m.Descriptor()
	if pcfg != nil {
		d.PcfgDescSize = uint8(rpma.PeerConfigDescriptorSize)
		desc = append(desc, pcfg.Descriptor()...)
	}
	if len(desc) > descriptorsMaxSize {
		return d, fmt.Errorf("descriptors of %d bytes do not fit in %d", len(desc), descriptorsMaxSize)
	}
	d.MRDescSize = uint8(len(m.Descriptor()))
	copy(d.Descriptors[:], desc)
	return d, nil
}

// encode returns the 28 bytes of the C struct.
func (d commonData) encode() []byte {
	b := make([]byte, commonDataSize)
	binary.NativeEndian.PutUint16(b, d.DataOffset)
	b[2], b[3] = d.MRDescSize, d.PcfgDescSize
	copy(b[4:], d.Descriptors[:])
	return b
}

// decodeCommonData reads the struct from private data, which the
// transport may have padded.
func decodeCommonData(b []byte) (commonData, error) {
	var d commonData
	if len(b) < commonDataSize {
		return d, fmt.Errorf("private data of %d bytes is shorter than struct common_data (%d)", len(b), commonDataSize)
	}
	d.DataOffset = binary.NativeEndian.Uint16(b)
	d.MRDescSize, d.PcfgDescSize = b[2], b[3]
	copy(d.Descriptors[:], b[4:commonDataSize])
	if int(d.MRDescSize)+int(d.PcfgDescSize) > descriptorsMaxSize {
		return d, fmt.Errorf("descriptor sizes %d+%d exceed %d", d.MRDescSize, d.PcfgDescSize, descriptorsMaxSize)
	}
	return d, nil
}

func (d commonData) remoteMR() (*rpma.RemoteMR, error) {
	return rpma.RemoteMRFromDescriptor(d.Descriptors[:d.MRDescSize])
}

func (d commonData) peerConfig() (rpma.PeerConfig, error) {
	return rpma.PeerConfigFromDescriptor(d.Descriptors[d.MRDescSize : d.MRDescSize+d.PcfgDescSize])
}

// struct hello_t {enum lang_t lang; char str[HELLO_STR_SIZE];}
const (
	helloStrSize   = 1024
	helloStrOffset = 4
	helloTSize     = helloStrOffset + helloStrSize
)

var helloStrs = []string{"Hello world!", "¡Hola Mundo!"}

// writeHelloStr is write_hello_str on the bytes of a hello_t.
func writeHelloStr(hello []byte, lang uint32) {
	binary.NativeEndian.PutUint32(hello, lang)
	str := hello[helloStrOffset:helloTSize]
	clear(str)
	copy(str[:helloStrSize-1], helloStrs[lang])
}

// translate is translate(): it switches the greeting's language.
func translate(w io.Writer, hello []byte) {
	fmt.Fprintf(w, "translating...\n")
	lang := binary.NativeEndian.Uint32(hello)
	writeHelloStr(hello, (lang+1)%uint32(len(helloStrs)))
}

// cstr reads a NUL-terminated C string.
func cstr(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// strtoul parses a decimal argument as strtoul_noerror does: garbage
// reads as 0, overflow is fatal.
func strtoul(s string) (uint64, error) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	j := i
	if j < len(s) && s[j] == '+' {
		j++
	}
	k := j
	for k < len(s) && s[k] >= '0' && s[k] <= '9' {
		k++
	}
	if k == j {
		return 0, nil
	}
	v, err := strconv.ParseUint(s[j:k], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("strtoul(%s) overflowed", s)
	}
	return v, nil
}

// code turns an error into the C example's return value: the RPMA_E_*
// code when there is one, -1 otherwise.
func code(err error) int {
	if err == nil {
		return 0
	}
	if c := rpma.Code(err); c != rpma.CodeUnknown || errors.Is(err, rpma.ErrUnknown) {
		return c
	}
	return -1
}

// buffer is memory from mr.Alloc, as malloc_aligned gives it: zeroed and
// page aligned. b is the size asked for.
type buffer struct {
	b   []byte
	all []byte
}

func alloc(n int) (*buffer, error) {
	all, err := mr.Alloc(n)
	if err != nil {
		return nil, err
	}
	return &buffer{b: all[:n], all: all}, nil
}

func (b *buffer) free() {
	if b != nil {
		mr.Free(b.all)
	}
}

// resolveAddr turns the <addr> <port> arguments into an address.
func resolveAddr(addr, port string) (netip.AddrPort, error) {
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("port %q: %w", port, rpma.ErrInvalid)
	}
	a, err := netip.ParseAddr(addr)
	if err != nil {
		ips, lerr := net.DefaultResolver.LookupNetIP(context.Background(), "ip4", addr)
		if lerr != nil || len(ips) == 0 {
			return netip.AddrPort{}, fmt.Errorf("address %q: %w", addr, rpma.ErrInvalid)
		}
		a = ips[0]
	}
	return netip.AddrPortFrom(a.Unmap(), uint16(p)), nil
}

// peer is what common_peer_via_address makes: the device context of the
// address and a peer on it.
type peer struct {
	*rpma.Peer
	addr netip.AddrPort
	done func()
}

// newPeer is server_peer_via_address (typ ContextLocal) and
// client_peer_via_address (ContextRemote).
func newPeer(ctx context.Context, addr, port string, typ rpma.ContextType) (*peer, error) {
	ap, err := resolveAddr(addr, port)
	if err != nil {
		return nil, err
	}
	uctx, err := rpma.ContextByAddr(ctx, ap.Addr(), typ)
	if err != nil {
		return nil, err
	}
	p, err := rpma.NewPeerWithOptions(uctx, peerOptions())
	if err != nil {
		uctx.Close()
		return nil, err
	}
	return &peer{Peer: p, addr: ap, done: func() { p.Close(); uctx.Close() }}, nil
}

func (p *peer) close() { p.done() }

// peerOptions are the examples' peers' options: by default they flush
// as librpma 1.2 does (FlushEmulated: an RDMA read, and remote read on
// regions with flush usages), what the C examples do on the wire when
// they are built against the librpma Debian 12 ships. With librpma 1.3's
// FlushAuto, on a kernel with native flush (rxe since Linux 6.2), a port
// flushed a C 1.2 server's region natively and failed with a remote
// access error (05's and 07's clients), and a C 1.2 client's read-flush
// of a port's region failed the same way (05's server): the hand runs
// of librpma's own examples against the ports on Linux 6.12 showed both
// (docs/librpma-mapping.md). RPMA_EXAMPLES_FLUSH=auto chooses librpma
// 1.3's behaviour, for peers built against librpma 1.3 and rdma-core 45
// or later.
func peerOptions() rpma.PeerOptions {
	if os.Getenv("RPMA_EXAMPLES_FLUSH") == "auto" {
		return rpma.PeerOptions{Flush: rpma.FlushAuto}
	}
	return rpma.PeerOptions{Flush: rpma.FlushEmulated}
}

type listenHookKey struct{}

// withListenHook returns a context whose servers call f once they listen,
// so that an in-process client knows when to connect.
func withListenHook(ctx context.Context, f func()) context.Context {
	return context.WithValue(ctx, listenHookKey{}, f)
}

// listen is rpma_ep_listen at the peer's address.
func (p *peer) listen(ctx context.Context) (*rpma.Endpoint, error) {
	ep, err := p.Listen(p.addr)
	if err == nil {
		if f, ok := ctx.Value(listenHookKey{}).(func()); ok {
			f()
		}
	}
	return ep, err
}

// eventTimeout bounds the wait for a connection to be established, where
// the C examples block forever; tests shorten it. Waits for completions
// and for the peer's close are not bounded, as in C: a server may answer
// much later (13's waits <timeout> seconds for more clients before it
// answers the first, and closes only when every client is done).
var eventTimeout = 15 * time.Second

// within bounds one wait for a connection event by eventTimeout.
func within(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, eventTimeout)
}

// errUnexpected marks a failure the example already reported.
var errUnexpected = errors.New("failed")

// establish connects a request, accepting it on the passive side, and waits
// for the connection to be established.
func establish(ctx context.Context, req *rpma.ConnRequest, pdata []byte, stderr io.Writer) (*rpma.Conn, error) {
	conn, err := req.Connect(pdata)
	if err != nil {
		return nil, err
	}
	wctx, cancel := within(ctx)
	defer cancel()
	ev, err := conn.NextEvent(wctx)
	if err == nil && ev != rpma.ConnEstablished {
		fmt.Fprintf(stderr, "rpma_conn_next_event returned an unexpected event: %s\n", ev)
		err = errUnexpected
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// clientConnect is client_connect.
func (p *peer) clientConnect(ctx context.Context, cfg *rpma.ConnConfig, pdata []byte, stderr io.Writer) (*rpma.Conn, error) {
	wctx, cancel := within(ctx)
	defer cancel()
	req, err := p.NewConnRequest(wctx, p.addr, cfg)
	if err != nil {
		return nil, err
	}
	return establish(ctx, req, pdata, stderr)
}

// nextConnRequest is rpma_ep_next_conn_req: it waits for a client as long
// as ctx lets it.
func nextConnRequest(ctx context.Context, ep *rpma.Endpoint, cfg *rpma.ConnConfig) (*rpma.ConnRequest, error) {
	return ep.NextConnRequest(ctx, cfg)
}

// serverAccept is server_accept_connection.
func serverAccept(ctx context.Context, ep *rpma.Endpoint, cfg *rpma.ConnConfig, pdata []byte, stderr io.Writer) (*rpma.Conn, error) {
	req, err := nextConnRequest(ctx, ep, cfg)
	if err != nil {
		return nil, err
	}
	return establish(ctx, req, pdata, stderr)
}

// waitForClose is common_wait_for_conn_close_verbose.
func waitForClose(ctx context.Context, conn *rpma.Conn, stderr io.Writer) error {
	ev, err := conn.NextEvent(ctx)
	if err == nil && ev != rpma.ConnClosed {
		fmt.Fprintf(stderr, "rpma_conn_next_event returned an unexpected event: %s\n", ev)
	}
	return err
}

// waitForCloseAndDisconnect is common_wait_for_conn_close_and_disconnect.
func waitForCloseAndDisconnect(ctx context.Context, conn *rpma.Conn, stderr io.Writer) error {
	return errors.Join(waitForClose(ctx, conn, stderr), conn.Disconnect(), conn.Close())
}

// disconnectAndWaitForClose is common_disconnect_and_wait_for_conn_close.
func disconnectAndWaitForClose(ctx context.Context, conn *rpma.Conn, stderr io.Writer) error {
	err := conn.Disconnect()
	if err == nil {
		err = waitForClose(ctx, conn, stderr)
	}
	return errors.Join(err, conn.Close())
}

// getWC is rpma_cq_wait followed by rpma_cq_get_wc: it returns up to
// len(wc) completions, waiting for the first. Unlike the C sequence it
// polls before it waits, so a completion whose notification an earlier
// wait consumed is not lost.
func getWC(ctx context.Context, q *rpma.CQ, wc []cq.WC) (int, error) {
	for {
		got, err := q.GetWC(wc)
		if err == nil {
			return got, nil
		}
		if !errors.Is(err, rpma.ErrNoCompletion) {
			return 0, err
		}
		if err := q.Wait(ctx); err != nil && !errors.Is(err, rpma.ErrNoCompletion) {
			return 0, err
		}
	}
}

// getOneWC waits for one completion.
func getOneWC(ctx context.Context, q *rpma.CQ) (cq.WC, error) {
	var wc [1]cq.WC
	_, err := getWC(ctx, q, wc[:])
	return wc[0], err
}

// connWaitOneWC is wait_and_validate_completion's rpma_conn_wait followed
// by rpma_cq_get_wc, for a connection whose CQs share a channel, with one
// difference: it takes the completion from q, the CQ that gets the
// operation waited for, where the C example takes it from whichever CQ the
// channel reported first. The two CQs' completions come in no fixed
// order: from Linux 6.12 rxe completes sends from a workqueue, so the
// receive of the peer's answer can complete before the send it answers,
// and the C example then fails with "unexpected wc.opcode value".
func connWaitOneWC(ctx context.Context, conn *rpma.Conn, q *rpma.CQ) (cq.WC, error) {
	var wc [1]cq.WC
	for {
		_, err := q.GetWC(wc[:])
		if err == nil {
			return wc[0], nil
		}
		if !errors.Is(err, rpma.ErrNoCompletion) {
			return wc[0], err
		}
		// The wait re-arms whichever CQ it reports; a completion on the
		// other one stays there for its own turn.
		if _, _, err := conn.Wait(ctx); err != nil && !errors.Is(err, rpma.ErrNoCompletion) {
			return wc[0], err
		}
	}
}

// validateOpcode checks a completion's status and opcode as
// get_wc_and_validate does.
func validateOpcode(wc cq.WC, op cq.Opcode, what string, stderr io.Writer) error {
	if wc.Status != cq.Success {
		fmt.Fprintf(stderr, "%s failed: %s\n", what, wc.Status)
		return errUnexpected
	}
	if wc.Opcode != op {
		fmt.Fprintf(stderr, "unexpected wc.opcode value (0x%X != 0x%X)\n", int(wc.Opcode), int(op))
		return errUnexpected
	}
	return nil
}

// The messages of the ping-pong examples (common-messages-ping-pong.h).
const (
	msgSize = 8
	iAmDone = ^uint64(0) // I_M_DONE
	// recvID is the wr_id of a receive: the C examples use the buffer's
	// address.
	recvID = 0x1ec7
)

// pingPong is the completion state of wait_and_process_completions.
type pingPong struct {
	recvID          uint64
	sendCmpl, rcvOK bool
}

// validateWC is validate_wc.
func (pp *pingPong) validateWC(wc *cq.WC, stderr io.Writer) error {
	if wc.Status != cq.Success {
		f := "recv"
		if wc.Opcode == cq.OpSend {
			f = "send"
		}
		fmt.Fprintf(stderr, "rpma_%s() failed: %s\n", f, wc.Status)
		return errUnexpected
	}
	switch wc.Opcode {
	case cq.OpSend:
		pp.sendCmpl = true
	case cq.OpRecv:
		if wc.ID != pp.recvID || wc.ByteLen != msgSize {
			fmt.Fprintf(stderr, "received completion is not as expected (0x%X != 0x%X [wc.wr_id] || %d != %d [wc.byte_len])\n",
				wc.ID, pp.recvID, wc.ByteLen, msgSize)
			return errUnexpected
		}
		pp.rcvOK = true
	}
	return nil
}

// waitAndProcess is wait_and_process_completions: it returns once both a
// send and a receive completed.
func (pp *pingPong) waitAndProcess(ctx context.Context, q *rpma.CQ, stderr io.Writer) error {
	var wc [2]cq.WC
	for !pp.sendCmpl || !pp.rcvOK {
		n, err := getWC(ctx, q, wc[:])
		if err != nil {
			return err
		}
		for i := range n {
			if err := pp.validateWC(&wc[i], stderr); err != nil {
				return err
			}
		}
	}
	return nil
}

// sleepUsec is usleep.
func sleepUsec(ctx context.Context, usec uint64) {
	if usec == 0 {
		return
	}
	t := time.NewTimer(time.Duration(usec) * time.Microsecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// pmemArg notes a <pmem-path> argument (args[2]) that this port ignores,
// and prints NO_PMEM_MSG as the C examples do on DRAM.
func pmemArg(args []string, stderr io.Writer) {
	if len(args) >= 3 {
		fmt.Fprintf(stderr, pmemIgnored, args[2])
	}
	fmt.Fprint(stderr, noPmemMsg)
}

// helloServer is the server of 04-write-to-persistent and
// 05-flush-to-persistent: it offers a 1 KiB string for the client to
// write and prints it before and after. pcfg, when not nil, is sent after
// the MR descriptor.
func helloServer(ctx context.Context, args []string, usage rpma.Usage, pcfg *rpma.PeerConfig, stdout, stderr io.Writer) int {
	pmemArg(args, stderr)
	buf, err := alloc(helloStrSize)
	if err != nil {
		return -1
	}
	defer buf.free()
	if buf.b[0] != 0 {
		fmt.Fprintf(stdout, "Old value: %s\n", cstr(buf.b))
	}
	return serveRegion(ctx, args, buf.b, usage, 0, pcfg, stderr, func(conn *rpma.Conn, err error) int {
		if err == nil {
			err = waitForCloseAndDisconnect(ctx, conn, stderr)
		}
		if err != nil {
			return code(err)
		}
		fmt.Fprintf(stdout, "New value: %s\n", cstr(buf.b))
		return 0
	})
}

// helloClient is what the clients of 04 and 05 share: a hello_t in
// English, a connection, the region the server offers and the RDMA write
// of the string into it. persist then makes the write durable; the
// client translates the greeting once persist succeeds.
type helloClient struct {
	conn    *rpma.Conn
	data    commonData
	dst     *rpma.RemoteMR
	dstOff  int
	srcMR   *rpma.MR
	hello   []byte
	stdout  io.Writer
	stderr  io.Writer
	cleanup undo
}

// runHelloClient sets up, writes, calls persist and translates.
func runHelloClient(ctx context.Context, args []string, stdout, stderr io.Writer, persist func(ctx context.Context, h *helloClient, p *peer) error) int {
	h := &helloClient{stdout: stdout, stderr: stderr}
	defer h.cleanup.run()
	pmemArg(args, stderr)
	buf, err := h.cleanup.alloc(helloTSize)
	if err != nil {
		return -1
	}
	h.hello = buf.b
	writeHelloStr(h.hello, 0)
	fmt.Fprintf(stdout, "Next value: %s\n", cstr(h.hello[helloStrOffset:]))
	p, err := h.cleanup.peer(ctx, args, rpma.ContextRemote)
	if err != nil {
		return code(err)
	}
	if h.conn, err = h.cleanup.connect(ctx, p, nil, nil, stderr); err != nil {
		return code(err)
	}
	if h.srcMR, err = h.cleanup.register(p, h.hello, rpma.UsageWriteSrc); err != nil {
		return code(err)
	}
	if h.data, err = decodeCommonData(h.conn.PrivateData()); err != nil {
		return 0 // as C: ret is 0 when the private data is too short
	}
	if err := persist(ctx, h, p); err != nil {
		return code(err)
	}
	translate(stdout, h.hello)
	fmt.Fprintf(stdout, "Translation: %s\n", cstr(h.hello[helloStrOffset:]))
	return 0
}

// remote reads the server's region from the private data and checks that
// the string fits.
func (h *helloClient) remote() error {
	var err error
	if h.dst, err = h.data.remoteMR(); err != nil {
		return err
	}
	h.dstOff = int(h.data.DataOffset)
	if size := int(h.dst.Len()) - h.dstOff; size < helloStrSize {
		fmt.Fprintf(h.stderr, "Remote memory region size too small for writing the data of the assumed size (%d < %d)\n", size, helloStrSize)
		return errUnexpected
	}
	return nil
}

// write is the RDMA write of the string, completing only on error.
func (h *helloClient) write() error {
	return h.conn.Write(h.dst, h.dstOff, h.srcMR, helloStrOffset, helloStrSize, rpma.Op{Flags: rpma.CompletionOnError})
}

func errorsJoin(errs ...error) error { return errors.Join(errs...) }

// readDone waits for the completion of an rpma_read and checks its status
// and opcode.
func readDone(ctx context.Context, conn *rpma.Conn, stderr io.Writer) error {
	wc, err := statusDone(ctx, conn, "rpma_read()", stderr)
	if err == nil && wc.Opcode != cq.OpRDMARead {
		fmt.Fprintf(stderr, "unexpected wc.opcode value (%d != %d)\n", wc.Opcode, cq.OpRDMARead)
		err = errUnexpected
	}
	return err
}

// statusDone waits for a completion on the connection's CQ and checks
// that what (the operation) succeeded.
func statusDone(ctx context.Context, conn *rpma.Conn, what string, stderr io.Writer) (cq.WC, error) {
	wc, err := getOneWC(ctx, conn.CQ())
	if err == nil && wc.Status != cq.Success {
		fmt.Fprintf(stderr, "%s failed: %s\n", what, wc.Status)
		err = errUnexpected
	}
	return wc, err
}

// flushDone waits for the completion of an rpma_flush with wr_id flushID
// and checks it.
func flushDone(ctx context.Context, conn *rpma.Conn, stderr io.Writer) error {
	wc, err := getOneWC(ctx, conn.CQ())
	switch {
	case err != nil:
		return err
	case wc.ID != flushID:
		fmt.Fprintf(stderr, "unexpected wc.wr_id value (0x%X != 0x%X)\n", wc.ID, flushID)
	case wc.Status != cq.Success:
		fmt.Fprintf(stderr, "rpma_flush() failed: %s\n", wc.Status)
	default:
		return nil
	}
	return errUnexpected
}
