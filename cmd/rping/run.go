package main

import (
	"context"
	"errors"
	"io"
	"syscall"

	"github.com/purerdma/purerdma/rdmacm"
)

// run is the whole program with args (without the program name); it
// returns rping's exit status.
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

// runContext is run that gives up when ctx ends; a persistent server (-P)
// runs until then.
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	out := &output{stdout: stdout, stderr: stderr, fatalDone: make(chan struct{})}
	// Options print their debug lines only once -d was seen.
	o, ret := parseArgs(ctx, args, stdout, stderr)
	if ret != 0 {
		return ret & 0xff
	}
	out.debug = o.debug > 0
	ret = rping(ctx, &o, out)
	if out.fatal.Load() {
		return int(out.fatalCode.Load())
	}
	return ret & 0xff
}

// rping is rping's main after option parsing.
func rping(ctx context.Context, o *options, out *output) int {
	ch, err := rdmacm.NewEventChannel()
	if err != nil {
		if errors.Is(err, syscall.ENODEV) || errors.Is(err, syscall.ENOENT) {
			// librdmacm reports a missing rdma_cm or device as ENODEV.
			out.eprintf("No RDMA devices were detected\n")
			return int(syscall.ENODEV)
		} else {
			out.perror("failed to create RDMA CM event channel", err)
		}
		return errnoOf(err)
	}
	defer ch.Close()
	cb := newControl(o, out)
	cb.ch = ch
	if cb.cmID, err = ch.CreateID(rdmacm.TCP); err != nil {
		out.perror("rdma_create_id", err)
		return -1
	}
	out.debugf("created cm_id %p\n", cb.cmID)
	d := &dispatcher{cbs: map[*rdmacm.ID]*control{cb.cmID: cb}}

	cmCtx, cmCancel := context.WithCancel(ctx)
	cmDone := make(chan struct{})
	go func() {
		defer close(cmDone)
		cmThread(cmCtx, ch, d, out)
	}()

	var ret int
	switch {
	case cb.server && o.persistent:
		ret = cb.runPersistentServer(ctx, d)
	case cb.server:
		ret = cb.runServer(ctx)
	default:
		ret = cb.runClient(ctx)
	}

	out.debugf("destroy cm_id %p\n", cb.cmID)
	cb.cmID.Close()
	cmCancel()
	<-cmDone
	return ret
}
