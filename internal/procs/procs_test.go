package procs

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/pitboss/pitboss/internal/eventually"
)

// TestDecide walks the adapter's states: up at once on slow waits or
// much CPU, down only after the hold and enough calm windows in a row.
func TestDecide(t *testing.T) {
	t.Parallel()
	cfg := Config{Max: 4, Interval: 250 * time.Millisecond, Hold: time.Second, CalmWindows: 2}
	light := Sample{Cores: 0.1}
	tests := []struct {
		name string
		from State
		x    Sample
		want State
	}{
		{name: "one P, light: stays", from: State{Procs: 1}, x: light, want: State{Procs: 1}},
		{name: "one P, slow waits: up, held", from: State{Procs: 1}, x: Sample{Cores: 0.2, Slow: 0.06}, want: State{Procs: 4, Hold: 4}},
		{name: "one P, a few slow waits: stays", from: State{Procs: 1}, x: Sample{Cores: 0.2, Slow: 0.04}, want: State{Procs: 1}},
		{name: "one P, much CPU: up", from: State{Procs: 1}, x: Sample{Cores: 0.8}, want: State{Procs: 4, Hold: 4}},
		{name: "two of four Ps count as fewer than Max", from: State{Procs: 2}, x: Sample{Slow: 0.5}, want: State{Procs: 4, Hold: 4}},
		{name: "held: calm counts, no way down", from: State{Procs: 4, Hold: 3, Calm: 5}, x: light, want: State{Procs: 4, Hold: 2, Calm: 6}},
		{name: "hold over, calm enough: down", from: State{Procs: 4, Hold: 1, Calm: 1}, x: light, want: State{Procs: 1}},
		{name: "hold over, one calm window short", from: State{Procs: 4, Calm: 0}, x: light, want: State{Procs: 4, Calm: 1}},
		{name: "busy window resets the calm", from: State{Procs: 4, Calm: 1}, x: Sample{Cores: 0.5}, want: State{Procs: 4}},
		{name: "slow waits reset the calm", from: State{Procs: 4, Calm: 1}, x: Sample{Cores: 0.1, Slow: 0.03}, want: State{Procs: 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := cfg.Decide(tc.from, tc.x); got != tc.want {
				t.Errorf("Decide(%+v, %+v) = %+v, want %+v", tc.from, tc.x, got, tc.want)
			}
		})
	}
}

// TestRun: an idle process goes to one P, a busy one back to all, and
// Max is restored when ctx ends. Not parallel: it sets GOMAXPROCS.
func TestRun(t *testing.T) {
	const max = 2
	before := runtime.GOMAXPROCS(max)
	defer runtime.GOMAXPROCS(before)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, Config{Max: max, Interval: 20 * time.Millisecond, Hold: 20 * time.Millisecond, CalmWindows: 2}, nil)
	}()
	eventually.True(t, 10*time.Second, "GOMAXPROCS 1 while idle", func() bool { return runtime.GOMAXPROCS(0) == 1 })

	// Four goroutines that never block: a run queue at one P.
	stop := make(chan struct{})
	for range 4 {
		go func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	eventually.True(t, 10*time.Second, "GOMAXPROCS back to 2 under load", func() bool { return runtime.GOMAXPROCS(0) == max })
	close(stop)
	cancel()
	<-done
	if got := runtime.GOMAXPROCS(0); got != max {
		t.Errorf("GOMAXPROCS %d after Run ended, want %d", got, max)
	}
}

// TestRunWithOneP: with one P there is nothing to adapt, and Run returns
// at once instead of waiting for ctx.
func TestRunWithOneP(t *testing.T) {
	t.Parallel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(context.Background(), Config{Max: 1}, nil)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("Run kept running with one P to give")
	}
}
