package cq_test

import (
	"context"
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
