// Package verbs holds the state that the public packages uverbs, cq and mr
// share for one opened device: the command file, the driver, and the
// objects alive on it. uverbs owns the public types; cq and mr reach the
// state behind them through the typed accessors ContextOf and PDOf (see
// Link), so that uverbs need not export its plumbing and cq and mr can
// still import uverbs without a cycle.
//
// It also holds the error vocabulary every public package shares (the
// sentinels uverbs exports) and Public, the one place where provider and
// kernel errors are mapped onto them.
package verbs
