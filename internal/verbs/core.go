package verbs

// Core returns the state behind a public uverbs object: a *Context for a
// *uverbs.Context, a *PD for a *uverbs.PD, nil for anything else. Package
// uverbs sets it when it initializes.
var Core func(public any) any

// ContextOf returns the context behind a *uverbs.Context.
func ContextOf(public any) *Context {
	c, _ := Core(public).(*Context)
	return c
}

// PDOf returns the protection domain behind a *uverbs.PD.
func PDOf(public any) *PD {
	pd, _ := Core(public).(*PD)
	return pd
}
