package fastnow

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue item: every exported function, type, constructor and method has a
// runnable example (example_test.go), which pkg.go.dev shows beside it.
func TestEveryEntryPointHasAnExample(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil || len(names) == 0 {
		t.Skip("the package's source files cannot be read here")
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/fastnow/fastnow/go/fastnow")
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	check := func(name string, examples []*doc.Example) {
		for _, e := range examples {
			if e.Output != "" || e.EmptyOutput {
				return
			}
		}
		missing = append(missing, name)
	}
	for _, f := range p.Funcs {
		check(f.Name, f.Examples)
	}
	for _, ty := range p.Types {
		if strings.Contains(ty.Doc, "\nDeprecated: ") {
			continue // an old name kept for a while, documented by its new one
		}
		check(ty.Name, ty.Examples)
		for _, f := range ty.Funcs {
			check(f.Name, f.Examples)
		}
		for _, m := range ty.Methods {
			check(ty.Name+"."+m.Name, m.Examples)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("no runnable example (one with an Output comment) for: %s", strings.Join(missing, ", "))
	}
	if _, err := os.Stat("example_test.go"); err != nil {
		t.Fatal(err)
	}
}
