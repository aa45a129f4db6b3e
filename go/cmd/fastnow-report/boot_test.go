package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

// The section is measured with its route, its costs and (on Linux) its
// agreement with CLOCK_BOOTTIME, within a loose bound over the quick 0.2 s
// (the rate may still be young), and it survives the JSON round trip.
func TestMeasureBoot(t *testing.T) {
	r := measureBoot(true)
	if r.Route == "" || r.BootNs <= 0 || r.NanotimeNs <= 0 {
		t.Fatalf("%+v", *r)
	}
	if runtime.GOOS == "linux" {
		if r.KernelNs == nil || r.IntervalKernelNs == nil || r.BracketNs == nil || *r.KernelNs <= 0 || *r.IntervalKernelNs <= 0 {
			t.Fatalf("%+v", *r)
		}
		off := r.IntervalBootNs - *r.IntervalKernelNs
		if off > 100_000+*r.BracketNs || off < -100_000-*r.BracketNs {
			t.Fatalf("%+v", *r)
		}
	}
	raw, err := json.Marshal(Report{Boot: r})
	if err != nil || !strings.Contains(string(raw), `"boot":{"route"`) {
		t.Fatalf("%s %v", raw, err)
	}
}
