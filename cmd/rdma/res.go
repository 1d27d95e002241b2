package main

import (
	"fmt"

	"github.com/purerdma/purerdma/internal/rdmanl"
)

func (t *tool) res(args []string) error {
	return dispatch("resource command", args, t.resShow,
		command{"show", t.resShow},
		command{"list", t.resShow},
		command{"help", t.help},
	)
}

// resShow prints the resource summary of every device, or of the one
// named in args, as iproute2's `rdma resource show [DEV]`:
//
//	0: rxe0: pd 1 cq 1 qp 1 cm_id 0 mr 0 ctx 0 srq 0
func (t *tool) resShow(args []string) error {
	var name string
	if len(args) > 0 {
		name, args = args[0], args[1:]
	}
	if err := noMore(args); err != nil {
		return err
	}
	return t.withConn(func(c conn) error {
		sums, err := c.ResourceSummaries()
		if err != nil {
			return err
		}
		found := false
		for _, s := range sums {
			if name != "" && s.DevName != name {
				continue
			}
			found = true
			if _, err := fmt.Fprintln(t.w, s); err != nil {
				return err
			}
		}
		if name != "" && !found {
			return fmt.Errorf("%s: %w", name, rdmanl.ErrNotFound)
		}
		return nil
	})
}
