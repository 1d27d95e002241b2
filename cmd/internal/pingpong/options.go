package pingpong

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/purerdma/purerdma/uverbs"
)

// Options are the command line of the three tools. Each tool's option
// table says which of them it takes; the others keep their defaults.
type Options struct {
	Port     int        // -p: TCP port
	IBDev    string     // -d: device name, "" for the first one
	IBPort   int        // -i
	Size     int        // -s: message size
	MTU      uverbs.MTU // -m (rc, srq)
	NumQP    int        // -q (srq)
	RxDepth  int        // -r
	Iters    int        // -n
	SL       int        // -l
	Events   bool       // -e
	GIDIdx   int        // -g, -1 when not given
	Validate bool       // -c (rc)
	Server   string     // the positional argument; "" makes a server
}

// Opt is one entry of a tool's getopt_long table.
type Opt struct {
	Short byte
	Long  string
	Arg   bool
}

// Arg is an option that takes an argument.
func Arg(short byte, long string) Opt { return Opt{short, long, true} }

// Flag is an option without an argument.
func Flag(short byte, long string) Opt { return Opt{short, long, false} }

// Tool is one pingpong program's command line: what differs between the
// three C tools' getopt_long tables, defaults and usage texts.
type Tool struct {
	Name     string // the program name, before messages and in the usage text
	Opts     []Opt
	Defaults Options
	// Usage is the usage text, which names the program as %[1]s.
	Usage string
	// Set applies a letter of Opts that the common ones (p, d, i, s, m,
	// r, n, l, e, g, c) are not; nil when the table has no other.
	Set func(o *Options, c byte, val string) error
}

// UsageError is a command line that the C tools answer with their usage
// text. Msg, when set, goes to stderr first (as getopt's complaints do).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Main is the whole program after main: it parses args, prints what the C
// tool prints for a bad command line, runs body and returns the exit
// status, 0 or 1 on any failure as the C tools. ctx ends the TCP exchange
// and the waits for completions.
func (t *Tool) Main(ctx context.Context, args []string, stdout, stderr io.Writer,
	body func(ctx context.Context, o *Options, stdout io.Writer) error) int {
	o, err := t.Parse(args)
	if err != nil {
		var ue *UsageError
		if errors.As(err, &ue) {
			if ue.Msg != "" {
				fmt.Fprintf(stderr, "%s: %s\n", t.Name, ue.Msg)
			}
			fmt.Fprintf(stdout, t.Usage, t.Name)
		} else {
			fmt.Fprintf(stderr, "%s: %v\n", t.Name, err)
		}
		return 1
	}
	if err := body(ctx, &o, stdout); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// Parse parses args as getopt_long does with the tool's table: short
// options may be grouped and take their argument attached or as the next
// word, long options take "=value" or the next word, and options may
// follow the positional argument.
func (t *Tool) Parse(args []string) (Options, error) {
	o := t.Defaults
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			pos = append(pos, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			found := t.find(func(op *Opt) bool { return op.Long == name })
			if found == nil {
				return o, &UsageError{fmt.Sprintf("unrecognized option '--%s'", name)}
			}
			if found.Arg && !hasVal {
				if i+1 >= len(args) {
					return o, &UsageError{fmt.Sprintf("option '--%s' requires an argument", name)}
				}
				i++
				val = args[i]
			} else if !found.Arg && hasVal {
				return o, &UsageError{fmt.Sprintf("option '--%s' doesn't allow an argument", name)}
			}
			if err := t.set(&o, found.Short, val); err != nil {
				return o, err
			}
		case len(a) > 1 && a[0] == '-':
			for k := 1; k < len(a); k++ {
				c := a[k]
				found := t.find(func(op *Opt) bool { return op.Short == c })
				if found == nil {
					return o, &UsageError{fmt.Sprintf("invalid option -- '%c'", c)}
				}
				val := ""
				if found.Arg {
					if k+1 < len(a) {
						val = a[k+1:]
					} else if i+1 < len(args) {
						i++
						val = args[i]
					} else {
						return o, &UsageError{fmt.Sprintf("option requires an argument -- '%c'", c)}
					}
					k = len(a)
				}
				if err := t.set(&o, c, val); err != nil {
					return o, err
				}
			}
		default:
			pos = append(pos, a)
		}
	}
	switch len(pos) {
	case 0:
	case 1:
		o.Server = pos[0]
	default:
		return o, &UsageError{}
	}
	return o, nil
}

// find returns the last entry of the table that match accepts, or nil.
func (t *Tool) find(match func(*Opt) bool) *Opt {
	var found *Opt
	for j := range t.Opts {
		if match(&t.Opts[j]) {
			found = &t.Opts[j]
		}
	}
	return found
}

// Num parses the argument val of option c as strtol with base 0 does
// (decimal, 0x hex or 0 octal), in [lo, hi].
func Num(c byte, val string, lo, hi int64) (int, error) {
	n, err := strconv.ParseInt(val, 0, 64)
	if err != nil || n < lo || n > hi {
		return 0, &UsageError{fmt.Sprintf("invalid argument %q for -%c", val, c)}
	}
	return int(n), nil
}

// set applies option c, a letter of the tool's table, with its argument
// val.
func (t *Tool) set(o *Options, c byte, val string) error {
	num := func(lo, hi int64) (int, error) { return Num(c, val, lo, hi) }
	var err error
	switch c {
	case 'p':
		o.Port, err = num(0, 65535)
	case 'd':
		o.IBDev = val
	case 'i':
		o.IBPort, err = num(1, 255)
	case 's':
		o.Size, err = num(1, 1<<31-1)
	case 'm':
		var n int
		if n, err = num(0, 1<<31-1); err == nil {
			if o.MTU = MTUToEnum(n); o.MTU == 0 {
				err = &UsageError{fmt.Sprintf("invalid MTU %q: 256, 512, 1024, 2048 or 4096", val)}
			}
		}
	case 'r':
		o.RxDepth, err = num(1, 1<<31-1)
	case 'n':
		o.Iters, err = num(1, 1<<31-1)
	case 'l':
		o.SL, err = num(0, 15)
	case 'e':
		o.Events = true
	case 'g':
		o.GIDIdx, err = num(-1<<31, 1<<31-1)
	case 'c':
		o.Validate = true
	default:
		if t.Set == nil {
			return fmt.Errorf("option -%c has no handler", c)
		}
		return t.Set(o, c, val)
	}
	return err
}

// MTUToEnum is pp_mtu_to_enum: 0 for a size that is not an IB MTU.
func MTUToEnum(n int) uverbs.MTU {
	switch n {
	case 256:
		return uverbs.MTU256
	case 512:
		return uverbs.MTU512
	case 1024:
		return uverbs.MTU1024
	case 2048:
		return uverbs.MTU2048
	case 4096:
		return uverbs.MTU4096
	}
	return 0
}
