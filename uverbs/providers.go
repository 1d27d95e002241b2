package uverbs

// The providers purerdma runs the data path of. A new driver is a new
// package under internal/provider and one line here.
import (
	_ "github.com/purerdma/purerdma/internal/provider/rxe"
	_ "github.com/purerdma/purerdma/internal/provider/siw"
)
