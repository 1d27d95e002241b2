package main

// 04-write-to-persistent: the client writes its greeting into the
// server's memory and makes it durable by reading back from it
// (read-after-write), then translates its own copy.

import (
	"context"
	"io"

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
		raw, err := h.cleanup.alloc(rawBufferSize)
		if err != nil {
			return err
		}
		rawMR, err := h.cleanup.register(p, raw.b, rpma.UsageReadDst)
		if err != nil {
			return err
		}
		if err := h.remote(); err != nil {
			return err
		}
		if err := h.write(); err != nil {
			return err
		}
		// The read after the write makes the written data durable.
		if err := h.conn.Read(rawMR, 0, h.dst, 0, rawBufferSize, rpma.Op{Flags: rpma.CompletionAlways}); err != nil {
			return err
		}
		return readDone(ctx, h.conn, h.stderr)
	})
}
