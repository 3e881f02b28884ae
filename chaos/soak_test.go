package chaos_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/chaos/stack"
)

// rssKiB is a process's resident set size from /proc.
func rssKiB(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return -1
}

// soak measures the peak rate for 15 s, then runs at half of it for d,
// logging per minute the RSS of each process, the p99 latency of the
// wallet calls and the relay's and read models' lag; then the same checks
// as after a fault.
func (e *env) soak(t *testing.T, d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d+10*time.Minute)
	defer cancel()
	rate, workers := e.load.Rate, e.load.Workers
	defer func() { e.load.Rate, e.load.Workers = rate, workers }()

	e.load.Rate, e.load.Workers = 0, 16
	start := time.Now()
	stop := e.load.Start(ctx, "peak")
	time.Sleep(15 * time.Second)
	stop()
	peakStats := stack.Stats(e.load.Calls(), "peak")
	peak := float64(peakStats.Acked) / time.Since(start).Seconds()
	e.load.Rate, e.load.Workers = peak/2, 8
	t.Logf("peak: %.0f acknowledged calls/s (p99 %v); soaking at %.0f calls/s for %v", peak, peakStats.P99, peak/2, d)

	smp := e.startSampler()
	begin := time.Now()
	stop = e.load.Start(ctx, "soak")
	type minute struct {
		n                       int
		rssMain, rssFwd, rssPrj int64
		p99                     time.Duration
		calls                   int
		relayLag, modelLag      int64
	}
	var mins []minute
	for m := 1; time.Since(begin) < d; m++ {
		time.Sleep(time.Until(begin.Add(time.Duration(m) * time.Minute)))
		now := time.Now()
		var lat []time.Duration
		for _, c := range e.load.Calls() {
			if c.Phase == "soak" && c.Outcome.Finished.After(now.Add(-time.Minute)) && !c.Outcome.Finished.After(now) {
				lat = append(lat, c.Outcome.LastAttemptLatency)
			}
		}
		smp.mu.Lock()
		samples := append([]sample(nil), smp.samples...)
		smp.mu.Unlock()
		mn := minute{n: m, rssMain: rssKiB(e.main.Pid()), rssFwd: rssKiB(e.fwd.Pid()), rssPrj: rssKiB(e.proj.Pid()),
			p99: stack.Percentile(lat, 0.99), calls: len(lat),
			relayLag: lagAt(samples, now, func(s sample) int64 { return s.relay }),
			modelLag: lagAt(samples, now, func(s sample) int64 { return s.models })}
		mins = append(mins, mn)
		t.Logf("soak minute %d: %d calls, p99 %v; RSS api+relay %d MiB, forwarder %d MiB, projector %d MiB; lag: relay %d events, read models %d events",
			m, mn.calls, mn.p99.Round(time.Millisecond), mn.rssMain/1024, mn.rssFwd/1024, mn.rssPrj/1024, mn.relayLag, mn.modelLag)
	}
	stop()
	smp.finish()
	st := stack.Stats(e.load.Calls(), "soak")
	if len(mins) > 0 {
		a, b := mins[0], mins[len(mins)-1]
		t.Logf("\nsoak at %.0f calls/s for %v: %d calls, %d acked\n| | minute %d | minute %d |\n|---|---|---|\n| RSS api+relay (MiB) | %d | %d |\n| RSS forwarder (MiB) | %d | %d |\n| RSS projector (MiB) | %d | %d |\n| p99 wallet call | %v | %v |\n| relay lag (events) | %d | %d |\n| read-model lag (events) | %d | %d |",
			peak/2, d, st.Sent, st.Acked, a.n, b.n, a.rssMain/1024, b.rssMain/1024, a.rssFwd/1024, b.rssFwd/1024,
			a.rssPrj/1024, b.rssPrj/1024, a.p99.Round(time.Millisecond), b.p99.Round(time.Millisecond),
			a.relayLag, b.relayLag, a.modelLag, b.modelLag)
	}
	// The same proof as after a fault, over everything so far.
	r := e.run(t, fault{name: "after soak", inject: func(context.Context, *testing.T, *env) error { return nil }})
	t.Log("\n" + table([]row{r}))
}
