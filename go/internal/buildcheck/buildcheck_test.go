// Package buildcheck holds the test that the module's build-constrained
// files complement each other on every target the toolchain knows: a
// backend chosen by a build constraint (a counter, a thread CPU clock, a
// boot clock, the clock-change watch) and the fallback whose constraint
// negates the backends' are written by hand, and a target none of them
// covers, or two of them cover, would only show when someone builds for
// it. The Rust crate writes each backend's cfg once and negates the list;
// Go has no such construct, so this test enumerates the targets instead.
package buildcheck

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// targets is every GOOS/GOARCH pair of `go tool dist list`.
func targets(t *testing.T) [][2]string {
	out, err := exec.Command("go", "tool", "dist", "list").Output()
	if err != nil {
		t.Skipf("go tool dist list: %v", err)
	}
	var list [][2]string
	for _, ln := range strings.Fields(string(out)) {
		if goos, goarch, ok := strings.Cut(ln, "/"); ok {
			list = append(list, [2]string{goos, goarch})
		}
	}
	if len(list) < 20 {
		t.Fatalf("go tool dist list gave %d targets", len(list))
	}
	return list
}

// srcFile is one non-test Go file of a package.
type srcFile struct {
	name  string
	decls []string
	file  *ast.File
}

// declared lists a file's package-level names (methods as Type.Method).
func declared(f *ast.File) []string {
	var names []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) == 1 {
				typ := d.Recv.List[0].Type
				if s, ok := typ.(*ast.StarExpr); ok {
					typ = s.X
				}
				if ix, ok := typ.(*ast.IndexExpr); ok {
					typ = ix.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					name = id.Name + "." + name
				}
			}
			if name != "init" && name != "_" {
				names = append(names, name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					names = append(names, s.Name.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.Name != "_" {
							names = append(names, n.Name)
						}
					}
				}
			}
		}
	}
	return names
}

// packages returns the module's package folders (the adapters are a module
// of their own).
func packages(t *testing.T, root string) []string {
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil || d.Name() == "testdata" {
				return filepath.SkipDir
			}
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			if dir := filepath.Dir(path); len(dirs) == 0 || dirs[len(dirs)-1] != dir {
				dirs = append(dirs, dir)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// module is the module's path, under which its packages are imported.
const module = "github.com/fastnow/fastnow/go"

// pkg is one package folder: its files, and every name any of them
// declares.
type pkg struct {
	rel      string
	dir      string
	files    []srcFile
	anywhere map[string]bool
}

// building returns, for one target, what each of p's names is declared by
// and the files that build.
func (p *pkg) building(t *testing.T, ctx *build.Context) (map[string][]string, []srcFile) {
	where := map[string][]string{}
	var files []srcFile
	for _, sf := range p.files {
		ok, err := ctx.MatchFile(p.dir, sf.name)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			continue
		}
		files = append(files, sf)
		for _, d := range sf.decls {
			where[d] = append(where[d], sf.name)
		}
	}
	return where, files
}

// refs returns what a file refers to in its own package (names it does
// not resolve itself) and in the module's other packages (by import path).
func refs(f *ast.File) (own []string, other map[string][]string) {
	for _, id := range f.Unresolved {
		own = append(own, id.Name)
	}
	imports := map[string]string{}
	for _, im := range f.Imports {
		path := strings.Trim(im.Path.Value, "\"")
		if !strings.HasPrefix(path, module+"/") {
			continue
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = path
	}
	other = map[string][]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Obj == nil {
				if path, ok := imports[x.Name]; ok {
					other[path] = append(other[path], sel.Sel.Name)
				}
			}
		}
		return true
	})
	return own, other
}

// Every package, on every target, with and without the fastnow_time tag:
// no package-level name is declared by two of the files that build there,
// and every name that a file building there refers to — in its own package
// or in another of the module's — and that some file of that package
// declares (on some target) is declared by a file building there. So each
// backend choice resolves to exactly one file per target.
func TestEveryTargetHasExactlyOneBackend(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	all := targets(t)
	dirs := packages(t, root)
	if len(dirs) < 4 {
		t.Fatalf("found %d package folders under %s", len(dirs), root)
	}
	fset := token.NewFileSet()
	byPath := map[string]*pkg{}
	var pkgs []*pkg
	for _, dir := range dirs {
		rel, _ := filepath.Rel(root, dir)
		p := &pkg{rel: rel, dir: dir, anywhere: map[string]bool{}}
		names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, path := range names {
			name := filepath.Base(path)
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			sf := srcFile{name: name, file: f, decls: declared(f)}
			for _, d := range sf.decls {
				p.anywhere[d] = true
			}
			p.files = append(p.files, sf)
		}
		pkgs = append(pkgs, p)
		byPath[module+"/"+filepath.ToSlash(rel)] = p
	}
	for _, target := range all {
		for _, tags := range [][]string{nil, {"fastnow_time"}} {
			ctx := build.Default
			ctx.GOOS, ctx.GOARCH, ctx.BuildTags, ctx.CgoEnabled = target[0], target[1], tags, false
			suffix := " on " + target[0] + "/" + target[1]
			if len(tags) > 0 {
				suffix += " -tags " + strings.Join(tags, ",")
			}
			where := map[*pkg]map[string][]string{}
			building := map[*pkg][]srcFile{}
			for _, p := range pkgs {
				where[p], building[p] = p.building(t, &ctx)
			}
			for _, p := range pkgs {
				for name, in := range where[p] {
					if len(in) > 1 {
						t.Errorf("%s%s: %s is declared by %s", p.rel, suffix, name, strings.Join(in, " and "))
					}
				}
				missing := map[string][]string{}
				for _, sf := range building[p] {
					own, other := refs(sf.file)
					for _, name := range own {
						if p.anywhere[name] && where[p][name] == nil {
							missing[p.rel+"."+name] = append(missing[p.rel+"."+name], sf.name)
						}
					}
					for path, names := range other {
						q := byPath[path]
						if q == nil {
							continue
						}
						for _, name := range names {
							if q.anywhere[name] && where[q][name] == nil {
								missing[q.rel+"."+name] = append(missing[q.rel+"."+name], p.rel+"/"+sf.name)
							}
						}
					}
				}
				keys := make([]string, 0, len(missing))
				for k := range missing {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					t.Errorf("%s%s: %s, which %s refers to, is declared by no file that builds there", p.rel, suffix, k, strings.Join(dedup(missing[k]), ", "))
				}
			}
		}
	}
}
func dedup(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
