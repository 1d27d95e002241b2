package cq

import (
	"unsafe"

	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/provider/mlx5"
	"github.com/purerdma/purerdma/internal/provider/rxe"
	"github.com/purerdma/purerdma/internal/provider/siw"
)

// driverWCs is wc as the drivers' completions: WC and provider.WC have
// one layout, field for field (TestWCLayout), so a driver's Poll writes
// into the caller's slice with no copy between them. (Package cq's other
// unsafe code is clearFailedN's.) The slice header is reinterpreted, not rebuilt:
// unsafe.Slice would check the length's product for overflow on every
// poll (eight instructions), which a valid slice cannot have.
func driverWCs(wc []WC) []provider.WC {
	return *(*[]provider.WC)(unsafe.Pointer(&wc))
}

// drivers is a CQ's driver by its concrete type, when it is one of this
// module's (at most one field is set): Poll tests a field for nil where a
// type assertion on the provider.CQ would load and compare its itab. The
// drivers' Poll, reached so, does not keep the slice, which stays where
// the caller put it (an interface call would make it escape to the heap,
// and the caller's array with it). A CQ's ring is set once, when it is
// created (Resize changes the driver in place), so drivers never goes
// stale; closeRing clears it, under the lock, when the CQ is destroyed.
type drivers struct {
	mlx *mlx5.CQ
	arm *mlx5.CQ // mlx, when it has a CQ doorbell (ArmUAR) for ReqNotify to ring
	rx  *rxe.CQ
	sw  *siw.CQ
}

// driversOf returns ring's concrete driver.
func driversOf(ring provider.CQ) drivers {
	switch r := ring.(type) {
	case *mlx5.CQ:
		d := drivers{mlx: r}
		if r.ArmUAR() != nil {
			d.arm = r
		}
		return d
	case *rxe.CQ:
		return drivers{rx: r}
	case *siw.CQ:
		return drivers{sw: r}
	}
	return drivers{}
}
