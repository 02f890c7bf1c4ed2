package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// apiRouteOutsideTheTable finds, in the Go file at path, the ServeMux
// registrations (Handle, HandleFunc) of a pattern under /api/: each is a
// route the OpenAPI document would not describe.
func apiRouteOutsideTheTable(t *testing.T, fset *token.FileSet, path string) []string {
	t.Helper()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatalf("parsing %s: %v", path, err)
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || (sel.Sel.Name != "Handle" && sel.Sel.Name != "HandleFunc") {
			return true
		}
		lit, ok := call.Args[0].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		pattern, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		_, p, ok := strings.Cut(pattern, " ")
		if !ok {
			p = pattern
		}
		if strings.HasPrefix(p, "/api/") {
			found = append(found, fset.Position(lit.Pos()).String()+": "+pattern)
		}
		return true
	})
	return found
}

// TestEveryAPIRouteIsInTheTable: the HTTP API is bots/web's route table,
// from which /api/openapi.json and docs/reference/http.md are generated
// and against which its answers are checked. A route under /api/ mounted
// anywhere else would be served but undocumented and unchecked.
func TestEveryAPIRouteIsInTheTable(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var outside []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			// bots/web mounts the table; deploy/ is a module of its own;
			// internal/*test are fakes of other services (Slack's Web API
			// is at /api/ too).
			fake := strings.HasPrefix(rel, "internal/") && strings.HasSuffix(rel, "test") && rel != "internal/archtest"
			if rel == "bots/web" || rel == "deploy" || fake || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		outside = append(outside, apiRouteOutsideTheTable(t, fset, path)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range outside {
		t.Errorf("%s: a route under /api/ outside bots/web's route table (routes.go); add it to the table so the OpenAPI document describes it", r)
	}
}
