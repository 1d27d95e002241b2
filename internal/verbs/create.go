package verbs

import (
	"github.com/purerdma/purerdma/internal/provider"
	"github.com/purerdma/purerdma/internal/ucmd"
)

// Finish is the second half of a create whose command succeeded, in the
// order package provider's contract sets: the caller has written the
// kernel's answer into the init value, and Finish builds the driver's
// object from the driver's response. If the driver cannot use what the
// kernel made, the kernel object is destroyed with destroy and only then
// does the driver release what its first half allocated (Abort): memory
// the device can touch outlives the kernel object. The only way a fresh,
// unused object's destroy fails is a context that is closing, whose file
// then destroys the object: Abort then waits for the file to close. The
// driver's error comes back mapped (Public).
//
// A failed command, the other way a create ends early, needs only the
// caller's Abort: there is no kernel object.
func Finish[T any](c *Context, p provider.Pending[T], resp []byte, destroy *ucmd.Cmd) (T, error) {
	v, err := p.Finish(resp)
	if err == nil {
		return v, nil
	}
	if c.Do(destroy) != nil {
		c.afterClose(p.Abort)
	} else {
		p.Abort()
	}
	return v, Public(err)
}
