// Package fails is a test that fails on purpose: go test -exec rdmavm
// must fail with its message.
package fails

import (
	"testing"

	"github.com/purerdma/purerdma/uverbs"
	"github.com/purerdma/purerdma/uverbs/uverbstest"
)

func TestFails(t *testing.T) {
	d := uverbstest.Require(t, "rxe")
	dev, err := uverbs.OpenName(d.Name)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	t.Fatalf("deliberate failure after opening %s", d.Name)
}
