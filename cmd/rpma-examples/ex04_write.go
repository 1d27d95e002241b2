package main

// 04-write-to-persistent: the client writes its greeting into the
// server's memory and makes it durable by reading back from it
// (read-after-write), then translates its own copy.

import (
	"context"
	"fmt"
	"io"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/rpma"
)

// rawBufferSize is RAW_BUFFER_SIZE.
const rawBufferSize = 8

func writeServer(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		return usageErr(stderr, "04-write-to-persistent", "server", "<server_address> <port> [<pmem-path>]")
	}
	return helloServer(ctx, args, rpma.UsageWriteDst|rpma.UsageReadSrc, nil, stdout, stderr)
}

func writeClient(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		return usageErr(stderr, "04-write-to-persistent", "client", "<server_address> <port> [<pmem-path> [<pmem-offset>]]")
	}
	return runHelloClient(ctx, args, stdout, stderr, func(ctx context.Context, h *helloClient, p *peer) error {
		raw, err := alloc(rawBufferSize)
		if err != nil {
			return err
		}
		h.cleanup = append(h.cleanup, raw.free)
		rawMR, err := p.RegisterMR(raw.b, rpma.UsageReadDst)
		if err != nil {
			return err
		}
		h.cleanup = append(h.cleanup, func() { rawMR.Close() })
		if err := h.remote(); err != nil {
			return err
		}
		if err := h.write(); err != nil {
			return err
		}
		// The read after the write makes the written data durable.
		if err := h.conn.Read(rawMR, 0, h.dst, 0, rawBufferSize, rpma.CompletionAlways, 0); err != nil {
			return err
		}
		wc, err := getOneWC(ctx, h.conn.CQ())
		if err != nil {
			return err
		}
		if wc.Status != cq.Success {
			fmt.Fprintf(h.stderr, "rpma_read() failed: %s\n", wc.Status)
			return errUnexpected
		}
		if wc.Opcode != cq.OpRDMARead {
			fmt.Fprintf(h.stderr, "unexpected wc.opcode value (%d != %d)\n", wc.Opcode, cq.OpRDMARead)
			return errUnexpected
		}
		return nil
	})
}
