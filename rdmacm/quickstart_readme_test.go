package rdmacm_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purerdma/purerdma/internal/testenv"
)

// TestQuickStartREADME checks that the quick start in README.md is,
// byte for byte, the source of a function the example and the VM test
// run, so that the README shows code that compiles and was run. It needs
// the source tree, which the VM does not have.
func TestQuickStartREADME(t *testing.T) {
	if testenv.InVM() {
		t.Skip("the VM has the test binary, not the source tree")
	}
	tests := []struct {
		readme, file, fn string
	}{
		{"../README.md", "example_quickstart_test.go", "writeTo"},
	}
	for _, tt := range tests {
		t.Run(tt.fn, func(t *testing.T) {
			readme, err := os.ReadFile(tt.readme)
			if err != nil {
				t.Fatal(err)
			}
			want := funcSource(t, tt.file, tt.fn)
			got, ok := goBlock(string(readme), "func "+tt.fn+"(")
			if !ok {
				t.Fatalf("%s has no go code block with func %s; want it to hold %s's:\n%s", tt.readme, tt.fn, tt.file, want)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s's quick start differs from %s in %s (-%s +README):\n%s", tt.readme, tt.fn, tt.file, tt.file, diff)
			}
		})
	}
}

// funcSource returns the source of the function called name in file,
// from its doc comment to its closing brace, with a final newline.
func funcSource(t *testing.T, file, name string) string {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || fd.Name.Name != name {
			continue
		}
		start := fd.Pos()
		if fd.Doc != nil {
			start = fd.Doc.Pos()
		}
		return string(src[fset.Position(start).Offset:fset.Position(fd.End()).Offset]) + "\n"
	}
	t.Fatalf("%s has no func %s", file, name)
	return ""
}

// goBlock returns the body of the first ```go fenced block of md that
// contains marker.
func goBlock(md, marker string) (string, bool) {
	for rest := md; ; {
		_, after, ok := strings.Cut(rest, "\n```go\n")
		if !ok {
			return "", false
		}
		body, next, ok := strings.Cut(after, "\n```\n")
		if !ok {
			return "", false
		}
		if strings.Contains(body, marker) {
			return body + "\n", true
		}
		rest = "\n" + next
	}
}
