package fastnow

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

func TestAtomicInstantOperations(t *testing.T) {
	at := InstantOf
	var a AtomicInstant
	if a.Load() != at(0) {
		t.Fatalf("zero value holds %v", a.Load())
	}
	a.Store(at(10))
	if old := a.Swap(at(20)); old != at(10) || a.Load() != at(20) {
		t.Fatalf("Swap: old %v, now %v", old, a.Load())
	}
	if !a.CompareAndSwap(at(20), at(30)) || a.CompareAndSwap(at(20), at(40)) || a.Load() != at(30) {
		t.Fatalf("CompareAndSwap: now %v", a.Load())
	}
	if old := a.StoreMax(at(25)); old != at(30) || a.Load() != at(30) {
		t.Fatalf("StoreMax below: old %v, now %v", old, a.Load())
	}
	if old := a.StoreMax(at(35)); old != at(30) || a.Load() != at(35) {
		t.Fatalf("StoreMax above: old %v, now %v", old, a.Load())
	}
	if old := a.StoreMin(at(5)); old != at(35) || a.Load() != at(5) {
		t.Fatalf("StoreMin: old %v, now %v", old, a.Load())
	}
	if !a.StoreIfNewer(at(6)) || a.StoreIfNewer(at(6)) || a.StoreIfNewer(at(1)) || a.Load() != at(6) {
		t.Fatalf("StoreIfNewer: now %v", a.Load())
	}
	if a.String() != "6ns after the package loaded" {
		t.Fatalf("String = %q", a.String())
	}
}

func TestAtomicUnixNanoOperations(t *testing.T) {
	var a AtomicUnixNano
	if a.Load() != 0 || a.String() != "1970-01-01T00:00:00Z" {
		t.Fatalf("zero value holds %d (%s)", a.Load(), a.String())
	}
	a.Store(-5) // before 1970 is a valid Unix time
	if !a.StoreIfNewer(1_700_000_000_000_000_001) || a.StoreIfNewer(-1) {
		t.Fatal("StoreIfNewer")
	}
	if a.String() != "2023-11-14T22:13:20.000000001Z" || !a.LoadTime().Equal(time.Unix(1_700_000_000, 1)) {
		t.Fatalf("String = %q, LoadTime = %v", a.String(), a.LoadTime())
	}
	if old := a.Swap(7); old != 1_700_000_000_000_000_001 {
		t.Fatalf("Swap returned %d", old)
	}
	if !a.CompareAndSwap(7, 8) || a.CompareAndSwap(7, 9) {
		t.Fatal("CompareAndSwap")
	}
	if a.StoreMax(3) != 8 || a.Load() != 8 || a.StoreMin(3) != 8 || a.Load() != 3 {
		t.Fatalf("StoreMax/StoreMin: now %d", a.Load())
	}
}

// Under contention (run with -race): goroutines racing to move one stamp
// forward end with the largest value any of them offered; exactly one
// StoreIfNewer reports each value that was the maximum when it landed, and
// the stamp never moves back as seen by a goroutine that keeps loading it.
func TestAtomicInstantUnderContention(t *testing.T) {
	workers := max(4, runtime.GOMAXPROCS(0))
	const perWorker = 20_000
	var a AtomicInstant
	var u AtomicUnixNano
	var wg sync.WaitGroup
	moved := make([]int, workers)
	stop := make(chan struct{})
	backwards := make(chan Instant, 1)
	go func() { // a reader: the stamp it sees never goes back
		last := a.Load()
		for {
			select {
			case <-stop:
				close(backwards)
				return
			default:
			}
			runtime.Gosched() // wasm: goroutines are not preempted
			if now := a.Load(); now.Before(last) {
				backwards <- now
				close(backwards)
				return
			} else {
				last = now
			}
		}
	}()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWorker; i++ {
				// Every worker offers interleaved values: worker w offers
				// w, w+workers, w+2*workers, ...
				v := int64(i*workers + w)
				if a.StoreIfNewer(InstantOf(v)) {
					moved[w]++
				}
				a.StoreMax(InstantOf(v - 1))
				u.StoreMax(v)
				if i%64 == 0 {
					runtime.Gosched()
				}
			}
		}(w)
	}
	wg.Wait()
	close(stop)
	if v, bad := <-backwards; bad {
		t.Fatalf("a reader saw the stamp go back to %v", v)
	}
	want := int64(perWorker*workers - 1)
	if a.Load() != InstantOf(want) || u.Load() != want {
		t.Fatalf("final stamps %v and %d, want %d", a.Load(), u.Load(), want)
	}
	total := 0
	for _, n := range moved {
		total += n
	}
	if total == 0 || total > perWorker*workers {
		t.Fatalf("StoreIfNewer reported %d moves", total)
	}
	// CompareAndSwap as a lock: every increment lands exactly once.
	var c AtomicInstant
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				for {
					old := c.Load()
					if c.CompareAndSwap(old, old.Add(1)) {
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	if c.Load() != InstantOf(int64(1000*workers)) {
		t.Fatalf("CompareAndSwap increments: %v", c.Load())
	}
}
