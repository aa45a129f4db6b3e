package fastnow

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The documentation pkg.go.dev shows (the package doc and every exported
// item's) is read from the module alone: a file it names must be in the
// module, or be given by URL or as the repository's, since the module zip
// holds nothing outside go/.
func TestDocsCiteOnlyFilesInTheModule(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil || len(names) == 0 {
		t.Skip("the package's source files cannot be read here")
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
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
	docs := map[string]string{"package doc": p.Doc}
	values := func(owner string, vs []*doc.Value) {
		for _, v := range vs {
			docs[owner+strings.Join(v.Names, ", ")] = v.Doc
		}
	}
	funcs := func(owner string, fs []*doc.Func) {
		for _, f := range fs {
			docs[owner+f.Name] = f.Doc
		}
	}
	values("", p.Consts)
	values("", p.Vars)
	funcs("", p.Funcs)
	for _, ty := range p.Types {
		docs[ty.Name] = ty.Doc
		values("", ty.Consts)
		values("", ty.Vars)
		funcs("", ty.Funcs)
		funcs(ty.Name+".", ty.Methods)
	}
	url := regexp.MustCompile(`https?://\S+`)
	file := regexp.MustCompile(`(repository's )?([A-Za-z0-9_./-]+\.(?:md|rs|json|toml|go|s))\b`)
	for item, text := range docs {
		for _, m := range file.FindAllStringSubmatch(url.ReplaceAllString(text, ""), -1) {
			if m[1] != "" {
				continue
			}
			if _, err := os.Stat(m[2]); err == nil {
				continue
			}
			if _, err := os.Stat(filepath.Join("..", m[2])); err == nil {
				continue
			}
			t.Errorf("the doc of %s names %s, which is not in the module (give its URL, or call it the repository's)", item, m[2])
		}
	}
}

// The fallback sentences are the Rust crate's word for word (Fallback's
// String says so), read from its Display impl where the repository is at
// hand: a user who runs both sides reads one reason in one wording.
func TestFallbackSentencesAreTheRustCrates(t *testing.T) {
	raw, err := os.ReadFile("../../crates/fastnow/src/source/detect.rs")
	if err != nil {
		t.Skip("the Rust crate is not beside this module (as in the module zip)")
	}
	src := string(raw)
	start := strings.Index(src, "impl fmt::Display for Fallback")
	if start < 0 {
		t.Fatal("detect.rs has no Display impl for Fallback")
	}
	body := src[start:]
	body = body[:strings.Index(body, "\n}\n")]
	// A Rust string continued across lines with a backslash is one string.
	body = regexp.MustCompile(`\\\n\s*`).ReplaceAllString(body, "")
	rust := map[string]bool{}
	for _, m := range regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`).FindAllStringSubmatch(body, -1) {
		s := strings.ReplaceAll(m[1], "{cs}", "hpet")
		// Disabled's sentence ends with the target's reason, one of the
		// DISABLED_WHY strings there (Go: disabledWhy, arch_*.go).
		if strings.Contains(src, `"`+disabledWhy+`"`) {
			s = strings.ReplaceAll(s, "({})", "("+disabledWhy+")")
		}
		rust[s] = true
	}
	for _, r := range []reason{
		{why: FallbackNoCounter}, {why: FallbackNotInvariant}, {why: FallbackKernelClocksource, clocksource: "hpet"},
		{why: FallbackClocksourceUnknown}, {why: FallbackDisabled}, {why: FallbackStalled},
		{why: FallbackTooSlow}, {why: FallbackForced},
	} {
		if !rust[r.String()] {
			t.Errorf("Fallback %d says %q, which the Rust crate's Fallback never displays", r.why, r.String())
		}
	}
}
