package gomodzip

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/licensecheck"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// The repository's Go modules: each one's directory, path, and the
// directories its zip leaves out because they hold modules of their own.
var modules = []struct {
	dir, path string
	nested    []string
}{
	{"../../go", "github.com/fastnow/fastnow/go", []string{"adapters"}},
	{"../../go/adapters", "github.com/fastnow/fastnow/go/adapters", nil},
}

// The version the zips are built for: any valid one gives the same files.
const version = "v0.1.0"

// pkg.go.dev shows a module's documentation only when license files cover
// at least this share of their text with licenses it knows to allow
// redistribution (its licenses package's coverage threshold).
const coverageThreshold = 75

// Each module's zip, built as the module proxy builds it, holds a LICENSE
// that pkg.go.dev recognises (MIT and Apache-2.0, covering the file),
// leaves out nothing but the nested modules, and holds every file the go
// command builds or tests in the module's packages.
func TestModuleZips(t *testing.T) {
	for _, m := range modules {
		t.Run(m.path, func(t *testing.T) {
			gomod, err := os.ReadFile(filepath.Join(m.dir, "go.mod"))
			if err != nil {
				t.Fatal(err)
			}
			if got := modfile.ModulePath(gomod); got != m.path {
				t.Fatalf("%s/go.mod declares %q, want %q", m.dir, got, m.path)
			}

			checked, err := modzip.CheckDir(m.dir)
			if err != nil {
				t.Fatalf("the module would not make a valid zip: %v", err)
			}
			var omitted []string
			for _, f := range checked.Omitted {
				rel, _ := filepath.Rel(m.dir, f.Path)
				omitted = append(omitted, filepath.ToSlash(rel))
				if !slices.Contains(m.nested, filepath.ToSlash(rel)) {
					t.Errorf("the zip leaves out %s (%v), which is not a nested module", rel, f.Err)
				}
			}
			for _, n := range m.nested {
				if !slices.Contains(omitted, n) {
					t.Errorf("%s was expected to be a nested module, left out of the zip; it is not (omitted: %v)", n, omitted)
				}
			}

			zipped := filepath.Join(t.TempDir(), version+".zip")
			var buf bytes.Buffer
			mv := module.Version{Path: m.path, Version: version}
			if err := modzip.CreateFromDir(&buf, mv, m.dir); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(zipped, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := modzip.CheckZip(mv, zipped); err != nil {
				t.Fatalf("the zip does not pass the proxy's own check: %v", err)
			}
			zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
			if err != nil {
				t.Fatal(err)
			}
			prefix := m.path + "@" + version + "/"
			files := map[string]*zip.File{}
			for _, f := range zr.File {
				files[strings.TrimPrefix(f.Name, prefix)] = f
			}

			license, ok := files["LICENSE"]
			if !ok {
				t.Fatal("the zip holds no LICENSE at the module's root")
			}
			text := read(t, license)
			if onDisk, err := os.ReadFile(filepath.Join(m.dir, "LICENSE")); err != nil || !bytes.Equal(text, onDisk) {
				t.Errorf("the zip's LICENSE differs from %s/LICENSE (%v)", m.dir, err)
			}
			cov := licensecheck.Scan(text)
			var ids []string
			for _, match := range cov.Match {
				ids = append(ids, match.ID)
			}
			if cov.Percent < coverageThreshold || !slices.Contains(ids, "MIT") || !slices.Contains(ids, "Apache-2.0") {
				t.Errorf("LICENSE: %.1f%% recognised, as %v; pkg.go.dev needs %d%%, and the licenses are MIT and Apache-2.0", cov.Percent, ids, coverageThreshold)
			}
			if _, ok := files["go.mod"]; !ok {
				t.Error("the zip holds no go.mod")
			}

			for _, f := range listed(t, m.dir) {
				if _, ok := files[f]; !ok {
					t.Errorf("the zip lacks %s, which the go command builds or tests", f)
				}
			}
		})
	}
}

// listed returns the files, relative to dir, that go list names for the
// packages of the module in dir: sources for every platform, tests and
// embedded files.
func listed(t *testing.T, dir string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json", "./...")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list in %s: %v", dir, err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			Dir                                                  string
			GoFiles, IgnoredGoFiles, SFiles, TestGoFiles         []string
			XTestGoFiles, EmbedFiles, TestEmbedFiles, OtherFiles []string
			CgoFiles, HFiles, XTestEmbedFiles, IgnoredOtherFiles []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(abs, p.Dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, group := range [][]string{p.GoFiles, p.IgnoredGoFiles, p.SFiles, p.TestGoFiles, p.XTestGoFiles,
			p.EmbedFiles, p.TestEmbedFiles, p.OtherFiles, p.CgoFiles, p.HFiles, p.XTestEmbedFiles, p.IgnoredOtherFiles} {
			for _, f := range group {
				files = append(files, path.Join(filepath.ToSlash(rel), f))
			}
		}
	}
	if len(files) == 0 {
		t.Fatalf("go list names no file in %s", dir)
	}
	return files
}

func read(t *testing.T, f *zip.File) []byte {
	t.Helper()
	r, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
