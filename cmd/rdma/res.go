package main

import "github.com/purerdma/purerdma/internal/rdmanl"

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
	return showNamed(t, args, func(c conn) ([]rdmanl.ResourceSummary, error) { return c.ResourceSummaries() },
		func(s rdmanl.ResourceSummary) string { return s.DevName }, rdmanl.ResourceSummary.String)
}
