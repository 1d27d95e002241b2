// Package verbs holds the state that the public packages uverbs, cq and mr
// share for one opened device: the command file, the driver, and the
// objects alive on it. uverbs owns the public types; cq and mr reach the
// state behind them through Core, so that uverbs need not export its
// plumbing and cq and mr can still import uverbs without a cycle.
package verbs
