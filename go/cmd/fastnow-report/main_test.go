package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// With FASTNOW_REPORT_ARGS set, this test binary is the report: main runs
// with those arguments, after the testing package has registered its
// -test.* flags on the default FlagSet, as testing.Init does in the command.
func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv("FASTNOW_REPORT_ARGS"); ok {
		// os.Args[0] stays this binary: the report starts itself again to
		// time a fresh process's first reading.
		os.Args = append([]string{os.Args[0]}, strings.Fields(args)...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runReport runs main in a child process with args; under an emulator,
// FASTNOW_TEST_RUNNER names it.
func runReport(t *testing.T, args string) (string, error) {
	t.Helper()
	if runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("this target cannot start processes")
	}
	cmd := exec.Command(os.Args[0])
	if runner := os.Getenv("FASTNOW_TEST_RUNNER"); runner != "" {
		cmd = exec.Command(runner, os.Args[0])
	}
	cmd.Env = append(os.Environ(), "FASTNOW_REPORT_ARGS="+args)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// -h lists the report's two flags and nothing of package testing's, which
// testing.Init registers for testing.Benchmark; it exits 0, and a flag or an
// argument the report does not know exits 2 with the same usage.
func TestHelpListsOnlyTheReportsFlags(t *testing.T) {
	out, err := runReport(t, "-h")
	if err != nil {
		t.Fatalf("-h: %v\n%s", err, out)
	}
	if !strings.Contains(out, "-quick") || !strings.Contains(out, "-json") || strings.Contains(out, "test.") {
		t.Errorf("-h should list -quick and -json only:\n%s", out)
	}
	for _, args := range []string{"-bogus", "extra"} {
		out, err := runReport(t, args)
		if e, ok := err.(*exec.ExitError); !ok || e.ExitCode() != 2 || !strings.Contains(out, "Usage: fastnow-report") || strings.Contains(out, "test.") {
			t.Errorf("%s: %v, want exit status 2 and the usage:\n%s", args, err, out)
		}
	}
	// The FlagSet itself holds the two flags and no other.
	flags, _, _ := reportFlags(&bytes.Buffer{})
	var names []string
	flags.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if !reflect.DeepEqual(names, []string{"json", "quick"}) {
		t.Errorf("the report's flags are %v, want [json quick]", names)
	}
}

// The JSON starts with schema_version, the version this binary writes,
// the one the shared schema names.
func TestJSONStartsWithItsSchemaVersion(t *testing.T) {
	var buf bytes.Buffer
	if err := writeJSON(&buf, Report{Verdict: "v"}); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&buf)
	for _, want := range []any{json.Delim('{'), "schema_version", float64(schemaVersion)} {
		tok, err := dec.Token()
		if err != nil || tok != want {
			t.Fatalf("JSON token %v (%v), want %v:\n%s", tok, err, want, buf.String())
		}
	}
	schema := loadSchema(t)
	version := schema["properties"].(map[string]any)["schema_version"].(map[string]any)["const"]
	if version != float64(schemaVersion) {
		t.Errorf("schemaVersion = %d, spec/report.schema.json says %v", schemaVersion, version)
	}
}
