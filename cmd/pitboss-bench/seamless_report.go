package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// seamlessTargets judges issue 34's targets at every step: the latency
// Pitboss adds on top of the operator's time is no worse than a
// ledger-mode call's own latency (p50 and p99), and the service's CPU per
// call is within 30 % of a ledger-mode call's.
func seamlessTargets(rep Report) []Target {
	if rep.Write == nil || rep.Write.Seamless == nil {
		return nil
	}
	var out []Target
	for _, s := range seamlessRows(rep.Write.Seamless) {
		l := s.Ledger
		if l == nil || s.Matched == 0 {
			continue
		}
		at := strings.TrimPrefix(stepName(s.Step), "closed ")
		t := Target{Name: fmt.Sprintf("seamless at %s: latency added p50 / p99", at),
			Want: fmt.Sprintf("≤ ledger-mode call's %s / %s ms", num(l.Latency.P50), num(l.Latency.P99)),
			Got:  fmt.Sprintf("%s / %s ms", num(s.Added.P50), num(s.Added.P99)),
			Met:  l.AddedP50 <= 1 && l.AddedP99 <= 1}
		if !t.Met {
			t.Miss = fmt.Sprintf("%.2f× / %.2f× the ledger-mode call's", l.AddedP50, l.AddedP99)
		}
		out = append(out, t)
		t = Target{Name: fmt.Sprintf("seamless at %s: service CPU per call", at),
			Want: fmt.Sprintf("≤ 1.3 × ledger-mode's %.0f µs", l.ServiceUsPerCall),
			Got:  fmt.Sprintf("%.0f µs (%.2f×; net of idle %.2f×)", s.ServiceUsPerCall, l.CPU, l.NetCPU),
			Met:  l.CPU <= 1.3}
		if !t.Met {
			t.Miss = fmt.Sprintf("+%.0f %% (limit +30 %%)", 100*(l.CPU-1))
		}
		out = append(out, t)
	}
	return out
}

// seamlessRows are the closed-loop steps and the rate-matched open step.
func seamlessRows(sr *SeamlessReport) []SeamlessStep {
	rows := slices.Clone(sr.Steps)
	if sr.RateMatched != nil {
		rows = append(rows, *sr.RateMatched)
	}
	return rows
}

// seamlessMarkdown is the report's seamless section.
func seamlessMarkdown(rep Report) string {
	sr := rep.Write.Seamless
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("## Seamless step (the client's own wallet: `pitboss operator-sim --protocol %s --latency %s`)\n\n",
		sr.OperatorProtocol, time.Duration(sr.OperatorLatency*1e6))
	w("The same service, after the ledger-mode steps: the sandbox client set seamless over the simulator, its %d players "+
		"funded there and launched again with the simulator's session tokens (%.1f s), a 2 s warm-up, then the same "+
		"closed-loop steps. *Operator* is the simulator's own time per wallet call, from its log (headers read to answer "+
		"written, the added latency included); *added* is, per call, the call's latency minus that time, joined by the "+
		"transaction id the call carries as X-Correlation-ID: loopback HTTP both ways, Pitboss's own work and waiting for "+
		"the machine's cores. Service µs per call: the service's CPU ÷ its calls; *net* less its idle CPU "+
		"(%.3f cores with no load). The simulator runs on the same cores. A closed-loop step of N runs fewer seamless calls a "+
		"second than the ledger-mode step of N (each holds the operator's time more), so the work done per batch rather than "+
		"per call (group commit, relay, projector) is shared by fewer calls; the open-loop step runs one rate in both modes "+
		"(seamless first, then the client back in ledger mode with its players launched again), which compares the call "+
		"paths alone.\n\n", sr.Players, sr.SetupSeconds, sr.IdleServiceCores)
	w("| load | calls/s | p50 / p99 ms | operator p50 / p99 ms | **added** p50 / p99 ms | ledger-mode calls/s | ledger-mode p50 / p99 ms | added ÷ ledger p50 / p99 | errors |\n")
	w("|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range seamlessRows(sr) {
		l, lt := s.Step.Latency["all"], "– | – | –"
		if s.Ledger != nil {
			lt = fmt.Sprintf("%.0f | %s / %s | %.2f / %.2f", s.Ledger.CallsPerSec, num(s.Ledger.Latency.P50),
				num(s.Ledger.Latency.P99), s.Ledger.AddedP50, s.Ledger.AddedP99)
		}
		errs := errorsText(s.Step.Errors)
		if s.Unmatched > 0 || s.OperatorFailures > 0 {
			errs += fmt.Sprintf("; unmatched %d, operator non-200 %d", s.Unmatched, s.OperatorFailures)
		}
		w("| %s | %.0f | %s / %s | %s / %s | %s / %s | %s | %s |\n", stepName(s.Step), s.Step.CallsPerSec, num(l.P50),
			num(l.P99), num(s.Operator.P50), num(s.Operator.P99), num(s.Added.P50), num(s.Added.P99), lt, errs)
	}
	w("\n| load | service cores | **service µs per call** (net) | ledger-mode µs per call (net) | ratio (net) | operator-sim cores | whole machine | load average |\n")
	w("|---|---|---|---|---|---|---|---|\n")
	for _, s := range seamlessRows(sr) {
		lt := "– | –"
		if s.Ledger != nil {
			lt = fmt.Sprintf("%.0f (%.0f) | %.2f (%.2f)", s.Ledger.ServiceUsPerCall, s.Ledger.NetUsPerCall, s.Ledger.CPU, s.Ledger.NetCPU)
		}
		w("| %s | %.2f | %.0f (%.0f) | %s | %.2f | %.2f | %s |\n", stepName(s.Step), s.Step.CPU.Service, s.ServiceUsPerCall,
			s.NetUsPerCall, lt, s.OperatorSimCores, s.Step.CPU.MachineBusy, s.Step.CPU.LoadEnd)
	}
	w("\n")
	if len(sr.Profile) > 0 {
		w("### CPU profile of the service, seamless, at %d (`go tool pprof -top`)\n\n```\n", sr.ProfileStep)
		for i, l := range sr.Profile {
			if i >= 40 {
				break
			}
			w("%s\n", l)
		}
		w("```\n\n")
	}
	return b.String()
}
