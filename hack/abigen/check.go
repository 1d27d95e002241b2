package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
)

// readTables reads the checked-in generated files back: the C number (or
// string) of every row, by the key the spec gives it.
func readTables(dir string) (map[string]value, error) {
	tables := map[string]value{}
	fset := token.NewFileSet()
	for _, name := range []string{layoutFile, constFile} {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			return nil, err
		}
		var bad error
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 2 || bad != nil {
				return true
			}
			fn, _ := call.Fun.(*ast.Ident)
			list, _ := call.Args[1].(*ast.CompositeLit)
			if fn == nil || list == nil {
				return true
			}
			for _, e := range list.Elts {
				elt, ok := e.(*ast.CompositeLit)
				if !ok || len(elt.Elts) < 3 {
					bad = fmt.Errorf("%s: unexpected %T in %s", fset.Position(e.Pos()), e, fn.Name)
					return false
				}
				label, v := lit(elt.Elts[0]), lit(elt.Elts[2])
				switch fn.Name {
				case "checkLayouts":
					tables["sizeof("+label+")"] = num(v)
					if len(elt.Elts) == 4 {
						if fields, ok := elt.Elts[3].(*ast.CompositeLit); ok {
							for _, fe := range fields.Elts {
								fl := fe.(*ast.CompositeLit)
								tables["offsetof("+label+", "+lit(fl.Elts[0])+")"] = num(lit(fl.Elts[2]))
							}
						}
					}
				case "checkAligns":
					tables["_Alignof("+label+")"] = num(v)
				case "checkConstants":
					tables[label] = num(v)
				case "checkStrings":
					tables["string "+label] = value{s: v}
				}
			}
			return false
		})
		if bad != nil {
			return nil, bad
		}
	}
	return tables, nil
}

// lit is the value of a string or number literal, "" for anything else.
func lit(e ast.Expr) string {
	b, ok := e.(*ast.BasicLit)
	if !ok {
		return ""
	}
	if b.Kind == token.STRING {
		s, _ := strconv.Unquote(b.Value)
		return s
	}
	return b.Value
}

func num(s string) value {
	n, _ := strconv.ParseUint(s, 0, 64)
	return value{n: n}
}

// mismatch is a row whose number in these headers differs from the table.
type mismatch struct {
	r         *row
	got, want value
}

// compare checks the probe's values against the tables: every row of the
// spec must be in the tables (else they are stale), and every value found
// must equal its table's.
func compare(s *spec, res *probeResult, tables map[string]value) (bad, varied []mismatch, stale []string) {
	inSpec := map[string]bool{}
	for _, r := range s.rows {
		k := r.key()
		inSpec[k] = true
		want, ok := tables[k]
		if !ok {
			stale = append(stale, "not in the tables: "+k)
			continue
		}
		if got, ok := res.values[r]; ok && (got.n != want.n || got.s != want.s) {
			if r.varies {
				varied = append(varied, mismatch{r, got, want})
			} else {
				bad = append(bad, mismatch{r, got, want})
			}
		}
	}
	for k := range tables {
		if !inSpec[k] {
			stale = append(stale, "not in abi.spec: "+k)
		}
	}
	return bad, varied, stale
}
