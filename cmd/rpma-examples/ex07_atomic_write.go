package main

// 07-atomic-write: the client appends words to the server's log, each
// followed by an atomic write of the log's new used size, flushing both.

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"

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
	return serveRegion(ctx, args, log, rpma.UsageWriteDst|rpma.UsageReadSrc|rpma.UsageFlushTypeVisibility, logUsedOffset, nil, stderr, func(conn *rpma.Conn, err error) int {
		if err == nil {
			err = waitForCloseAndDisconnect(ctx, conn, stderr)
		}
		if err != nil {
			return -2
		}
		printLog(stdout, log)
		return 0
	})
}

// printLog prints the words of the log, one a line.
func printLog(stdout io.Writer, log []byte) {
	used := min(binary.NativeEndian.Uint64(log[logUsedOffset:]), logSize)
	out := make([]byte, 0, used)
	for _, c := range log[logDataOffset:used] {
		if c == 0 {
			c = '\n'
		}
		out = append(out, c)
	}
	stdout.Write(out)
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
	var u undo
	defer u.run()
	buf, err := u.alloc(kilobyte)
	if err != nil {
		return err
	}
	p, err := u.peer(ctx, args, rpma.ContextRemote)
	if err != nil {
		return err
	}
	conn, err := u.connect(ctx, p, nil, nil, stderr)
	if err != nil {
		return err
	}
	conn.ApplyRemotePeerConfig(rpma.PeerConfig{DirectWriteToPMem: true})
	local, err := u.register(p, buf.b, rpma.UsageWriteSrc|rpma.UsageReadDst)
	if err != nil {
		return err
	}
	data, err := decodeCommonData(conn.PrivateData())
	if err != nil {
		return err
	}
	usedOff := int(data.DataOffset)
	remote, err := data.remoteMR()
	if err != nil {
		return err
	}
	if err := conn.Read(local, 0, remote, usedOff, 8, rpma.Op{Flags: rpma.CompletionAlways}); err != nil {
		return err
	}
	if _, err := statusDone(ctx, conn, "rpma_read()", stderr); err != nil {
		return err
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
		if err := conn.Write(remote, int(used), local, 0, size, rpma.Op{Flags: rpma.CompletionOnError}); err != nil {
			return err
		}
		if err := conn.Flush(remote, int(used), size, typ, rpma.Op{Flags: rpma.CompletionOnError}); err != nil {
			return err
		}
		used += uint64(size)
		var v [8]byte
		binary.NativeEndian.PutUint64(v[:], used)
		if err := conn.AtomicWrite(remote, usedOff, v, rpma.Op{Flags: rpma.CompletionOnError}); err != nil {
			return err
		}
		if err := conn.Flush(remote, usedOff, 8, typ, rpma.Op{Flags: rpma.CompletionAlways, Context: flushID}); err != nil {
			return err
		}
		if err := flushDone(ctx, conn, stderr); err != nil {
			return err
		}
	}
	return nil
}
