package main

// 05-flush-to-persistent: the client writes its greeting into the
// server's memory, flushes it with rpma_flush of the type the server's
// peer configuration allows, then translates its own copy.

import (
	"context"
	"fmt"
	"io"

	"github.com/purerdma/purerdma/rpma"
)

// flushID is FLUSH_ID.
const flushID = 0xF01D

func flushServer(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		return usageErr(stderr, "05-flush-to-persistent", "server", "<server_address> <port> [<pmem-path>] [direct-pmem-write]")
	}
	// On DRAM the server offers only the visibility flush and its peer
	// config keeps direct write to PMem off ([direct-pmem-write] needs a
	// <pmem-path>, which this port ignores).
	return helloServer(ctx, args, rpma.UsageWriteDst|rpma.UsageFlushTypeVisibility, &rpma.PeerConfig{}, stdout, stderr)
}

func flushClient(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		return usageErr(stderr, "05-flush-to-persistent", "client", "<server_address> <port> [<pmem-path> [<pmem-offset>]]")
	}
	return runHelloClient(ctx, args, stdout, stderr, func(ctx context.Context, h *helloClient, p *peer) error {
		pcfg, err := h.data.peerConfig()
		if err != nil {
			return err
		}
		h.conn.ApplyRemotePeerConfig(pcfg)
		if err := h.remote(); err != nil {
			return err
		}
		if err := h.write(); err != nil {
			return err
		}
		typ := rpma.FlushVisibility
		if pcfg.DirectWriteToPMem {
			fmt.Fprintf(h.stdout, "RPMA_FLUSH_TYPE_PERSISTENT is supported\n")
			typ = rpma.FlushPersistent
		} else {
			fmt.Fprintf(h.stdout, "RPMA_FLUSH_TYPE_PERSISTENT is NOT supported, RPMA_FLUSH_TYPE_VISIBILITY is used instead\n")
		}
		if err := h.conn.Flush(h.dst, h.dstOff, helloStrSize, typ, rpma.Op{Flags: rpma.CompletionAlways, Context: flushID}); err != nil {
			return err
		}
		return flushDone(ctx, h.conn, h.stderr)
	})
}
