package fastnow

import (
	"encoding/json"
	"math"
	"math/big"
	"math/rand"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/quick"
	"time"
)

// The hybrid logical clock against the shared vectors (spec/vectors/hlc.json,
// which the Rust crate's tests read too), against the paper's rules in a
// model of drifting nodes, and across goroutines (under the race detector
// in make test).

type hlcVectors struct {
	Layout struct {
		PhysicalBits      int    `json:"physical_bits"`
		LogicalBits       int    `json:"logical_bits"`
		LastPhysicalNanos string `json:"last_physical_nanos"`
		EndNs             string `json:"end_ns"`
		DefaultMaxDriftNs string `json:"default_max_drift_ns"`
	} `json:"layout"`
	Encode []struct {
		PhysicalNanosIn string `json:"physical_nanos_in"`
		Logical         uint16 `json:"logical"`
		Word            string `json:"word"`
		PhysicalNanos   string `json:"physical_nanos"`
		Text            string `json:"text"`
	} `json:"encode"`
	Parse []struct {
		Text string  `json:"text"`
		Word *string `json:"word"`
	} `json:"parse"`
	Sequences []struct {
		Name       string `json:"name"`
		MaxDriftNs string `json:"max_drift_ns"`
		Steps      []struct {
			Node           string `json:"node"`
			Op             string `json:"op"`
			WallNs         string `json:"wall_ns"`
			Repeat         int    `json:"repeat"`
			Remote         string `json:"remote"`
			Want           string `json:"want"`
			WantText       string `json:"want_text"`
			RefusedAheadBy string `json:"refused_ahead_by_ns"`
		} `json:"steps"`
	} `json:"sequences"`
}

func readHLCVectors(t *testing.T) hlcVectors {
	t.Helper()
	raw, err := os.ReadFile("../../spec/vectors/hlc.json")
	if err != nil {
		t.Fatal(err)
	}
	var v hlcVectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// satInt64 is a vector's u64 nanoseconds as Go's int64 ones: values past
// 2^63 − 1 (the wall clock past 2262, a maximum drift of 2^64 − 1 ns) are
// the largest, which UnixNano saturates to and which lands in the same
// physical unit (past 2106) or accepts the same stamps (every one).
func satInt64(v uint64) int64 { return int64(min(v, math.MaxInt64)) }

func TestHLCLayoutAndEncodeVectors(t *testing.T) {
	v := readHLCVectors(t)
	if v.Layout.LogicalBits != hlcLogicalBits || v.Layout.PhysicalBits != 64-hlcLogicalBits {
		t.Fatalf("layout %+v", v.Layout)
	}
	if got := HLCTimestamp(math.MaxUint64).UnixNano(); uint64(got) != u64(t, v.Layout.LastPhysicalNanos) {
		t.Errorf("last physical nanos %d", got)
	}
	if u64(t, v.Layout.EndNs) != hlcEndNanos || u64(t, v.Layout.DefaultMaxDriftNs) != uint64(DefaultHLCMaxDrift) {
		t.Errorf("end or default drift differ: %+v", v.Layout)
	}
	if len(v.Encode) < 10 {
		t.Fatalf("only %d encode vectors", len(v.Encode))
	}
	for _, c := range v.Encode {
		ts := NewHLCTimestamp(satInt64(u64(t, c.PhysicalNanosIn)), c.Logical)
		if uint64(ts) != u64(t, c.Word) || uint64(ts.UnixNano()) != u64(t, c.PhysicalNanos) || ts.Logical() != c.Logical {
			t.Errorf("%+v: got %d (%d, %d)", c, uint64(ts), ts.UnixNano(), ts.Logical())
		}
		if ts.String() != c.Text {
			t.Errorf("%+v: text %s", c, ts)
		}
		if back, err := ParseHLCTimestamp(c.Text); err != nil || back != ts {
			t.Errorf("%s read back as %d, %v", c.Text, back, err)
		}
	}
}

func TestHLCParseVectors(t *testing.T) {
	v := readHLCVectors(t)
	var ok, refused int
	for _, c := range v.Parse {
		got, err := ParseHLCTimestamp(c.Text)
		if c.Word == nil {
			if err == nil {
				t.Errorf("%q read as %d", c.Text, uint64(got))
			}
			refused++
			continue
		}
		if err != nil || uint64(got) != u64(t, *c.Word) {
			t.Errorf("%q: got %d, %v; want %s", c.Text, uint64(got), err, *c.Word)
		}
		ok++
	}
	if ok < 10 || refused < 15 {
		t.Fatalf("%d accepted, %d refused", ok, refused)
	}
}

// The send/receive sequences, each node a new clock: once driven through
// the clock's internals with the wall readings, once through Now and
// Update with a ManualClock set to them (UseClock).
func TestHLCSequenceVectors(t *testing.T) {
	v := readHLCVectors(t)
	if len(v.Sequences) < 12 {
		t.Fatalf("only %d sequences", len(v.Sequences))
	}
	clock := NewManualClock(time.Unix(0, 0))
	for _, mocked := range []bool{false, true} {
		if mocked {
			defer UseClock(clock)()
		}
		for _, s := range v.Sequences {
			nodes := map[string]*HLC{}
			for i, step := range s.Steps {
				h := nodes[step.Node]
				if h == nil {
					h = NewHLC()
					h.SetMaxDrift(time.Duration(satInt64(u64(t, s.MaxDriftNs))))
					nodes[step.Node] = h
				}
				wall := satInt64(u64(t, step.WallNs))
				clock.Set(time.Unix(0, wall))
				var got HLCTimestamp
				var err error
				switch step.Op {
				case "now":
					for range max(step.Repeat, 1) {
						if mocked {
							got = h.Now()
						} else {
							got = h.now(wall)
						}
					}
				case "update":
					remote := HLCTimestamp(u64(t, step.Remote))
					if mocked {
						got, err = h.Update(remote)
					} else {
						got, err = h.update(remote, wall)
					}
				default:
					t.Fatalf("unknown op %q", step.Op)
				}
				if step.Want == "" {
					de, isDrift := err.(*HLCDriftError)
					if !isDrift || uint64(de.AheadBy) != u64(t, step.RefusedAheadBy) {
						t.Errorf("%s, step %d (mocked %v): got %v, %v; want refused by %s ns", s.Name, i, mocked, got, err, step.RefusedAheadBy)
					}
					continue
				}
				if err != nil || uint64(got) != u64(t, step.Want) || got.String() != step.WantText {
					t.Errorf("%s, step %d (mocked %v): got %s, %v; want %s", s.Name, i, mocked, got, err, step.WantText)
				}
			}
		}
	}
}

// paperHLC is the paper's clock (Kulkarni et al. 2014, Figure 5) on
// separate physical and counter parts, the counter unbounded: what the
// packed word must equal while no counter fills.
type paperHLC struct{ l, c uint64 }

func (p *paperHLC) now(pt uint64) {
	old := p.l
	p.l = max(old, pt)
	if p.l == old {
		p.c++
	} else {
		p.c = 0
	}
}

func (p *paperHLC) receive(m paperHLC, pt uint64) {
	old := p.l
	p.l = max(old, m.l, pt)
	switch {
	case p.l == old && p.l == m.l:
		p.c = max(p.c, m.c) + 1
	case p.l == old:
		p.c++
	case p.l == m.l:
		p.c = m.c + 1
	default:
		p.c = 0
	}
}

type hlcEvent struct {
	node  int
	stamp HLCTimestamp
	vc    []int
}

func happenedBefore(f, e hlcEvent) bool {
	return !slices.Equal(f.vc, e.vc) && func() bool {
		for i := range f.vc {
			if f.vc[i] > e.vc[i] {
				return false
			}
		}
		return true
	}()
}

// hlcModel runs one random scenario (the seed's) of nodes whose clocks are
// offset by up to 2 ms, drift by up to 200 ppm, step back, and (one of
// them, sometimes) run 1 s ahead, exchanging messages in random order, and
// checks the rules the Rust model checks (src/hlc/tests.rs): every stamp is
// the paper's (l, c); causality; each node's stamps strictly increase; the
// physical part is at least the node's wall clock's unit, at most the
// maximum drift past the largest reading the node took, and some node's
// reading; a receipt is refused exactly when the message is more than the
// maximum drift ahead; the counter is at most the number of events before
// it with the same physical part.
func hlcModel(t *testing.T, seed int64) bool {
	const maxDrift = 10_000_000
	const tau0 = 1_700_000_000_000_000_000
	rng := rand.New(rand.NewSource(seed))
	n := 2 + rng.Intn(3)
	type node struct {
		hlc     HLC
		paper   paperHLC
		offset  int64
		ppm     int64
		vc      []int
		last    HLCTimestamp
		stamped bool
		maxWall int64
	}
	nodes := make([]*node, n)
	rogue := rng.Intn(2) == 0
	for i := range nodes {
		nodes[i] = &node{offset: rng.Int63n(4_000_000) - 2_000_000, ppm: rng.Int63n(400) - 200, vc: make([]int, n)}
		if rogue && i == 0 {
			nodes[i].offset += 1_000_000_000
		}
		nodes[i].hlc.SetMaxDrift(maxDrift)
	}
	type message struct {
		stamp HLCTimestamp
		paper paperHLC
		vc    []int
	}
	var inFlight []message
	var events []hlcEvent
	var maxWallAnywhere int64
	tau := int64(tau0)
	fail := func(format string, args ...any) bool {
		t.Errorf("seed %d: "+format, append([]any{seed}, args...)...)
		return false
	}
	for steps := 1 + rng.Intn(250); steps > 0; steps-- {
		tau += rng.Int63n(40_000)
		i := rng.Intn(n)
		nd := nodes[i]
		kind := rng.Intn(11) // 0-2 local, 3-5 send, 6-9 receive, 10 step back
		if kind == 10 {
			nd.offset -= 1 + rng.Int63n(3_000_000)
			continue
		}
		wall := tau + nd.offset + (tau-tau0)*nd.ppm/1_000_000
		nd.maxWall = max(nd.maxWall, wall)
		maxWallAnywhere = max(maxWallAnywhere, wall)
		pt := hlcWordOfNanos(wall) >> hlcLogicalBits
		var stamp HLCTimestamp
		vc := slices.Clone(nd.vc)
		if kind >= 6 && len(inFlight) > 0 {
			k := rng.Intn(len(inFlight))
			m := inFlight[k]
			inFlight = slices.Delete(inFlight, k, k+1)
			ahead := m.stamp.UnixNano() - wall
			got, err := nd.hlc.update(m.stamp, wall)
			if err != nil {
				if ahead <= maxDrift || err.(*HLCDriftError).AheadBy != time.Duration(ahead) {
					return fail("refused %s at %d: %v", m.stamp, wall, err)
				}
				continue
			}
			if ahead > maxDrift {
				return fail("accepted %s at %d", m.stamp, wall)
			}
			if got <= m.stamp {
				return fail("receipt %s not above its send %s", got, m.stamp)
			}
			nd.paper.receive(m.paper, pt)
			for j := range vc {
				vc[j] = max(vc[j], m.vc[j])
			}
			stamp = got
		} else {
			nd.paper.now(pt)
			stamp = nd.hlc.now(wall)
		}
		vc[i]++
		nd.vc = vc
		if nd.paper.c > 0xffff || uint64(stamp) != nd.paper.l<<hlcLogicalBits|nd.paper.c {
			return fail("node %d at %d: %s, the paper's (%d, %d)", i, wall, stamp, nd.paper.l, nd.paper.c)
		}
		if nd.stamped && stamp <= nd.last {
			return fail("node %d: %s after %s", i, stamp, nd.last)
		}
		nd.last, nd.stamped = stamp, true
		if uint64(stamp)>>hlcLogicalBits < pt || stamp.UnixNano() > nd.maxWall+maxDrift || stamp.UnixNano() > maxWallAnywhere {
			return fail("node %d: %s out of its physical bounds (wall %d, largest own %d, anywhere %d)", i, stamp, wall, nd.maxWall, maxWallAnywhere)
		}
		if kind >= 3 && kind <= 5 {
			inFlight = append(inFlight, message{stamp, nd.paper, slices.Clone(vc)})
		}
		events = append(events, hlcEvent{i, stamp, vc})
	}
	for k, e := range events {
		samePhysicalBefore := 0
		for _, f := range events[:k] {
			if happenedBefore(f, e) {
				if f.stamp >= e.stamp {
					return fail("%s (node %d) happened before %s (node %d)", f.stamp, f.node, e.stamp, e.node)
				}
				if f.stamp>>hlcLogicalBits == e.stamp>>hlcLogicalBits {
					samePhysicalBefore++
				}
			}
		}
		if int(e.stamp.Logical()) > samePhysicalBefore {
			return fail("%s: counter above the %d events before it in its unit", e.stamp, samePhysicalBefore)
		}
	}
	return true
}

func TestHLCFollowsThePapersRules(t *testing.T) {
	cfg := &quick.Config{MaxCount: 400}
	if os.Getenv("FASTNOW_TEST_RUNNER") != "" {
		cfg.MaxCount = 50 // under an emulator
	}
	if err := quick.Check(func(seed int64) bool { return hlcModel(t, seed) }, cfg); err != nil {
		t.Fatal(err)
	}
}

// The conversions against exact big-integer arithmetic.
func TestHLCConversionsAreExact(t *testing.T) {
	billion, unit := big.NewInt(hlcNanosPerSec), big.NewInt(1<<16)
	check := func(ns int64, physical uint64) bool {
		physical &= hlcMaxPhysical
		want := uint64(0)
		if ns > 0 {
			q := new(big.Int).Div(new(big.Int).Mul(big.NewInt(ns), unit), billion)
			want = min(q.Uint64(), hlcMaxPhysical)
		}
		if hlcWordOfNanos(ns) != want<<hlcLogicalBits {
			return false
		}
		// ceil(physical × 10^9 / 2^16)
		num := new(big.Int).Mul(new(big.Int).SetUint64(physical), billion)
		first := new(big.Int).Div(num.Add(num, big.NewInt(1<<16-1)), unit).Uint64()
		return hlcNanosOfPhysical(physical) == first &&
			hlcWordOfNanos(int64(first)) == physical<<hlcLogicalBits &&
			(physical == 0 || hlcWordOfNanos(int64(first)-1) == (physical-1)<<hlcLogicalBits)
	}
	if err := quick.Check(check, &quick.Config{MaxCount: 20_000}); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]uint64{{0, 0}, {math.MaxInt64, hlcMaxPhysical}, {hlcEndNanos - 1, 1}, {hlcEndNanos, hlcMaxPhysical - 1}} {
		if !check(int64(c[0]), c[1]) {
			t.Errorf("%d, %d", c[0], c[1])
		}
	}
}

// Every stamp's text reads back as the stamp, is 36 bytes, and sorts as the
// stamps do.
func TestHLCTextRoundTripsAndSorts(t *testing.T) {
	check := func(a, b uint64) bool {
		ta, tb := HLCTimestamp(a), HLCTimestamp(b)
		sa, sb := ta.String(), tb.String()
		back, err := ParseHLCTimestamp(sa)
		var text HLCTimestamp
		m, _ := ta.MarshalText()
		return err == nil && back == ta && len(sa) == 36 &&
			(sa < sb) == (a < b) && text.UnmarshalText(m) == nil && text == ta
	}
	if err := quick.Check(check, &quick.Config{MaxCount: 20_000}); err != nil {
		t.Fatal(err)
	}
	var zero HLCTimestamp
	if err := zero.UnmarshalText([]byte("2024-02-29T12:34:56Z")); err == nil {
		t.Fatal("a text without a counter was accepted")
	}
}

// A full counter borrows: 2^16 stamps in one unit take the physical part
// one unit past the wall clock.
func TestHLCCounterBorrows(t *testing.T) {
	var h HLC
	wall := int64(1_700_000_000_123_456_789)
	first := h.now(wall)
	last := first
	for range 0xffff {
		next := h.now(wall)
		if next <= last {
			t.Fatalf("%s after %s", next, last)
		}
		last = next
	}
	borrowed := h.now(wall)
	if last.Logical() != 0xffff || borrowed != first+0x1_0000 || borrowed.UnixNano() <= wall {
		t.Fatalf("first %s, last %s, borrowed %s", first, last, borrowed)
	}
}

// A refused stamp leaves the clock as it was, and the error says by how
// much it was ahead.
func TestHLCRefusedStampChangesNothing(t *testing.T) {
	h := NewHLC()
	h.SetMaxDrift(time.Millisecond)
	wall := int64(1_700_000_000_000_000_000)
	before := h.now(wall)
	_, err := h.update(NewHLCTimestamp(wall+1_500_000, 0), wall)
	want := "remote HLC timestamp 2023-11-14T22:13:20.001495362Z,00000 is 1.495362ms ahead of the local wall clock " +
		"(2023-11-14T22:13:20.000000000Z), more than the maximum drift of 1ms: refused, the clock left as it was"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	if after := h.now(wall); after != before+1 {
		t.Fatalf("%s after %s", after, before)
	}
	h.SetMaxDrift(-time.Second)
	if h.MaxDrift() != 0 {
		t.Fatalf("negative drift kept as %v", h.MaxDrift())
	}
	var zero HLC
	if zero.MaxDrift() != DefaultHLCMaxDrift {
		t.Fatalf("the zero value's drift is %v", zero.MaxDrift())
	}
}

// Across goroutines: each one's stamps strictly increase, and no two stamps
// of all of them are equal; a stamp taken after seeing another goroutine's
// is above it.
func TestHLCAcrossGoroutines(t *testing.T) {
	const goroutines, perGoroutine = 4, 50_000
	h := NewHLC()
	all := make([][]uint64, goroutines)
	var wg sync.WaitGroup
	for g := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stamps := make([]uint64, perGoroutine)
			for i := range stamps {
				stamps[i] = uint64(h.Now())
			}
			all[g] = stamps
		}()
	}
	wg.Wait()
	var merged []uint64
	for g, stamps := range all {
		if !slices.IsSorted(stamps) || len(slices.Compact(slices.Clone(stamps))) != len(stamps) {
			t.Fatalf("goroutine %d's stamps do not strictly increase", g)
		}
		merged = append(merged, stamps...)
	}
	slices.Sort(merged)
	if n := len(slices.Compact(merged)); n != goroutines*perGoroutine {
		t.Fatalf("%d duplicate stamps", goroutines*perGoroutine-n)
	}

	var seen atomic.Uint64
	var stop atomic.Bool
	seen.Store(uint64(h.Now()))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			seen.Store(uint64(h.Now()))
		}
	}()
	inversions := 0
	for range 100_000 {
		other := seen.Load()
		if uint64(h.Now()) <= other {
			inversions++
		}
	}
	stop.Store(true)
	<-done
	if inversions != 0 {
		t.Fatalf("%d inversions", inversions)
	}
}
