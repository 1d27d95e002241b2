package rpma_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"log"
	"sync/atomic"
	"unsafe"

	"github.com/purerdma/purerdma/rpma"
)

// A key-value store: a table of fixed-size slots in one server region. GET
// is an RDMA read of a slot; PUT a message the server applies and answers.
// A slot is a seqlock, [version | value | version]: see docs/rpma.md.
const (
	kvSlots     = 64
	kvSlotSize  = 64 // one cache line: 8 + kvValueSize + 8
	kvValueSize = 48
)

// serveKV accepts one client on l (its region is the table) and applies its PUTs.
func serveKV(ctx context.Context, l *rpma.Listener) error {
	conn, err := l.Accept(ctx)
	if err != nil {
		return err
	}
	defer conn.Close() // closes the Messenger too
	m, err := rpma.NewMessenger(conn, 4+kvValueSize, 4)
	if err != nil {
		return err
	}
	table := l.Region().Bytes()
	storeSlot(table[:kvSlotSize], nil) // slot 0's version > 0: our receives are posted
	for {
		msg, err := m.Recv(ctx)
		if err != nil {
			return err
		}
		ack := []byte{0} // refused
		if b := msg.Bytes(); len(b) >= 4 && binary.LittleEndian.Uint32(b) < kvSlots {
			storeSlot(table[binary.LittleEndian.Uint32(b)*kvSlotSize:][:kvSlotSize], b[4:])
			ack[0] = 1
		}
		msg.Release()
		if err := m.Send(ctx, ack); err != nil {
			return err
		}
	}
}

// storeSlot writes v into slot as a seqlock writer: both versions odd, the
// value, both even (the head, read first, last); atomic stores keep the order.
func storeSlot(slot, v []byte) {
	word := func(off int) *atomic.Uint64 { return (*atomic.Uint64)(unsafe.Pointer(&slot[off])) }
	head, tail := word(0), word(kvSlotSize-8)
	head.Store(head.Load() + 1)
	tail.Store(head.Load())
	var val [kvValueSize]byte
	copy(val[:], v)
	for i := 0; i < kvValueSize; i += 8 {
		word(8 + i).Store(binary.LittleEndian.Uint64(val[i:]))
	}
	tail.Store(head.Load() + 1)
	head.Store(tail.Load())
}

// kvClient is a client of serveKV: one goroutine may Get while one Puts.
type kvClient struct {
	*rpma.Client
	m   *rpma.Messenger
	buf *rpma.MR // where Get's reads land
}

func dialKV(ctx context.Context, address string) (*kvClient, error) {
	c, err := rpma.Dial(ctx, address, nil)
	if err != nil {
		return nil, err
	}
	kv := &kvClient{Client: c}
	if kv.buf, err = c.Peer().AllocMR(kvSlotSize, rpma.UsageReadDst); err == nil {
		kv.m, err = rpma.NewMessenger(c.Conn(), 4+kvValueSize, 4)
	}
	if err == nil && c.Remote() == nil {
		err = fmt.Errorf("%s sent no table", address)
	}
	for err == nil && binary.LittleEndian.Uint64(kv.buf.Bytes()) == 0 { // iWARP drops a message no receive waits for
		err = c.Conn().ReadAndWait(ctx, kv.buf.Span(0, 8), c.Remote().At(0))
	}
	if err != nil {
		c.Close() // frees buf too
		return nil, err
	}
	return kv, nil
}

// Get reads key's slot until it is whole: both versions equal and even.
func (kv *kvClient) Get(ctx context.Context, key int) ([]byte, error) {
	for {
		if err := kv.Conn().ReadAndWait(ctx, kv.buf.Span(0, kvSlotSize), kv.Remote().At(key*kvSlotSize)); err != nil {
			return nil, err
		}
		b := kv.buf.Bytes()
		head, tail := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[kvSlotSize-8:])
		if head == tail && head%2 == 0 {
			return bytes.TrimRight(b[8:8+kvValueSize], "\x00"), nil // valid until the next Get
		}
	}
}

// Put sends key and value to the server and waits for its answer.
func (kv *kvClient) Put(ctx context.Context, key int, value []byte) error {
	var msg [4 + kvValueSize]byte
	binary.LittleEndian.PutUint32(msg[:], uint32(key))
	if err := kv.m.Send(ctx, msg[:4+copy(msg[4:], value)]); err != nil {
		return err
	}
	ack, err := kv.m.Recv(ctx)
	if err == nil && ack.Bytes()[0] != 1 {
		err = fmt.Errorf("put %d: the server refused it", key)
	}
	ack.Release() // a zero Message on error: ErrInvalid, ignored
	return err
}

// A key-value service: GETs are one-sided RDMA reads, PUTs are messages.
func Example_keyValue() {
	ctx := context.Background()
	l, err := rpma.Listen("192.168.77.1:7205", &rpma.ListenOptions{Region: kvSlots * kvSlotSize, RegionUsage: rpma.UsageReadSrc})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close() // ends serveKV's Recv
	go serveKV(ctx, l)
	kv, err := dialKV(ctx, "192.168.77.1:7205")
	if err != nil {
		log.Fatal(err)
	}
	defer kv.Close()
	if err := kv.Put(ctx, 7, []byte("hello")); err != nil {
		log.Fatal(err)
	}
	v, err := kv.Get(ctx, 7)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", v)
}
