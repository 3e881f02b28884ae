package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/pitboss/pitboss/internal/procmem"
)

// CPU and memory from /proc. Times in /proc/<pid>/stat are in USER_HZ
// ticks, which Linux fixes at 100 a second for user space on every
// architecture Go runs the benchmark on.
const userHZ = 100

// cpuSeconds is the user+system CPU time of pid so far.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return statCPU(b)
}

// statCPU reads utime and stime (fields 14 and 15) from a stat line; the
// command name (field 2) may hold spaces, so fields count from its ')'.
func statCPU(b []byte) (float64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("stat line without a command name")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("stat line has %d fields after the name", len(f))
	}
	// f[0] is field 3 (state): utime is field 14 = f[11], stime f[12].
	u, err1 := strconv.ParseFloat(f[11], 64)
	s, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("stat line: utime %q stime %q", f[11], f[12])
	}
	return (u + s) / userHZ, nil
}

// memKB returns VmRSS and VmHWM (the peak resident set) of pid in KiB.
func memKB(pid int) (rss, hwm int64, err error) { return procmem.KB(strconv.Itoa(pid)) }

func postgresOf(db string) func(string) bool {
	return func(cl string) bool { return strings.HasPrefix(cl, "postgres: ") && strings.Contains(cl, " "+db+" ") }
}

// postgresShared matches the cluster's own processes (WAL writer,
// checkpointer, ...): they work for every database at once.
func postgresShared(cl string) bool {
	if !strings.HasPrefix(cl, "postgres: ") {
		return strings.Contains(cl, "/postgres -D ")
	}
	for _, p := range []string{"walwriter", "checkpointer", "background writer", "autovacuum", "logical replication", "stats"} {
		if strings.HasPrefix(cl, "postgres: "+p) {
			return true
		}
	}
	return false
}

func kafkaBroker(cl string) bool {
	return strings.Contains(cl, "java") && strings.Contains(cl, "kafka.Kafka")
}

// machineCPU reads, from /proc/stat, how long the machine's CPUs did not
// run anything (idle, iowait and steal, in seconds, all CPUs together) and
// how many CPUs it counts.
func machineCPU() (notRunning float64, cpus int) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	return statNotRunning(string(b))
}

// statNotRunning reads /proc/stat: the "cpu" line's idle, iowait and
// steal (fields 4, 5 and 8: user nice system idle iowait irq softirq
// steal guest guest_nice) and the number of "cpuN" lines.
//
// Busy time is not read from the busy fields. On a tickless kernel with
// tick-based CPU accounting (CONFIG_NO_HZ_IDLE with
// CONFIG_TICK_CPU_ACCOUNTING, as on this project's VM) user and system
// time are sampled by the tick, and the tick stops while a CPU idles: a
// burst of work shorter than a tick between two idle periods — a wallet
// call's hops at a light load — is charged to idle when the tick resumes.
// At 250 calls/s the busy fields showed 0.06 cores while the processes'
// own times (which the kernel keeps exactly) added up to 0.36. Idle and
// iowait are measured exactly in that mode (the nohz idle clock), so the
// machine's busy time is its CPUs' wall-clock time less them, and less
// steal: time the hypervisor gave another machine.
func statNotRunning(stat string) (notRunning float64, cpus int) {
	for _, line := range strings.Split(stat, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case f[0] == "cpu":
			for i, v := range f[1:] {
				if i == 3 || i == 4 || i == 7 { // idle, iowait, steal
					n, _ := strconv.ParseFloat(v, 64)
					notRunning += n
				}
			}
		case strings.HasPrefix(f[0], "cpu"):
			cpus++
		}
	}
	return notRunning / userHZ, cpus
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// groupTracker follows the CPU time of a group of processes over a span,
// polling /proc often enough to catch short-lived ones (pgbench's
// backends end with pgbench): each process counts from its first reading
// (zero if it started after the span began) to its last.
type groupTracker struct {
	match       func(string) bool
	base, last  map[int]float64
	initialized bool
}

func newGroupTracker(match func(string) bool) *groupTracker {
	return &groupTracker{match: match, base: map[int]float64{}, last: map[int]float64{}}
}

func (g *groupTracker) poll() {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		if _, known := g.last[pid]; !known {
			cl, err := os.ReadFile(d + "/cmdline")
			if err != nil || len(cl) == 0 || !g.match(string(bytes.ReplaceAll(cl, []byte{0}, []byte{' '}))) {
				continue
			}
		}
		b, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		v, err := statCPU(b)
		if err != nil {
			continue
		}
		if _, known := g.last[pid]; !known {
			if g.initialized {
				g.base[pid] = 0 // born during the span
			} else {
				g.base[pid] = v
			}
		}
		g.last[pid] = v
	}
	g.initialized = true
}

func (g *groupTracker) total() float64 {
	var t float64
	for pid, v := range g.last {
		t += max(v-g.base[pid], 0)
	}
	return t
}

// cpuSpan measures CPU use over a span: call stop at its end.
type cpuSpan struct {
	start, end               cpuSample
	pgBench, pgShared, kafka *groupTracker
	done                     chan struct{}
	stopped                  chan struct{}
}

type cpuSample struct {
	at            time.Time
	service, self float64
	notRunning    float64 // seconds no CPU ran anything (machineCPU)
	cpus          int
	load          string
}

type cpuWatch struct {
	pid int
	db  string
}

func (w cpuWatch) sample() cpuSample {
	s := cpuSample{at: time.Now(), load: loadAvg()}
	if w.pid > 0 {
		s.service, _ = cpuSeconds(w.pid)
	}
	s.self, _ = cpuSeconds(os.Getpid())
	s.notRunning, s.cpus = machineCPU()
	return s
}

// begin starts a span; the process groups are polled every 250 ms.
func (w cpuWatch) begin() *cpuSpan {
	sp := &cpuSpan{pgBench: newGroupTracker(postgresOf(w.db)), pgShared: newGroupTracker(postgresShared),
		kafka: newGroupTracker(kafkaBroker), done: make(chan struct{}), stopped: make(chan struct{})}
	sp.poll()
	sp.start = w.sample()
	go func() {
		defer close(sp.stopped)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-sp.done:
				return
			case <-t.C:
				sp.poll()
			}
		}
	}()
	return sp
}

func (sp *cpuSpan) poll() {
	sp.pgBench.poll()
	sp.pgShared.poll()
	sp.kafka.poll()
}

// stop ends the span and returns the CPU used in it.
func (sp *cpuSpan) stop(w cpuWatch) CPUUse {
	close(sp.done)
	<-sp.stopped
	sp.poll()
	sp.end = w.sample()
	a, b := sp.start, sp.end
	secs := b.at.Sub(a.at).Seconds()
	if secs <= 0 {
		return CPUUse{}
	}
	u := CPUUse{Service: max(b.service-a.service, 0) / secs, LoadGenerator: max(b.self-a.self, 0) / secs,
		PostgresBench: sp.pgBench.total() / secs, PostgresOwn: sp.pgShared.total() / secs, Kafka: sp.kafka.total() / secs,
		Cores: runtime.NumCPU(), LoadStart: a.load, LoadEnd: b.load}
	if a.cpus > 0 && a.cpus == b.cpus {
		u.MachineBusy = max(float64(a.cpus)-(b.notRunning-a.notRunning)/secs, 0)
	}
	return u
}

// CPUUse is CPU time over a span, in cores (1.0 = one core busy all the
// time).
type CPUUse struct {
	Service       float64 `json:"service_cores"`
	LoadGenerator float64 `json:"load_generator_cores"`
	PostgresBench float64 `json:"postgres_backends_cores"` // backends of the benchmark's database
	PostgresOwn   float64 `json:"postgres_shared_cores"`   // WAL writer, checkpointer, ... (the whole cluster's)
	Kafka         float64 `json:"kafka_cores"`
	MachineBusy   float64 `json:"machine_busy_cores"` // everything, other people's work included
	Cores         int     `json:"cores"`
	LoadStart     string  `json:"load_average_start"`
	LoadEnd       string  `json:"load_average_end"`
}
