package fastnow

import (
	"encoding/json"
	"os"
	"testing"
)

// The state machine's constants against the shared list
// (spec/vectors/constants.json), which the Rust crate's tests read too:
// the two languages cannot drift apart silently. A constant kept different
// in Go carries go_value and the reason; one this test does not know, or
// one of its own that the file does not list, fails it.
func TestConstantsMatchTheSpec(t *testing.T) {
	goConsts := map[string]uint64{
		"marginNs":               marginNs,
		"minPeriodNs":            minPeriodNs,
		"maxPeriodNs":            maxPeriodNs,
		"readerPeriodNs":         readerPeriodNs,
		"upkeepPeriodNs":         upkeepPeriodNs,
		"checkPeriodNs":          checkPeriodNs,
		"maxGraceNs":             maxGraceNs,
		"firstSpanNs":            firstSpanNs,
		"upkeepSlackNs":          upkeepSlackNs,
		"minWallIntervalNs":      minWallIntervalNs,
		"maxWallIntervalNs":      maxWallIntervalNs,
		"defaultWallIntervalNs":  defaultWallIntervalNs,
		"wallGuardNs":            wallGuardNs,
		"windowNs":               windowNs,
		"minWindowNs":            minWindowNs,
		"suspectShift":           suspectShift,
		"bracketsPerSample":      bracketsPerSample,
		"realBrackets":           realBrackets,
		"readerBrackets":         readerBrackets,
		"switchSampleTries":      switchSampleTries,
		"windowSlots":            windowSlots,
		"bootSamplePairs":        bootSamplePairs,
		"bootRemeasureNs":        bootRemeasureNs,
		"rebaseNs":               rebaseNs,
		"settleNs":               settleNs,
		"slowSamplesForACheck":   slowSamplesForACheck,
		"switchAfter":            switchAfter,
		"contentionWindowNs":     contentionWindowNs,
		"markFreshNs":            markFreshNs,
		"floorSlackNs":           floorSlackNs,
		"maxCounterHz":           maxCounterHz,
		"conversionRateErrorPpb": conversionRateErrorPpb,
		"snapshotTries":          snapshotTries,
	}
	raw, err := os.ReadFile("../../spec/vectors/constants.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Constants []struct {
			Name    string  `json:"name"`
			Value   *uint64 `json:"value"`
			Go      *string `json:"go"`
			GoValue *uint64 `json:"go_value"`
			Why     string  `json:"why"`
		} `json:"constants"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	listed := make(map[string]bool)
	for _, c := range file.Constants {
		if c.Value == nil {
			t.Errorf("%s: no value", c.Name)
			continue
		}
		if c.Go == nil {
			if c.GoValue != nil {
				t.Errorf("%s: a go_value without a Go name", c.Name)
			}
			continue
		}
		listed[*c.Go] = true
		got, ok := goConsts[*c.Go]
		if !ok {
			t.Errorf("%s: Go constant %s is not checked by this test", c.Name, *c.Go)
			continue
		}
		want := *c.Value
		if c.GoValue != nil {
			if c.Why == "" {
				t.Errorf("%s: Go keeps %d, not %d, without saying why", c.Name, *c.GoValue, want)
			}
			want = *c.GoValue
		}
		if got != want {
			t.Errorf("%s: Go's %s is %d, the spec says %d", c.Name, *c.Go, got, want)
		}
	}
	for name := range goConsts {
		if !listed[name] {
			t.Errorf("%s is not listed in spec/vectors/constants.json", name)
		}
	}
}
