package main

// 07-atomic-write: the client appends words to the server's log, each
// followed by an atomic write of the log's new used size, flushing both.

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/rpma"
)

// struct log {char signature[8]; uint64_t used; char data[1024];}
const (
	logUsedOffset = 8
	logDataOffset = 16
	logSize       = logDataOffset + 1024
	maxWordLength = kilobyte - 1
)

func atomicServer(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		return usageErr(stderr, "07-atomic-write", "server", "<server_address> <port> [<pmem-path>]")
	}
	pmemArg(args, stderr)
	buf, err := alloc(logSize)
	if err != nil {
		return -1
	}
	defer buf.free()
	log := buf.b
	binary.NativeEndian.PutUint64(log[logUsedOffset:], logDataOffset)
	p, err := newPeer(ctx, args[0], args[1], rpma.ContextLocal)
	if err != nil {
		return code(err)
	}
	defer p.close()
	ep, err := p.listen(ctx)
	if err != nil {
		return code(err)
	}
	defer ep.Shutdown()
	m, err := p.RegisterMR(log, rpma.UsageWriteDst|rpma.UsageReadSrc|rpma.UsageFlushTypeVisibility)
	if err != nil {
		return code(err)
	}
	defer m.Close()
	data, err := newCommonData(logUsedOffset, m, nil)
	if err != nil {
		return -1
	}
	conn, err := serverAccept(ctx, ep, nil, data.encode(), stderr)
	if err != nil {
		return -2
	}
	if err := waitForCloseAndDisconnect(ctx, conn, stderr); err != nil {
		return -2
	}
	used := min(binary.NativeEndian.Uint64(log[logUsedOffset:]), logSize)
	out := make([]byte, 0, used)
	for _, c := range log[logDataOffset:used] {
		if c == 0 {
			c = '\n'
		}
		out = append(out, c)
	}
	stdout.Write(out)
	return 0
}

func atomicClient(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 3 {
		return usageErr(stderr, "07-atomic-write", "client", "<server_address> <port> <word1> [<word2>] [..]")
	}
	if err := atomicClientRun(ctx, args, stdout, stderr); err != nil {
		return -2
	}
	return 0
}

func atomicClientRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	buf, err := alloc(kilobyte)
	if err != nil {
		return err
	}
	defer buf.free()
	p, err := newPeer(ctx, args[0], args[1], rpma.ContextRemote)
	if err != nil {
		return err
	}
	defer p.close()
	conn, err := p.clientConnect(ctx, nil, nil, stderr)
	if err != nil {
		return err
	}
	defer disconnectAndWaitForClose(ctx, conn, stderr)
	conn.ApplyRemotePeerConfig(rpma.PeerConfig{DirectWriteToPMem: true})
	local, err := p.RegisterMR(buf.b, rpma.UsageWriteSrc|rpma.UsageReadDst)
	if err != nil {
		return err
	}
	defer local.Close()
	data, err := decodeCommonData(conn.PrivateData())
	if err != nil {
		return err
	}
	usedOff := int(data.DataOffset)
	remote, err := data.remoteMR()
	if err != nil {
		return err
	}
	if err := conn.Read(local, 0, remote, usedOff, 8, rpma.CompletionAlways, 0); err != nil {
		return err
	}
	wc, err := getOneWC(ctx, conn.CQ())
	if err != nil {
		return err
	}
	if wc.Status != cq.Success {
		fmt.Fprintf(stderr, "rpma_read() failed: %s\n", wc.Status)
		return errUnexpected
	}
	used := binary.NativeEndian.Uint64(buf.b)
	fmt.Fprintf(stdout, "used value: %d\n", used)
	if remote.Len() <= used {
		fmt.Fprintf(stderr, "Log size exhausted.\n")
		return errUnexpected
	}
	typ := rpma.FlushVisibility
	if remote.FlushType()&rpma.UsageFlushTypePersistent != 0 {
		typ = rpma.FlushPersistent
	}
	for _, arg := range args[2:] {
		word := buf.b[:maxWordLength+1]
		clear(word)
		copy(word[:maxWordLength], arg)
		size := len(cstr(word)) + 1
		if err := conn.Write(remote, int(used), local, 0, size, rpma.CompletionOnError, 0); err != nil {
			return err
		}
		if err := conn.Flush(remote, int(used), size, typ, rpma.CompletionOnError, 0); err != nil {
			return err
		}
		used += uint64(size)
		var v [8]byte
		binary.NativeEndian.PutUint64(v[:], used)
		if err := conn.AtomicWrite(remote, usedOff, v, rpma.CompletionOnError, 0); err != nil {
			return err
		}
		if err := conn.Flush(remote, usedOff, 8, typ, rpma.CompletionAlways, flushID); err != nil {
			return err
		}
		wc, err := getOneWC(ctx, conn.CQ())
		if err != nil {
			return err
		}
		if wc.ID != flushID {
			fmt.Fprintf(stderr, "unexpected wc.wr_id value (0x%X != 0x%X)\n", wc.ID, flushID)
			return errUnexpected
		}
		if wc.Status != cq.Success {
			fmt.Fprintf(stderr, "rpma_flush() failed: %s\n", wc.Status)
			return errUnexpected
		}
	}
	return nil
}
