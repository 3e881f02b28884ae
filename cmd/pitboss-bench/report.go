package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Target is one of the goals, judged on this run.
type Target struct {
	Name string `json:"name"`
	Want string `json:"want"`
	Got  string `json:"got"`
	Met  bool   `json:"met"`
	// Miss says by how much a missed target was missed.
	Miss string `json:"miss,omitempty"`
}

func (r Report) step(c int) *WalletStep {
	if r.Write == nil {
		return nil
	}
	for i := range r.Write.Steps {
		if s := &r.Write.Steps[i]; s.Mode == "closed" && s.Concurrency == c {
			return s
		}
	}
	return nil
}

func (r Report) query(name string) *QueryResult {
	if r.Read == nil {
		return nil
	}
	for i := range r.Read.Queries {
		if r.Read.Queries[i].Name == name {
			return &r.Read.Queries[i]
		}
	}
	return nil
}

// evaluate judges the targets of issue 7 (docs/benchmarks.md), and the
// seamless step's of issue 34, on rep.
func evaluate(rep Report) []Target {
	var out []Target
	atMost := func(name string, got, limit float64, unit string) {
		t := Target{Name: name, Want: fmt.Sprintf("≤ %s %s", num(limit), unit), Got: fmt.Sprintf("%s %s", num(got), unit),
			Met: got <= limit}
		if !t.Met {
			t.Miss = fmt.Sprintf("%.1f× the limit (+%s %s)", got/limit, num(got-limit), unit)
		}
		out = append(out, t)
	}
	atLeast := func(name string, got, floor float64, unit string) {
		t := Target{Name: name, Want: fmt.Sprintf("≥ %s %s", num(floor), unit), Got: fmt.Sprintf("%s %s", num(got), unit),
			Met: got >= floor}
		if !t.Met {
			t.Miss = fmt.Sprintf("%.0f %% of the floor (−%s %s)", 100*got/floor, num(floor-got), unit)
		}
		out = append(out, t)
	}
	c := 64
	if rep.Write != nil && len(rep.Config.Steps) > 0 {
		c = closest(rep.Config.Steps, 64)
	}
	if s := rep.step(c); s != nil {
		if s.Pgbench != nil {
			atLeast(fmt.Sprintf("wallet calls/s at %d ÷ pgbench insert tps", c), s.VsPgbench, 1.0, "×")
		}
		atMost(fmt.Sprintf("wallet p99 at %d", c), s.Latency["all"].P99, 25, "ms")
		atMost(fmt.Sprintf("relay lag p99 at %d", c), s.Lag.Relay.P99ms, 500, "ms")
		atMost(fmt.Sprintf("projection lag p99 at %d (balances)", c), s.Lag.ProjectionBalances.P99ms, 1000, "ms")
	}
	// Issue 38: the cost of a call where operators live.
	if rep.Write != nil {
		for _, s := range rep.Write.Steps {
			if s.Mode != "moderate" || s.CallsPerSec <= 0 {
				continue
			}
			n := stepName(s)
			atMost(n+": system CPU per call (machine less load generator)", s.systemMsPerCall(), 1.0, "ms")
			atMost(n+": wallet p99", s.Latency["all"].P99, 20, "ms")
			atMost(n+": relay lag p99", s.Lag.Relay.P99ms, 100, "ms")
			atMost(n+": projection lag p99 (balances)", s.Lag.ProjectionBalances.P99ms, 250, "ms")
		}
	}
	if s := rep.step(1); s != nil && s.CallsPerSec > 0 {
		atMost("closed 1: system CPU per call (machine less load generator)", s.systemMsPerCall(), 1.5, "ms")
		atMost("wallet p99 at 1", s.Latency["all"].P99, 10, "ms")
	}
	if rep.Write != nil && rep.Write.PeakRSSMB > 0 {
		atMost("service peak RSS", rep.Write.PeakRSSMB, 256, "MB")
	}
	if rep.Read != nil {
		worst, worstName := 0.0, ""
		for _, q := range rep.Read.Queries {
			if strings.HasPrefix(q.Name, "transactions") && q.Latency.P99 > worst {
				worst, worstName = q.Latency.P99, q.Name
			}
		}
		if worstName != "" {
			atMost(fmt.Sprintf("transactions page p99, any depth (worst: %s)", worstName), worst, 10, "ms")
		}
		if q := rep.query("wallet balance (player)"); q != nil {
			atMost("balance p99", q.Latency.P99, 5, "ms")
		}
		if q := rep.query("GGR report, 30 days"); q != nil {
			atMost("30-day GGR p99", q.Latency.P99, 50, "ms")
		}
		// Issue 21: the whole command counts (swap included), within 1 GB.
		if r := rep.Read.Replay; r.EventsPerSec > 0 {
			atLeast("replay, whole command", r.WallPerSec, 50_000, "events/s")
			atMost("replay peak RSS", r.PeakRSSMB, 1024, "MB")
		}
		if v := rep.Read.Verify; v.OK {
			atLeast("verify, whole command", v.EventsPerSec, 100_000, "events/s")
			atMost("verify peak RSS", v.PeakRSSMB, 1024, "MB")
		}
		// Issue 35: the day's events, whatever the ledger's size.
		if v := rep.Read.Since; v != nil && v.OK {
			atLeast("verify --since, the day's events, whole command", v.EventsPerSec, 100_000, "events/s")
		}
	}
	return append(out, seamlessTargets(rep)...)
}

// num formats a measurement with sensible precision.
func num(f float64) string {
	switch a := max(f, -f); {
	case a >= 1000:
		return fmt.Sprintf("%.0f", f)
	case a >= 100:
		return fmt.Sprintf("%.0f", f)
	case a >= 10:
		return fmt.Sprintf("%.1f", f)
	default:
		return fmt.Sprintf("%.2f", f)
	}
}

func markdown(rep Report) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	m := rep.Machine
	w("# Pitboss benchmark, %s\n\n", rep.Started.Format("2006-01-02 15:04 UTC"))
	mode := "full"
	if rep.Config.Quick {
		mode = "quick (BENCH_QUICK=1)"
	}
	w("Mode: %s; steps of %s; took %s.\n\n", mode, rep.Config.Duration, rep.Finished.Sub(rep.Started).Round(time.Second))
	w("Machine: %d cores (%s), %.1f GB RAM, Linux %s, %s, PostgreSQL %s. Load average (1, 5, 15 min) at the start %s, at the end %s. "+
		"Service, Postgres, Kafka and the load generator share the machine", m.Cores, m.CPUModel, m.MemoryGB, m.Kernel, m.Go,
		m.Postgres, m.LoadStart, m.LoadEnd)
	w(" — and so does anything else running on it: the load average shows how much.\n\n")

	if len(rep.Targets) > 0 {
		w("## Targets\n\n| target | wanted | measured | met | miss |\n|---|---|---|---|---|\n")
		for _, t := range rep.Targets {
			met := "yes"
			if !t.Met {
				met = "**no**"
			}
			w("| %s | %s | %s | %s | %s |\n", t.Name, t.Want, t.Got, met, t.Miss)
		}
		w("\n")
	}

	if wr := rep.Write; wr != nil {
		proto := "provider protocol"
		if p := rep.Config.Protocol; p != "" && p != "pitboss" {
			proto = "the " + p + " wallet protocol (BENCH_PROTOCOL)"
		}
		if rep.Config.Roles == "" {
			w("## Wallet (%s over HTTP, all roles in one `pitboss serve`)\n\n", proto)
		} else {
			w("## Wallet (%s over HTTP, `pitboss serve --roles %s` only)\n\n", proto, rep.Config.Roles)
		}
		w("%d players preloaded through the API in %.1f s. A spin is a bet, then a win (or, 1 in 20, a rollback). "+
			"Closed loop: N workers, each spinning its own players back to back. Open loop: spins due at a fixed rate, "+
			"latency counted from the due time. pgbench: one event-shaped row per transaction, same Postgres, same duration, "+
			"at most %d connections.\n\n", wr.Players, wr.PreloadSeconds, rep.Config.PgbenchMaxClients)
		w("| load | calls/s | p50 ms | p99 ms | p99.9 ms | max ms | errors | pgbench tps (clients) | pgbench p99 ms | calls/s ÷ tps |\n")
		w("|---|---|---|---|---|---|---|---|---|---|\n")
		for _, s := range wr.Steps {
			l := s.Latency["all"]
			pg, pgp99, ratio := "", "", ""
			if s.Pgbench != nil {
				pg = fmt.Sprintf("%.0f (%d)", s.Pgbench.TPS, s.Pgbench.Clients)
				pgp99 = num(s.Pgbench.P99ms)
				ratio = fmt.Sprintf("%.2f", s.VsPgbench)
			}
			w("| %s | %.0f | %s | %s | %s | %s | %s | %s | %s | %s |\n", stepName(s), s.CallsPerSec, num(l.P50), num(l.P99),
				num(l.P999), num(l.Max), errorsText(s.Errors), pg, pgp99, ratio)
		}
		w("\n### Lag and group commit\n\n")
		w("| load | relay lag p50 / p99 ms | projection lag (balances) p50 / p99 ms | (history) p50 / p99 ms | not seen | oldest write tx in cluster s | ops per batch | batch ms |\n")
		w("|---|---|---|---|---|---|---|---|\n")
		for _, s := range wr.Steps {
			miss := s.Lag.Relay.Missing + s.Lag.ProjectionBalances.Missing + s.Lag.ProjectionHistory.Missing
			w("| %s | %s / %s | %s / %s | %s / %s | %d | %s | %.1f | %s |\n", stepName(s), num(s.Lag.Relay.P50ms), num(s.Lag.Relay.P99ms),
				num(s.Lag.ProjectionBalances.P50ms), num(s.Lag.ProjectionBalances.P99ms), num(s.Lag.ProjectionHistory.P50ms),
				num(s.Lag.ProjectionHistory.P99ms), miss, num(s.Lag.OldestXact), s.Ledger.OpsPerBatch, num(s.Ledger.MeanBatchMs))
		}
		w("\n### CPU (cores busy; %d cores in all) and memory\n\n", m.Cores)
		w("| load | service | service µs per call | its Postgres backends | Postgres shared | Kafka | load generator | whole machine | load average | service RSS MB |\n")
		w("|---|---|---|---|---|---|---|---|---|---|\n")
		for _, s := range wr.Steps {
			c := s.CPU
			perCall := "–"
			if us, _ := usPerCall(s, 0); us > 0 {
				perCall = fmt.Sprintf("%.0f", us)
			}
			w("| %s | %.2f | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %s | %.0f |\n", stepName(s), c.Service, perCall, c.PostgresBench,
				c.PostgresOwn, c.Kafka, c.LoadGenerator, c.MachineBusy, c.LoadEnd, s.RSSMB)
		}
		for _, s := range wr.Steps {
			if s.Pgbench != nil {
				c := s.Pgbench.CPU
				w("| pgbench %d | – | – | %.2f | %.2f | %.2f | – | %.2f | %s | – |\n", s.Pgbench.Clients, c.PostgresBench, c.PostgresOwn,
					c.Kafka, c.MachineBusy, c.LoadEnd)
			}
		}
		w("\n### CPU per wallet call (µs), by component\n\n")
		w("System: the machine less the load generator (what issue 38 targets; other work on the box counts too); own: the service, its Postgres backends, Postgres's shared processes and Kafka.\n\n")
		w("| load | calls/s | service | its Postgres backends | Postgres shared | Kafka | load generator | own | system |\n")
		w("|---|---|---|---|---|---|---|---|---|\n")
		for _, s := range wr.Steps {
			if s.CallsPerSec <= 0 {
				continue
			}
			c, us := s.CPU, 1e6/s.CallsPerSec
			w("| %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f |\n", stepName(s), s.CallsPerSec, c.Service*us, c.PostgresBench*us,
				c.PostgresOwn*us, c.Kafka*us, c.LoadGenerator*us, s.ownMsPerCall()*1e3, s.systemMsPerCall()*1e3)
		}
		for _, s := range wr.Steps {
			moderateTables(w, s)
		}
		w("\nService peak RSS (VmHWM): %.0f MB.\n\n", wr.PeakRSSMB)
		if len(wr.Profile) > 0 {
			w("### CPU profile of the service at %d (`go tool pprof -top`)\n\n```\n", wr.ProfileStep)
			for i, l := range wr.Profile {
				if i >= 40 {
					break
				}
				w("%s\n", l)
			}
			w("```\n\n")
		}
		if wr.Seamless != nil {
			b.WriteString(seamlessMarkdown(rep))
		}
	}

	if rr := rep.Read; rr != nil {
		w("## Read side (%d generated events)\n\n", rr.Events)
		w("Generated and copied in %s (copy %s, index build %s): %.0f events/s. ",
			rr.Seed.Took.Round(time.Second), rr.Seed.Copy.Round(time.Second), rr.Seed.Index.Round(time.Second), rr.SeedEventsPerS)
		if rr.Replay.EventsPerSec > 0 {
			w("`pitboss replay --full --swap`: %.1f s in all, %.0f events/s by its own count (read, apply, write the shadow), %.0f events/s over the whole command; peak RSS %.0f MB (budget 512 MB unless PITBOSS_REPLAY_MEMORY says otherwise).\n\n",
				rr.Replay.Seconds, rr.Replay.EventsPerSec, rr.Replay.WallPerSec, rr.Replay.PeakRSSMB)
		} else {
			w("`pitboss replay --full --swap` did not complete (see Failures), so no read-model query was timed.\n\n")
		}
		if v := rr.Verify; v.OK {
			w("`pitboss verify` (every check, the read models rebuilt in a scratch schema and compared): %.1f s, %.0f events/s over the whole command; peak RSS %.0f MB.\n\n",
				v.Seconds, v.EventsPerSec, v.PeakRSSMB)
		}
		if v := rr.Since; v != nil && v.OK {
			w("The verifiable log built over the ledger in %.1f s (%.0f events/s); `pitboss verify --since` a checkpoint signed %d events before the head: %.2f s, %.0f events/s over the whole command; peak RSS %.0f MB.\n\n",
				v.BuildSeconds, v.BuildEventsPerSec, v.DayEvents, v.Seconds, v.EventsPerSec, v.PeakRSSMB)
		}
		if len(rr.Sizes) > 0 {
			names := make([]string, 0, len(rr.Sizes))
			for n := range rr.Sizes {
				names = append(names, n)
			}
			sort.Strings(names)
			var parts []string
			for _, n := range names {
				parts = append(parts, fmt.Sprintf("%s %.0f MB", n, rr.Sizes[n]))
			}
			w("Sizes (with indexes): %s.\n\n", strings.Join(parts, ", "))
		}
		w("| query | p50 ms | p99 ms | max ms | calls | errors | note |\n|---|---|---|---|---|---|---|\n")
		for _, q := range rr.Queries {
			w("| %s | %s | %s | %s | %d | %s | %s |\n", q.Name, num(q.Latency.P50), num(q.Latency.P99), num(q.Latency.Max),
				q.Latency.Count, errorsText(q.Errors), q.Note)
		}
		w("\n")
	}
	if len(rep.Errors) > 0 {
		w("## Failures\n\n")
		for _, e := range rep.Errors {
			w("- %s\n", e)
		}
		w("\n")
	}
	w("Charts: throughput.svg, latency.svg")
	if rep.Read != nil {
		w(", read.svg")
	}
	w(". Raw numbers: results.json.\n")
	return b.String()
}

func stepName(s WalletStep) string {
	switch s.Mode {
	case "open":
		return fmt.Sprintf("open %.0f/s", s.TargetRate)
	case "moderate":
		return fmt.Sprintf("moderate %.0f/s", s.TargetRate)
	}
	return fmt.Sprintf("closed %d", s.Concurrency)
}

func errorsText(e map[string]int64) string {
	if len(e) == 0 {
		return "0"
	}
	keys := make([]string, 0, len(e))
	for k := range e {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %d", k, e[k]))
	}
	return strings.Join(parts, "; ")
}
