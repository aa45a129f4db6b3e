package main

import (
	"fmt"

	"github.com/fastnow/fastnow/go/fastnow"
)

// SnapshotReport is the -json output's "snapshot" (the schema's, shared
// with the Rust report): how tightly fastnow.Snapshot reads every clock
// together here, the conversions' stated error then, and a conversion of a
// precise reading checked against CLOCK_MONOTONIC read around it.
type SnapshotReport struct {
	Tries             int    `json:"tries"`               // snapshots taken
	WidthNs           int64  `json:"width_ns"`            // the tightest one's Width
	ConversionErrorNs int64  `json:"conversion_error_ns"` // its ConversionError
	Text              string `json:"text"`                // its String
	// CheckBracketNs is the tightest bracket of two CLOCK_MONOTONIC
	// readings around Now().MonotonicNanos(), CheckOutsideNs how far the
	// conversion fell outside it (0: inside), CheckHolds whether within the
	// stated error; nil where the report reads no such clock.
	CheckBracketNs *int64 `json:"check_bracket_ns"`
	CheckOutsideNs *int64 `json:"check_outside_ns"`
	CheckHolds     *bool  `json:"check_holds"`
}

// snapshotTries is how many snapshots the section takes (the Rust
// report's too).
const snapshotTries = 20

// outside is how far v lies outside [lo, hi] (0 inside).
func outside(lo, v, hi int64) int64 { return max(0, lo-v, v-hi) }

func measureSnapshot() *SnapshotReport {
	_ = fastnow.Now()
	best := fastnow.Snapshot()
	for i := 1; i < snapshotTries; i++ {
		if s := fastnow.Snapshot(); s.Width < best.Width {
			best = s
		}
	}
	r := &SnapshotReport{Tries: snapshotTries, WidthNs: int64(best.Width),
		ConversionErrorNs: int64(best.ConversionError), Text: best.String()}
	if _, ok := kernelMono(); !ok {
		return r
	}
	bracket, out := int64(-1), int64(0)
	for i := 0; i < 200; i++ {
		a, _ := kernelMono()
		v := fastnow.Now().MonotonicNanos()
		b, _ := kernelMono()
		if bracket < 0 || b-a < bracket {
			bracket, out = b-a, outside(a, v, b)
		}
	}
	holds := out <= int64(fastnow.ConversionError())
	r.CheckBracketNs, r.CheckOutsideNs, r.CheckHolds = &bracket, &out, &holds
	return r
}

func printSnapshot(r *SnapshotReport) {
	fmt.Printf("\nClock snapshot (fastnow.Snapshot): %d ns, the tightest of %d snapshots; conversions ±%d ns then\n",
		r.WidthNs, r.Tries, r.ConversionErrorNs)
	switch {
	case r.CheckHolds == nil:
		fmt.Println("- no CLOCK_MONOTONIC read here to check against")
	default:
		where := "between"
		if *r.CheckOutsideNs > 0 {
			where = fmt.Sprintf("%d ns outside", *r.CheckOutsideNs)
		}
		verdict := ", within the stated error"
		if !*r.CheckHolds {
			verdict = ": beyond the stated error"
		}
		fmt.Printf("- check: Now().MonotonicNanos() %s two CLOCK_MONOTONIC readings %d ns apart%s\n", where, *r.CheckBracketNs, verdict)
	}
	fmt.Printf("- snapshot: %s\n", r.Text)
}
