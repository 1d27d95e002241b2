package main

import (
	"bufio"
	"fmt"
	"strings"
)

// kind is what a row measures.
type kind int

const (
	kSizeof kind = iota
	kOffsetof
	kAlignof
	kConst
	kString
)

// row is one number (or string) of the ABI: how C computes it, how Go
// names it, and where it comes from.
type row struct {
	kind kind
	line int // in abi.spec, for messages

	test    string // the group: TestNAMELayout, TestNAMEConstants
	section string // "rdma/x.h" or "kernel FILE KIND NAME"
	kernel  bool   // from a kernel-internal block, not a uapi header
	varies  bool   // a kernel-internal value that kernels number differently

	c    []string // C expressions, alternatives in order
	goX  string   // Go expression, as the test evaluates it
	name string   // the label in the Go table

	// For offsetof, the layout the field belongs to (its sizeof row).
	layout *row
	// For sizeof, the C type offsetof takes and the Go type.
	ctype, gotype string
}

// key names a row the same way in the spec and in the generated tables.
func (r *row) key() string {
	switch r.kind {
	case kSizeof:
		return "sizeof(" + r.name + ")"
	case kOffsetof:
		return "offsetof(" + r.layout.name + ", " + r.name + ")"
	case kAlignof:
		return "_Alignof(" + r.name + ")"
	case kString:
		return "string " + r.name
	}
	return r.name
}

// block is a kernel-internal enum, struct or union copied from a kernel
// source tree into the probe.
type block struct {
	file, kind, name string
}

func (b block) String() string { return b.file + " " + b.kind + " " + b.name }

type spec struct {
	rows    []*row
	uapi    []string // rdma/x.h, in order of first mention
	blocks  []block  // in order of first mention
	kernels int      // rows from kernel-internal blocks
}

// parseSpec reads abi.spec (its grammar is at its top).
func parseSpec(text string) (*spec, error) {
	s := &spec{}
	var test, section string
	var kernel bool
	var layout *row
	seenU := map[string]bool{}
	seenB := map[block]bool{}
	keys := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fail := func(format string, a ...any) error {
			return fmt.Errorf("abi.spec:%d: %s", n, fmt.Sprintf(format, a...))
		}
		var r *row
		if strings.HasPrefix(line, "\t") {
			if layout == nil {
				return nil, fail("field outside a layout")
			}
			c, g, ok := strings.Cut(strings.TrimSpace(line), " = ")
			if !ok {
				return nil, fail("want MEMBER = GoField")
			}
			goX := "unsafe.Offsetof(" + layout.gotype + "{}." + g + ")"
			if strings.Contains(g, "(") {
				goX = g // where Go has no field, such as a C flexible array
			}
			r = &row{kind: kOffsetof, name: c, layout: layout,
				c:   []string{"offsetof(" + layout.ctype + ", " + c + ")"},
				goX: goX}
		} else {
			varies := false
			if l, ok := strings.CutPrefix(line, "varies "); ok {
				line, varies = l, true
			}
			verb, rest, _ := strings.Cut(line, " ")
			if varies && verb != "const" {
				return nil, fail("only a const varies")
			}
			if verb != "layout" {
				layout = nil
			}
			switch verb {
			case "test":
				test, section = rest, ""
				continue
			case "uapi":
				section, kernel = rest, false
				if !seenU[rest] {
					seenU[rest] = true
					s.uapi = append(s.uapi, rest)
				}
				continue
			case "kernel":
				f := strings.Fields(rest)
				if len(f) != 3 || (f[1] != "enum" && f[1] != "struct" && f[1] != "union") {
					return nil, fail("want kernel FILE enum|struct|union NAME")
				}
				b := block{f[0], f[1], f[2]}
				section, kernel = "kernel "+rest, true
				if !seenB[b] {
					seenB[b] = true
					s.blocks = append(s.blocks, b)
				}
				continue
			case "layout", "align":
				ct, g, ok := strings.Cut(rest, " = ")
				if !ok {
					return nil, fail("want %s CTYPE = GoType", verb)
				}
				name, sizeof, ctype := ct, "sizeof("+ct+")", ct
				if base, member, ok := strings.Cut(ct, " member "); ok {
					// The type of a member (a union arm): C has no name
					// for it, so typeof stands in.
					e := "((" + base + " *)0)->" + member
					name, sizeof, ctype = base+", member "+member, "sizeof("+e+")", "__typeof__("+e+")"
				}
				if verb == "align" {
					r = &row{kind: kAlignof, name: name, c: []string{"_Alignof(" + ctype + ")"},
						goX: "unsafe.Alignof(" + g + "{})"}
				} else {
					r = &row{kind: kSizeof, name: name, c: []string{sizeof},
						goX: "unsafe.Sizeof(" + g + "{})", ctype: ctype, gotype: g}
					layout = r
				}
			case "const":
				c, g, ok := strings.Cut(rest, " = ")
				if !ok {
					g = c
				}
				r = &row{kind: kConst, name: g, goX: g, c: strings.Split(c, " or "), varies: varies}
			case "string":
				r = &row{kind: kString, name: rest, goX: rest, c: []string{rest}}
			default:
				return nil, fail("unknown %q", verb)
			}
		}
		if test == "" || section == "" {
			return nil, fail("row before test and uapi/kernel")
		}
		r.line, r.test, r.section, r.kernel = n, test, section, kernel
		if prev, dup := keys[r.key()]; dup {
			return nil, fail("%s again (line %d)", r.key(), prev)
		}
		keys[r.key()] = n
		if kernel {
			s.kernels++
		}
		s.rows = append(s.rows, r)
	}
	return s, sc.Err()
}
