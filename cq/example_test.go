package cq_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/purerdma/purerdma/cq"
	"github.com/purerdma/purerdma/uverbs"
)

// Sleep on a completion channel instead of spinning: arm, drain, wait.
// The wait parks the goroutine on Go's poller and gives up after a
// second without completions.
func ExampleChannel_Wait() {
	ctx, err := uverbs.OpenName("rxe0")
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	ch, err := cq.NewChannel(ctx)
	if err != nil {
		log.Fatal(err)
	}
	q, err := cq.New(ctx, 256, &cq.Options{Channel: ch})
	if err != nil {
		log.Fatal(err)
	}
	wc := make([]cq.WC, 16)
	for {
		if err := q.ReqNotify(false); err != nil {
			log.Fatal(err)
		}
		n, err := q.Poll(wc)
		if err != nil {
			log.Fatal(err)
		}
		for _, w := range wc[:n] {
			if err := w.Err(); err != nil {
				log.Print(err)
			}
		}
		if n > 0 {
			continue
		}
		wctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err = ch.Wait(wctx)
		cancel()
		if err != nil {
			log.Print(err)
			return
		}
	}
}

// Poll a CQ: create it, then take completions in batches, each one
// failed or done. Poll neither blocks nor allocates, so a loop like this
// one is the data path's fast way to wait; ExampleChannel_Wait sleeps
// instead.
func ExampleCQ_Poll() {
	ctx, err := uverbs.OpenName("rxe0")
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	q, err := cq.New(ctx, 256, nil) // give it to QPs as QPInit.SendCQ and RecvCQ
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	// ... create QPs on q and post signaled work requests ...
	posted := 1
	wc := make([]cq.WC, 16) // reused: polling allocates nothing
	for done := 0; done < posted; {
		n, err := q.Poll(wc)
		if err != nil {
			log.Fatal(err) // the CQ is closed
		}
		for _, w := range wc[:n] {
			if err := w.Err(); err != nil {
				log.Printf("work request %d: %v", w.ID, err) // a *cq.CompletionError
				continue
			}
			fmt.Printf("work request %d: %s of %d bytes\n", w.ID, w.Opcode, w.ByteLen)
		}
		done += n
	}
}

// Take what a CQ holds with a range loop, as ibv_start_poll, ibv_next_poll
// and ibv_end_poll do in C: the slots go back to the device once, when the
// loop ends.
func ExampleCQ_Completions() {
	var q *cq.CQ
	for wc, err := range q.Completions(64) {
		if err != nil {
			log.Fatal(err)
		}
		if wc.Status != cq.Success {
			log.Printf("work request %d: %s", wc.ID, wc.Status)
		}
	}
}

// One goroutine owns the CQ's polling: its Poller polls and arms with no
// lock, and the CQ's Close from any goroutine still waits for it to
// leave. The loop is ExampleChannel_Wait's.
func ExamplePoller() {
	ctx, err := uverbs.OpenName("rxe0")
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	ch, err := cq.NewChannel(ctx)
	if err != nil {
		log.Fatal(err)
	}
	q, err := cq.New(ctx, 256, &cq.Options{Channel: ch})
	if err != nil {
		log.Fatal(err)
	}
	p, err := q.Own()
	if err != nil {
		log.Fatal(err)
	}
	defer p.Release()
	wc := make([]cq.WC, 16)
	for {
		if err := p.ReqNotify(false); err != nil {
			log.Fatal(err)
		}
		n, err := p.Poll(wc)
		if err != nil {
			log.Fatal(err)
		}
		if n > 0 {
			fmt.Println(n, "completions")
			continue
		}
		wctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err = ch.Wait(wctx)
		cancel()
		if err != nil {
			return
		}
	}
}
