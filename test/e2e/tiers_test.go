package e2e

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestZonedNodeTestsListed: ZonedNodeTests lists exactly the Test functions of this package that call
// zonedNode themselves, so that a new test of the zoned node runs in make test's stage 8 and is not left to
// stage 7's kind cluster, where it would only skip; and none of them runs beside another. It reads the sources
// and needs no cluster.
func TestZonedNodeTestsListed(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files here (%v)", err)
	}
	fset := token.NewFileSet()
	var calling, all []string
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestMain" {
				continue
			}
			all = append(all, fn.Name.Name)
			if calls(fn.Body, "zonedNode") {
				calling = append(calling, fn.Name.Name)
				if calls(fn.Body, "beside", "Parallel") {
					t.Errorf("%s runs on the zoned node and beside other tests: the node's tests share its two emulated vCPUs and its spare zoned device, so they run one at a time", fn.Name.Name)
				}
			}
		}
	}
	if !slices.Contains(all, "TestZonedNodeTestsListed") {
		t.Fatalf("the parse found no Test functions but %v: it does not read this package's files", all)
	}
	listed := slices.Clone(ZonedNodeTests)
	slices.Sort(listed)
	slices.Sort(calling)
	if !slices.Equal(listed, slices.Compact(slices.Clone(listed))) {
		t.Errorf("ZonedNodeTests lists a test twice: %v", ZonedNodeTests)
	}
	for _, name := range calling {
		if !slices.Contains(listed, name) {
			t.Errorf("%s calls zonedNode but is not in ZonedNodeTests (tiers.go): make test would run it on kind, where it skips, and never on the zoned node", name)
		}
	}
	for _, name := range listed {
		if !slices.Contains(calling, name) {
			t.Errorf("ZonedNodeTests (tiers.go) lists %s, which is no Test function of this package that calls zonedNode", name)
		}
	}
	// the pattern stages 7 and 8 give go test matches exactly the listed tests
	re := regexp.MustCompile(ZonedNodePattern())
	for _, name := range all {
		if got, want := re.MatchString(name), slices.Contains(listed, name); got != want {
			t.Errorf("ZonedNodePattern() %q matches %s: %v, want %v", ZonedNodePattern(), name, got, want)
		}
	}
}

// calls: the body calls one of the functions or methods named (zonedNode(...), t.Parallel()) itself.
func calls(body *ast.BlockStmt, names ...string) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			switch f := c.Fun.(type) {
			case *ast.Ident:
				found = slices.Contains(names, f.Name)
			case *ast.SelectorExpr:
				found = slices.Contains(names, f.Sel.Name)
			}
		}
		return !found
	})
	return found
}
