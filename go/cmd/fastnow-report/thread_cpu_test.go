package main

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The section measures, agrees with the kernel's clock around it where it
// can ask it, and survives a JSON round trip.
func TestMeasureThreadCPU(t *testing.T) {
	r := measureThreadCPU(true)
	if r.ThreadCPUNs <= 0 || r.Clock == "" || r.Why == "" {
		t.Fatalf("%+v", r)
	}
	if k := r.BusyKernelNs; k != nil && (r.BusyNs > *k || r.BusyNs < *k-*k/100-1_000_000) {
		t.Fatalf("busy loop: %d ns by ThreadCPUNanotime, %d ns by the kernel around it", r.BusyNs, *k)
	}
	if r.Measures && r.AsleepNs > 16_000_000 {
		t.Fatalf("%d ns of CPU while asleep", r.AsleepNs)
	}
	perf := openPerfRoute()
	if perf != nil {
		perf.close()
	}
	if measured := r.PerfRouteNs != nil && *r.PerfRouteNs > 0; measured != (perf != nil) {
		t.Fatalf("perf route measured: %v (%v ns), but perf events open here: %v", measured, r.PerfRouteNs, perf != nil)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back ThreadCPUReport
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, *r) {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
}
