module github.com/purerdma/purerdma

go 1.26.0
