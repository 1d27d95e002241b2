package verbs

import "github.com/purerdma/purerdma/internal/ucmd"

// PD is a protection domain.
type PD struct {
	Ctx    *Context
	Handle uint32
	Life
}

// Do runs a command for an object in the PD, unless the PD or its
// context is closed. The PD stays locked during the command, so that it
// cannot be destroyed half-way.
func (pd *PD) Do(cmd *ucmd.Cmd) error { return pd.Life.Do(pd.Ctx, cmd) }
