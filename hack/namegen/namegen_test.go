package main

import (
	"bufio"
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// directive is one //go:generate line that runs namegen.
type directive struct {
	file string   // the Go file that holds it
	line int      // its line number
	args []string // namegen's arguments
}

// repoRoot returns the repository's top directory, two up from here.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at the repository's top: %v", err)
	}
	return root
}

// walkGo calls fn for every .go file of the repository under root,
// skipping hidden directories (.git, .cache), testdata and vendor.
func walkGo(t *testing.T, root string, fn func(path string)) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			n := d.Name()
			if path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") {
			fn(path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// directives finds every //go:generate line of the repository that runs
// hack/namegen with go run.
func directives(t *testing.T, root string) []directive {
	t.Helper()
	self := filepath.Join(root, "hack", "namegen")
	var ds []directive
	walkGo(t, root, func(path string) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			rest, ok := strings.CutPrefix(line, "//go:generate ")
			if !ok {
				continue
			}
			words, err := splitGenerate(rest)
			if err != nil {
				t.Errorf("%s:%d: %v", path, i+1, err)
				continue
			}
			if len(words) < 3 || words[0] != "go" || words[1] != "run" ||
				filepath.Join(filepath.Dir(path), words[2]) != self {
				continue
			}
			ds = append(ds, directive{file: path, line: i + 1, args: words[3:]})
		}
	})
	return ds
}

// splitGenerate splits a //go:generate line into words as go generate
// does: at spaces and tabs, with double-quoted words in Go syntax. go
// generate would expand $NAME too; namegen's lines have no use for it, so
// a $ is refused rather than left unexpanded.
func splitGenerate(line string) ([]string, error) {
	var words []string
	line = strings.TrimSpace(line)
	for line != "" {
		var word string
		if line[0] == '"' {
			end := -1
			for i := 1; i < len(line); i++ {
				if line[i] == '\\' {
					i++
				} else if line[i] == '"' {
					end = i
					break
				}
			}
			if end < 0 {
				return nil, strconv.ErrSyntax
			}
			w, err := strconv.Unquote(line[:end+1])
			if err != nil {
				return nil, err
			}
			word, line = w, line[end+1:]
			if line != "" && line[0] != ' ' && line[0] != '\t' {
				return nil, strconv.ErrSyntax
			}
		} else {
			i := strings.IndexAny(line, " \t")
			if i < 0 {
				i = len(line)
			}
			word, line = line[:i], line[i:]
		}
		if strings.Contains(word, "$") {
			return nil, strconv.ErrSyntax
		}
		words = append(words, word)
		line = strings.TrimLeft(line, " \t")
	}
	return words, nil
}

// TestGeneratedFilesCurrent runs every namegen //go:generate line of the
// repository into a temporary directory and compares what it writes with
// the checked-in file, and finds no namegen file that no line makes.
func TestGeneratedFilesCurrent(t *testing.T) {
	root := repoRoot(t)
	ds := directives(t, root)
	if len(ds) == 0 {
		t.Fatal("no //go:generate line runs hack/namegen")
	}
	made := map[string]bool{}
	for _, d := range ds {
		dir := filepath.Dir(d.file)
		rel, _ := filepath.Rel(root, d.file)
		out := t.TempDir()
		var stderr bytes.Buffer
		if err := run(append([]string{"-dir", dir, "-o", out}, d.args...), &stderr); err != nil {
			t.Errorf("%s:%d: namegen %s: %v\n%s", rel, d.line, strings.Join(d.args, " "), err, stderr.Bytes())
			continue
		}
		files, err := os.ReadDir(out)
		if err != nil || len(files) != 1 {
			t.Fatalf("%s:%d: namegen wrote %v, %v; want one file", rel, d.line, files, err)
		}
		name := files[0].Name()
		target := filepath.Join(dir, name)
		if made[target] {
			t.Errorf("%s:%d: a second line writes %s", rel, d.line, name)
		}
		made[target] = true
		want, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		have, err := os.ReadFile(target)
		if err != nil {
			t.Errorf("%s:%d: %v: run go generate ./%s", rel, d.line, err, filepath.Dir(rel))
			continue
		}
		if !bytes.Equal(have, want) {
			t.Errorf("%s:%d: %s is stale: run go generate ./%s\nit should read:\n%s", rel, d.line, name, filepath.Dir(rel), want)
		}
	}
	walkGo(t, root, func(path string) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		first, err := bufio.NewReader(f).ReadString('\n')
		if err != nil && err != io.EOF {
			t.Fatal(err)
		}
		if first == header && !made[path] {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s: generated by namegen, but no //go:generate line makes it: remove it", rel)
		}
	})
}

func TestSplitGenerate(t *testing.T) {
	words, err := splitGenerate(`go run ../hack/namegen -type T  -doc "String returns \"A\" or \"B\"." -flags`)
	want := []string{"go", "run", "../hack/namegen", "-type", "T", "-doc", `String returns "A" or "B".`, "-flags"}
	if err != nil || strings.Join(words, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("splitGenerate = %q, %v; want %q", words, err, want)
	}
	for _, bad := range []string{`-doc "open`, `-doc "a"b`, `-type $GOFILE`} {
		if words, err := splitGenerate(bad); err == nil {
			t.Errorf("splitGenerate(%q) = %q, want an error", bad, words)
		}
	}
}

// pkg writes a package of the given files into a temporary directory.
func pkg(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const testSrc = `package p

import "github.com/purerdma/purerdma/internal/abi"

// Kind is a test enum.
type Kind uint16

const (
	KindA Kind = abi.X_KIND_A
	KindB Kind = abi.X_KIND_B
	_     Kind = abi.X_KIND_IGNORED
)

const other = 3
`

func TestGenerate(t *testing.T) {
	dir := pkg(t, map[string]string{
		"p.go":              testSrc,
		"l.go":              "package p\n\nconst KindL Kind = 1 << 4 // X_KIND_L: a literal\n",
		"p_test.go":         "package p\n\nconst KindT Kind = 9\n",
		"zz_kind_string.go": header + "\npackage p\n\nconst KindZ Kind = 8\n",
	})
	for _, tt := range []struct {
		args []string
		want []string // lines the output must have
	}{
		{[]string{"-type", "Kind", "-trimprefix", "X_KIND_"}, []string{
			"// String returns the name of the C constant without its prefix X_KIND_.",
			"func (k Kind) String() string {",
			"\tcase KindA:\n\t\treturn \"A\"\n",
			"\tcase KindL:\n\t\treturn \"L\"\n",
			"\treturn fmt.Sprintf(\"Kind(%d)\", uint16(k))\n",
		}},
		{[]string{"-type", "Kind", "-unknown", "none", "-rename", "X_KIND_B=BEE", "-doc", "String names k."}, []string{
			"// String names k.\nfunc",
			"return \"X_KIND_A\"\n",
			"return \"BEE\"\n",
			"\treturn \"none\"\n",
		}},
		{[]string{"-type", "Kind", "-trimprefix", "X_", "-flags", "-unknown", "bad %d"}, []string{
			"{KindA, \"KIND_A\"},\n",
			"return fmt.Sprintf(\"bad %d\", uint16(k))\n",
		}},
	} {
		out := t.TempDir()
		if err := run(append([]string{"-dir", dir, "-o", out}, tt.args...), io.Discard); err != nil {
			t.Errorf("namegen %q: %v", tt.args, err)
			continue
		}
		got, err := os.ReadFile(filepath.Join(out, "zz_kind_string.go"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(got, []byte(header)) {
			t.Errorf("namegen %q: no header:\n%s", tt.args, got)
		}
		for _, w := range tt.want {
			if !bytes.Contains(got, []byte(w)) {
				t.Errorf("namegen %q: output lacks %q:\n%s", tt.args, w, got)
			}
		}
		for _, not := range []string{"KindT", "KindZ", "IGNORED", "other"} {
			if bytes.Contains(got, []byte(not)) {
				t.Errorf("namegen %q: output has %q:\n%s", tt.args, not, got)
			}
		}
	}
}

func TestGenerateErrors(t *testing.T) {
	for _, tt := range []struct {
		name  string
		extra string // more source for the package
		args  []string
		want  string // in the error
	}{
		{"no type", "", []string{"-type", "Nope"}, "no type Nope"},
		{"no -type", "", nil, "-type is required"},
		{"prefix", "", []string{"-type", "Kind", "-trimprefix", "Y_"}, "lacks the prefix Y_"},
		{"whole name", "", []string{"-type", "Kind", "-trimprefix", "X_KIND_A"}, "lacks the prefix"},
		{"literal", "const KindC Kind = 7\n", []string{"-type", "Kind"}, "KindC is not a C constant"},
		{"literal comment", "const KindC Kind = 7 // seven\n", []string{"-type", "Kind"}, "KindC is not a C constant"},
		{"literal pair", "const KindC, KindD Kind = 7, 8 // X_KIND_C\n", []string{"-type", "Kind"}, "KindC is not a C constant"},
		{"other package", "import q \"strconv\"\n\nconst KindC Kind = q.IntSize\n", []string{"-type", "Kind"}, "KindC is not a C constant"},
		{"stale rename", "", []string{"-type", "Kind", "-rename", "NOPE=X"}, "no constant is named NOPE"},
		{"bad rename", "", []string{"-type", "Kind", "-rename", "NOPE"}, "want A=B"},
		{"arguments", "", []string{"-type", "Kind", "extra"}, "unexpected arguments"},
	} {
		files := map[string]string{"p.go": testSrc}
		if tt.extra != "" {
			files["q.go"] = "package p\n\n" + tt.extra
		}
		dir := pkg(t, files)
		err := run(append([]string{"-dir", dir, "-o", t.TempDir()}, tt.args...), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: namegen %q = %v, want an error with %q", tt.name, tt.args, err, tt.want)
		}
	}
}
