package uverbs_test

import (
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
	"github.com/purerdma/purerdma/uverbs"
)

// TestNilReceivers calls every method of every object type on a nil
// pointer: each returns ErrClosed, none panics.
func TestNilReceivers(t *testing.T) {
	n := 0
	for _, p := range []any{(*uverbs.Context)(nil), (*uverbs.PD)(nil), (*uverbs.QP)(nil), (*uverbs.SRQ)(nil), (*uverbs.AH)(nil), (*uverbs.MW)(nil)} {
		n += testenv.CallMethods(t, p, uverbs.ErrClosed)
	}
	t.Logf("%d methods called on nil", n)
}

// TestBadInputHost passes bad arguments to the functions that check them
// before any system call.
func TestBadInputHost(t *testing.T) {
	open := func(d uverbs.Device) func() error {
		return func() error {
			_, err := uverbs.Open(d)
			return err
		}
	}
	guid := func(s string) func() error {
		return func() error {
			_, err := uverbs.ParseGUID(s)
			return err
		}
	}
	n := testenv.RunBad(t, nil, []testenv.BadCase{
		testenv.Bad("Open: zero Device", uverbs.ErrNoDevice, open(uverbs.Device{})),
		testenv.Bad("Open: node outside /dev/infiniband", uverbs.ErrNoDevice, open(uverbs.Device{Name: "x", Char: "../null"})),
		testenv.Bad("Open: absolute node", uverbs.ErrNoDevice, open(uverbs.Device{Name: "x", Char: "/dev/null"})),
		testenv.Bad("Open: node in a subdirectory", uverbs.ErrNoDevice, open(uverbs.Device{Name: "x", Char: "a/uverbs0"})),
		testenv.Bad("ParseGUID: empty", uverbs.ErrInvalid, guid("")),
		testenv.Bad("ParseGUID: three groups", uverbs.ErrInvalid, guid("0001:0002:0003")),
		testenv.Bad("ParseGUID: long group", uverbs.ErrInvalid, guid("00001:0002:0003:0004")),
		testenv.Bad("ParseGUID: not hex", uverbs.ErrInvalid, guid("000g:0002:0003:0004")),
	})
	t.Logf("%d bad inputs tried", n)
}
