// Package procs adapts the Go scheduler's parallelism (GOMAXPROCS) to a
// process's load: one P while the process is light, all of them as soon
// as goroutines queue for one.
//
// Why: at a light load (make bench's moderate step, issue 38) every wallet
// call wakes the process from idle, and with two Ps the runtime hands the
// woken goroutines from thread to thread — a spinning thread looking for
// work, a futex wake, an idle thread parked again — each call. Those
// hand-offs were about a quarter of `serve`'s CPU at 250 calls/s. With one
// P the same work ran on 14–19 % less of the service's CPU (three
// interleaved pairs), but under load one P is a bound: 9–12 % fewer calls/s
// at 64 and 256 in flight (docs/benchmarks.md). So the process runs on one
// P while it uses little CPU and switches to all of them the moment
// goroutines wait to run (the scheduler's own latency histogram), and
// stays there for a while before it may go back.
//
// Setting GOMAXPROCS stops the runtime's own updates of it (from a
// container's CPU limit, Go 1.25 on): Max is the value when Run starts,
// and a limit changed later is not followed.
package procs

import (
	"context"
	"log/slog"
	"runtime"
	"runtime/metrics"
	"syscall"
	"time"
)

// Config tunes Run; the zero value of a field takes its default.
type Config struct {
	// Max is the Ps under load: runtime.GOMAXPROCS(0) when Run starts.
	Max int
	// Interval is how often the load is sampled (250 ms).
	Interval time.Duration
	// SlowWait is a goroutine's wait to run that counts as slow (500 µs),
	// and UpShare the share of slow waits in a window that takes the
	// process to Max Ps (5 %).
	SlowWait time.Duration
	UpShare  float64
	// UpCores: this much CPU in a window at fewer than Max Ps takes the
	// process to Max too (0.75 cores).
	UpCores float64
	// DownCores: the process goes back to one P after CalmWindows windows
	// in a row below this CPU (0.3 cores) without slow waits, and not
	// before Hold has passed at Max (5 s).
	DownCores   float64
	CalmWindows int
	Hold        time.Duration
}

func (c Config) withDefaults() Config {
	if c.Max <= 0 {
		c.Max = runtime.GOMAXPROCS(0)
	}
	if c.Interval <= 0 {
		c.Interval = 250 * time.Millisecond
	}
	if c.SlowWait <= 0 {
		c.SlowWait = 500 * time.Microsecond
	}
	if c.UpShare <= 0 {
		c.UpShare = 0.05
	}
	if c.UpCores <= 0 {
		c.UpCores = 0.75
	}
	if c.DownCores <= 0 {
		c.DownCores = 0.3
	}
	if c.CalmWindows <= 0 {
		c.CalmWindows = 4
	}
	if c.Hold <= 0 {
		c.Hold = 5 * time.Second
	}
	return c
}

// Sample is one window's load: the process's CPU in cores, and the share
// of goroutine waits to run longer than Config.SlowWait.
type Sample struct {
	Cores, Slow float64
}

// State is the adapter's: the Ps now, the calm windows in a row, and the
// windows left before Max may be left.
type State struct {
	Procs, Calm, Hold int
}

// Decide is the next state after a window's sample.
func (c Config) Decide(s State, x Sample) State {
	c = c.withDefaults()
	holdWindows := int((c.Hold + c.Interval - 1) / c.Interval)
	if s.Procs < c.Max {
		if x.Slow > c.UpShare || x.Cores >= c.UpCores {
			return State{Procs: c.Max, Hold: holdWindows}
		}
		return s
	}
	if s.Hold > 0 {
		s.Hold--
	}
	if x.Cores < c.DownCores && x.Slow <= c.UpShare/2 {
		s.Calm++
	} else {
		s.Calm = 0
	}
	if s.Hold == 0 && s.Calm >= c.CalmWindows {
		return State{Procs: 1}
	}
	return s
}

// Run adapts GOMAXPROCS until ctx ends, then restores Max. It does nothing
// when Max is 1. Each change is logged at debug level.
func Run(ctx context.Context, cfg Config, log *slog.Logger) {
	cfg = cfg.withDefaults()
	if cfg.Max <= 1 {
		return
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	defer runtime.GOMAXPROCS(cfg.Max)
	s := State{Procs: cfg.Max, Hold: 1}
	m := newMeter(cfg.SlowWait)
	t := time.NewTicker(cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		x := m.sample()
		next := cfg.Decide(s, x)
		if next.Procs != s.Procs {
			runtime.GOMAXPROCS(next.Procs)
			log.DebugContext(ctx, "GOMAXPROCS changed", "procs", next.Procs, "cores", x.Cores, "slow_waits", x.Slow)
		}
		s = next
	}
}

// meter reads the process's CPU time and the scheduler's latency
// histogram, and reports each window's difference.
type meter struct {
	slowWait time.Duration
	at       time.Time
	cpu      time.Duration
	counts   []uint64
	metric   []metrics.Sample
}

const schedLatencies = "/sched/latencies:seconds"

func newMeter(slowWait time.Duration) *meter {
	m := &meter{slowWait: slowWait, metric: []metrics.Sample{{Name: schedLatencies}}}
	m.sample()
	return m
}

func (m *meter) sample() Sample {
	now, cpu := time.Now(), processCPU()
	metrics.Read(m.metric)
	var x Sample
	if wall := now.Sub(m.at); !m.at.IsZero() && wall > 0 {
		x.Cores = float64(cpu-m.cpu) / float64(wall)
	}
	if m.metric[0].Value.Kind() == metrics.KindFloat64Histogram {
		h := m.metric[0].Value.Float64Histogram()
		var all, slow uint64
		for i, n := range h.Counts {
			if i < len(m.counts) {
				n -= m.counts[i]
			}
			all += n
			if h.Buckets[i] >= m.slowWait.Seconds() { // the bucket's lower bound
				slow += n
			}
		}
		if all > 0 && m.counts != nil {
			x.Slow = float64(slow) / float64(all)
		}
		m.counts = append(m.counts[:0], h.Counts...)
	}
	m.at, m.cpu = now, cpu
	return x
}

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
