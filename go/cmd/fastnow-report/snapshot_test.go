package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

// The section is measured: a snapshot within a millisecond, its text, and
// on Linux the conversion checked against CLOCK_MONOTONIC, which holds;
// and it survives the JSON round trip.
func TestMeasureSnapshot(t *testing.T) {
	r := measureSnapshot()
	// A width of 0 is a snapshot whose two precise readings fell in one
	// tick of the clock: js/wasm under node reads a coarse one.
	minWidth := int64(1)
	if runtime.GOOS == "js" {
		minWidth = 0
	}
	if r.Tries != snapshotTries || r.WidthNs < minWidth || !strings.Contains(r.Text, "CLOCK_MONOTONIC") {
		t.Fatalf("%+v", *r)
	}
	if runtime.GOOS == "linux" {
		if r.CheckBracketNs == nil || r.CheckOutsideNs == nil || r.CheckHolds == nil || !*r.CheckHolds {
			t.Fatalf("%+v", *r)
		}
	}
	raw, err := json.Marshal(Report{Snapshot: r})
	if err != nil || !strings.Contains(string(raw), `"snapshot":{"tries":20`) {
		t.Fatalf("%s %v", raw, err)
	}
}

// How far outside a bracket, either way.
func TestOutside(t *testing.T) {
	for _, c := range [][4]int64{{10, 15, 20, 0}, {10, 7, 20, 3}, {10, 25, 20, 5}} {
		if got := outside(c[0], c[1], c[2]); got != c[3] {
			t.Errorf("outside(%d, %d, %d) = %d", c[0], c[1], c[2], got)
		}
	}
}
