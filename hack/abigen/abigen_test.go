package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTablesMatchSpec checks, without a C compiler, that the checked-in
// tables have exactly the rows of abi.spec: an edit of the spec must be
// followed by go generate.
func TestTablesMatchSpec(t *testing.T) {
	s, err := parseSpec(specText)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := readTables(filepath.Join("..", "..", "internal", "abi"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, stale := compare(s, &probeResult{}, tables)
	for _, m := range stale {
		t.Error(m)
	}
	if len(tables) != len(s.rows) {
		t.Errorf("%d rows in the tables, %d in abi.spec", len(tables), len(s.rows))
	}
}

func TestParseSpec(t *testing.T) {
	s, err := parseSpec(`test T
uapi rdma/x.h
layout struct x member a.b = XB
	c = C
	d[0] = unsafe.Sizeof(XB{})
const A or B = GoA
kernel include/rdma/y.h enum y
varies const Y
string S
`)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ key, c, goX string }{
		{"sizeof(struct x, member a.b)", "sizeof(((struct x *)0)->a.b)", "unsafe.Sizeof(XB{})"},
		{"offsetof(struct x, member a.b, c)", "offsetof(__typeof__(((struct x *)0)->a.b), c)", "unsafe.Offsetof(XB{}.C)"},
		{"offsetof(struct x, member a.b, d[0])", "offsetof(__typeof__(((struct x *)0)->a.b), d[0])", "unsafe.Sizeof(XB{})"},
		{"GoA", "A", "GoA"},
		{"Y", "Y", "Y"},
		{"string S", "S", "S"},
	}
	if len(s.rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(s.rows), len(want))
	}
	for i, w := range want {
		r := s.rows[i]
		if r.key() != w.key || r.c[0] != w.c || r.goX != w.goX {
			t.Errorf("row %d: %q %q %q, want %q %q %q", i, r.key(), r.c[0], r.goX, w.key, w.c, w.goX)
		}
	}
	if r := s.rows[3]; len(r.c) != 2 || r.c[1] != "B" {
		t.Errorf("alternatives %q", r.c)
	}
	if r := s.rows[4]; !r.kernel || !r.varies || s.kernels != 2 {
		t.Errorf("kernel row: kernel %v varies %v, %d kernel rows", r.kernel, r.varies, s.kernels)
	}
	for _, bad := range []string{
		"const A\n",                             // before test
		"test T\nuapi x\n\tf = F\n",             // field outside a layout
		"test T\nuapi x\nconst A\nconst A\n",    // twice
		"test T\nuapi x\nvaries layout x = X\n", // only consts vary
	} {
		if _, err := parseSpec(bad); err == nil {
			t.Errorf("parseSpec(%q) succeeded", bad)
		}
	}
}

func TestExtractBlock(t *testing.T) {
	f := filepath.Join(t.TempDir(), "h.h")
	src := "enum a {\n\tA1,\n};\n/* enum b { */\nenum b {\n\tB1 = GENMASK(3, 0),\n};\nstruct c {\n\tint x;\n};\n"
	if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ kind, name, want string }{
		{"enum", "b", "enum b {\n\tB1 = GENMASK(3, 0),\n};"},
		{"struct", "c", "struct c {\n\tint x;\n};"},
		{"enum", "c", ""},
	} {
		got, err := extractBlock(f, tt.kind, tt.name)
		if err != nil || got != tt.want {
			t.Errorf("extractBlock(%s %s) = %q, %v; want %q", tt.kind, tt.name, got, err, tt.want)
		}
	}
	if got, err := extractBlock(filepath.Join(t.TempDir(), "none.h"), "enum", "a"); got != "" || err != nil {
		t.Errorf("missing file: %q, %v", got, err)
	}
}
