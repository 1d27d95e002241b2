module github.com/purerdma/purerdma

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	golang.org/x/sys v0.49.0
)
