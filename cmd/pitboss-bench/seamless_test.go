package main

import (
	"testing"
	"time"
)

func TestParseOpCall(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		line string
		want opCall
		ok   bool
	}{
		{"a wallet call", `time=2026-11-29T00:29:05.007Z level=INFO msg=call method=POST path=/players/bench-player-1/transactions ` +
			`call="WITHDRAW bench-player-1" status=200 fault="" outcome=answered correlation=benchX-b-1a took=5.417ms`,
			opCall{correlation: "benchX-b-1a", took: 5417 * time.Microsecond, status: "200"}, true},
		{"a quoted correlation", `time=x level=INFO msg=call status=500 fault=5xx outcome="not applied" correlation="a b\"c" took=1.2s`,
			opCall{correlation: `a b"c`, took: 1200 * time.Millisecond, status: "500"}, true},
		{"an admin call", `time=x level=INFO msg=admin method=POST path=/_sim/players`, opCall{}, false},
		{"no took", `time=x level=INFO msg=call status=200 correlation=c`, opCall{}, false},
	}
	for _, tt := range tests {
		got, ok := parseOpCall(tt.line)
		if ok != tt.ok || got != tt.want {
			t.Errorf("%s: got %+v %v, want %+v %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

// TestJoinSubtractsTheOperatorsTime: a call's added latency is its
// latency less its wallet call's time, found by its id or (a refund) its
// alternative id; a call without one is unmatched, not counted.
func TestJoinSubtractsTheOperatorsTime(t *testing.T) {
	t.Parallel()
	var st SeamlessStep
	st.join([]callLatency{
		{id: "b-1", us: 7000},
		{id: "rb-2", alt: "refund@b-2", us: 9000},
		{id: "w-3", us: 8000},
	}, []opCall{
		{correlation: "b-1", took: 5 * time.Millisecond, status: "200"},
		{correlation: "refund@b-2", took: 6 * time.Millisecond, status: "200"},
		{correlation: "x", took: time.Millisecond, status: "500"},
	})
	if st.Matched != 2 || st.Unmatched != 1 || st.OperatorFailures != 1 {
		t.Fatalf("matched %d, unmatched %d, failures %d; want 2, 1, 1", st.Matched, st.Unmatched, st.OperatorFailures)
	}
	// The histograms keep three significant digits.
	near := func(got, want float64) bool { return got >= want && got <= want*1.001 }
	if st.Added.Count != 2 || !near(st.Added.P50, 2) || !near(st.Added.Max, 3) {
		t.Fatalf("added %+v, want 2 calls of 2 and 3 ms", st.Added)
	}
	if !near(st.Operator.P50, 5) || !near(st.Operator.Max, 6) {
		t.Fatalf("operator %+v, want 5 and 6 ms", st.Operator)
	}
}

func TestLedgerSideRatios(t *testing.T) {
	t.Parallel()
	l := WalletStep{CallsPerSec: 1000, CPU: CPUUse{Service: 0.2}, Latency: map[string]Latency{"all": {P50: 4, P99: 10}}}
	s := SeamlessStep{Added: Latency{P50: 2, P99: 12}, ServiceUsPerCall: 260, NetUsPerCall: 250}
	got := ledgerSide(s, l, 0.01)
	if got.ServiceUsPerCall != 200 || got.NetUsPerCall != 190 {
		t.Fatalf("ledger µs per call %v (net %v), want 200 (190)", got.ServiceUsPerCall, got.NetUsPerCall)
	}
	if got.AddedP50 != 0.5 || got.AddedP99 != 1.2 || got.CPU != 1.3 {
		t.Fatalf("ratios %+v, want 0.5, 1.2, 1.3", got)
	}
	targets := seamlessTargets(Report{Write: &WriteReport{Seamless: &SeamlessReport{Steps: []SeamlessStep{{
		Concurrency: 16, Step: WalletStep{Mode: "closed", Concurrency: 16}, Matched: 1, Ledger: got}}}}})
	if len(targets) != 2 || targets[0].Met || !targets[1].Met {
		t.Fatalf("targets %+v: want the latency missed (p99 1.2×) and the CPU met (1.3×)", targets)
	}
}
