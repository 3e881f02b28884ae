package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The seamless step (issue 34, docs/benchmarks.md#seamless-wallet): after
// the ledger-mode steps, on the same running service, the sandbox client
// is set seamless (PUT /admin/v1/clients/sandbox/wallet) over `pitboss
// operator-sim` answering every call after a fixed latency; the same
// players are funded there and launched again with its session tokens,
// and the same closed-loop steps run. Per step: the ledger-mode step's
// figures, the latency Pitboss adds on top of the operator's time (each
// call's latency minus the time the simulator logged for the wallet call
// it caused, joined by transaction id = correlation id), and the
// service's CPU per call, side by side with the ledger-mode step's.

// SeamlessStep is one closed-loop step of the seamless run.
type SeamlessStep struct {
	Concurrency int        `json:"concurrency"`
	Step        WalletStep `json:"step"`
	// Operator is the simulator's own time per wallet call (its log's
	// took, the added latency included); Added, per call, the call's
	// latency minus its wallet call's time.
	Operator Latency `json:"operator_latency"`
	Added    Latency `json:"added_latency"`
	// Matched calls had their wallet call found in the simulator's log;
	// Unmatched had none (none expected: every call sends one).
	Matched   int64 `json:"matched_calls"`
	Unmatched int64 `json:"unmatched_calls"`
	// OperatorFailures are wallet calls the simulator answered with
	// another status than 200.
	OperatorFailures int64   `json:"operator_failures"`
	OperatorSimCores float64 `json:"operator_sim_cores"`
	// ServiceUsPerCall is the service's CPU per successful call; Net
	// the same less the service's idle CPU (what it burns with no load,
	// SeamlessReport.IdleServiceCores).
	ServiceUsPerCall float64     `json:"service_us_per_call"`
	NetUsPerCall     float64     `json:"service_us_per_call_net_of_idle"`
	Ledger           *LedgerSide `json:"ledger_mode,omitempty"`
}

// LedgerSide is the ledger-mode step of the same concurrency, and the
// seamless step's ratios to it.
type LedgerSide struct {
	CallsPerSec      float64 `json:"calls_per_second"`
	Latency          Latency `json:"latency"`
	ServiceUsPerCall float64 `json:"service_us_per_call"`
	NetUsPerCall     float64 `json:"service_us_per_call_net_of_idle"`
	// AddedP50, AddedP99: the seamless step's added latency ÷ the
	// ledger-mode call's latency, at p50 and p99 (the target: ≤ 1).
	AddedP50 float64 `json:"added_p50_over_ledger_p50"`
	AddedP99 float64 `json:"added_p99_over_ledger_p99"`
	// CPU, NetCPU: seamless ÷ ledger-mode service CPU per call (the
	// target: ≤ 1.3).
	CPU    float64 `json:"cpu_per_call_ratio"`
	NetCPU float64 `json:"net_cpu_per_call_ratio"`
}

// SeamlessReport is the seamless step's outcome.
type SeamlessReport struct {
	OperatorProtocol string         `json:"operator_protocol"`
	OperatorLatency  float64        `json:"operator_added_latency_ms"`
	Players          int            `json:"players"`
	SetupSeconds     float64        `json:"setup_seconds"`
	IdleServiceCores float64        `json:"idle_service_cores"`
	Steps            []SeamlessStep `json:"steps"`
	// RateMatched is an open-loop step at one rate in both modes (the
	// seamless one first, then the client back in ledger mode): the same
	// calls a second, so the per-batch work behind the calls (group
	// commit, relay, projector, the scheduler's idle spinning) is shared by
	// as many calls in both, and the CPU per call compares the call paths.
	// RateMatchedLedger is its ledger-mode step.
	RateMatched       *SeamlessStep `json:"rate_matched,omitempty"`
	RateMatchedLedger *WalletStep   `json:"rate_matched_ledger_step,omitempty"`
	Profile           []string      `json:"profile_top,omitempty"`
	ProfileStep       int           `json:"profile_step,omitempty"`
}

// seamlessRun is what the seamless step shares with the write benchmark.
type seamlessRun struct {
	cfg    config
	svc    *service
	lw     *lagWatch
	watch  cpuWatch
	wc     *walletClient
	creds  sandboxCreds
	ledger []WalletStep
	logf   func(string, ...any)
}

func runSeamless(ctx context.Context, r seamlessRun) (*SeamlessReport, error) {
	rep := &SeamlessReport{OperatorProtocol: opSimProtocol, OperatorLatency: float64(r.cfg.OperatorLatency) / 1e6,
		Players: r.cfg.Players}
	r.logf("seamless: idle service CPU, 3s")
	span := r.watch.begin()
	select {
	case <-time.After(3 * time.Second):
	case <-ctx.Done():
	}
	rep.IdleServiceCores = span.stop(r.watch).Service
	idle := rep.IdleServiceCores
	r.logf("seamless: pitboss operator-sim --protocol %s --latency %s", opSimProtocol, r.cfg.OperatorLatency)
	sim, err := startOpSim(ctx, r.cfg, r.cfg.OperatorLatency)
	if err != nil {
		return rep, err
	}
	defer func() { _ = sim.stop() }()
	t0 := time.Now()
	players, err := r.setup(ctx, sim)
	if err != nil {
		return rep, err
	}
	rep.SetupSeconds = time.Since(t0).Seconds()
	r.logf("seamless: warm-up, 2s at 16")
	warm := r.wc.closedLoop(ctx, players, 16, 2*time.Second)
	if _, err := r.lw.measure(ctx, warm.answers, 30*time.Second); err != nil {
		return rep, err
	}
	if warm.hist["all"].TotalCount() == 0 {
		return rep, fmt.Errorf("seamless warm-up: no wallet call succeeded: %v", warm.errors)
	}
	r.wc.track = true
	defer func() { r.wc.track = false }()
	profileAt := closest(r.cfg.Steps, 64)
	var best float64
	for _, c := range r.cfg.Steps {
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		r.logf("seamless: closed loop, concurrency %d for %s", c, r.cfg.Duration)
		var prof chan string
		if r.cfg.Profile && c == profileAt && r.svc.pprof != "" {
			prof = make(chan string, 1)
			go func() { prof <- takeProfile(ctx, r.cfg, r.svc, fmt.Sprintf("cpu-seamless-c%d", c)) }()
		}
		st := r.step(ctx, sim, func() *recorder { return r.wc.closedLoop(ctx, players, c, r.cfg.Duration) }, idle)
		st.Concurrency, st.Step.Mode, st.Step.Concurrency = c, "closed", c
		if l := ledgerStep(r.ledger, c); l != nil {
			st.Ledger = ledgerSide(st, *l, idle)
		}
		if prof != nil {
			if top := <-prof; top != "" {
				rep.Profile, rep.ProfileStep = strings.Split(top, "\n"), c
			}
		}
		a := st.Added
		r.logf("seamless: %d: %.0f calls/s (p50 %.1f, p99 %.1f ms); operator p50 %.1f ms; added p50 %.2f, p99 %.2f ms; %.0f µs/call",
			c, st.Step.CallsPerSec, st.Step.Latency["all"].P50, st.Step.Latency["all"].P99, st.Operator.P50, a.P50, a.P99,
			st.ServiceUsPerCall)
		best = max(best, st.Step.CallsPerSec)
		rep.Steps = append(rep.Steps, st)
	}
	rate := r.cfg.SeamlessRate
	if rate <= 0 {
		rate = 0.7 * best
	}
	if rate >= 2 && ctx.Err() == nil {
		if err := r.rateMatched(ctx, rep, sim, players, rate, idle); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// setup funds the players at the simulator, sets the sandbox client
// seamless over it and launches every player again with its token. It
// returns the players with their seamless sessions.
func (r seamlessRun) setup(ctx context.Context, sim *opSim) ([]player, error) {
	r.logf("seamless: fund %d players at the operator, set the client seamless, launch them with session_token", r.cfg.Players)
	players := make([]player, r.cfg.Players)
	tokens := make([]string, len(players))
	err := forEach(ctx, len(players), 32, func(i int) error {
		p := player{id: "bench-player-" + strconv.Itoa(i+1), currency: "EUR"}
		if i%4 == 3 {
			p.currency = "USD"
		}
		players[i] = p
		var err error
		tokens[i], err = sim.fund(ctx, p.id, p.currency, "100000.00")
		return err
	})
	if err != nil {
		return nil, err
	}
	body := map[string]string{"mode": "seamless", "url": sim.base, "protocol": opSimProtocol, "credential": sim.token}
	if err := r.admin().put(ctx, "/admin/v1/clients/sandbox/wallet", body); err != nil {
		return nil, fmt.Errorf("set the sandbox client seamless: %w", err)
	}
	return players, r.launch(ctx, players, tokens)
}

// admin calls the service's admin API.
func (r seamlessRun) admin() operator {
	key := ""
	for _, kv := range r.svc.env {
		if v, ok := strings.CutPrefix(kv, "PITBOSS_ADMIN_TOKEN="); ok {
			key = v
		}
	}
	return operator{http: newHTTPClient(4), base: r.svc.base, key: key}
}

// launch launches every player again (32 at a time) and keeps the new
// session: with its session_token when tokens is not nil (seamless), else
// as a ledger client's launch.
func (r seamlessRun) launch(ctx context.Context, players []player, tokens []string) error {
	op := operator{http: newHTTPClient(32), base: r.svc.base, key: r.creds.key}
	return forEach(ctx, len(players), 32, func(i int) error {
		p := &players[i]
		body := map[string]any{"provider": r.creds.provider, "game_id": r.creds.game, "player_id": p.id, "currency": p.currency}
		if tokens != nil {
			body["session_token"] = tokens[i]
		}
		var launch struct {
			Data struct {
				SessionID string `json:"session_id"`
			} `json:"data"`
		}
		if err := op.post(ctx, "/api/v1/game/launch", body, &launch); err != nil {
			return err
		}
		if launch.Data.SessionID == "" {
			return fmt.Errorf("launch of %s answered no session_id", p.id)
		}
		p.session = launch.Data.SessionID
		return nil
	})
}

// rateMatched runs the open-loop step at rate in seamless mode, then sets
// the client back to ledger mode, launches the players again and runs it
// in ledger mode (rep.RateMatched, rep.RateMatchedLedger).
func (r seamlessRun) rateMatched(ctx context.Context, rep *SeamlessReport, sim *opSim, players []player, rate, idle float64) error {
	r.logf("seamless: open loop at %.0f calls/s for %s", rate, r.cfg.Duration)
	st := r.step(ctx, sim, func() *recorder { return r.wc.openLoop(ctx, players, rate, r.cfg.Duration) }, idle)
	st.Step.Mode, st.Step.TargetRate = "open", rate
	r.logf("seamless: the client back in ledger mode, its players launched again")
	if err := r.admin().put(ctx, "/admin/v1/clients/sandbox/wallet", map[string]string{"mode": "ledger"}); err != nil {
		return fmt.Errorf("set the sandbox client back to ledger mode: %w", err)
	}
	ledgerPlayers := slices.Clone(players)
	if err := r.launch(ctx, ledgerPlayers, nil); err != nil {
		return err
	}
	r.logf("seamless: ledger mode, open loop at %.0f calls/s for %s", rate, r.cfg.Duration)
	l := measureStep(ctx, r.svc, r.lw, r.watch, func() *recorder { return r.wc.openLoop(ctx, ledgerPlayers, rate, r.cfg.Duration) })
	l.Mode, l.TargetRate = "open", rate
	st.Ledger = ledgerSide(st, l, idle)
	rep.RateMatched, rep.RateMatchedLedger = &st, &l
	r.logf("seamless: open %.0f/s: seamless %.0f µs/call, added p50 %.2f p99 %.2f ms; ledger %.0f µs/call, p50 %.2f p99 %.2f ms",
		rate, st.ServiceUsPerCall, st.Added.P50, st.Added.P99, st.Ledger.ServiceUsPerCall, st.Ledger.Latency.P50, st.Ledger.Latency.P99)
	return nil
}

// step runs one step of load and joins its calls with the simulator's
// log.
func (r seamlessRun) step(ctx context.Context, sim *opSim, load func() *recorder, idle float64) SeamlessStep {
	from := sim.logSize()
	simCPU0, _ := cpuSeconds(sim.pid())
	t0 := time.Now()
	var rec *recorder
	ws := measureStep(ctx, r.svc, r.lw, r.watch, func() *recorder {
		rec = load()
		return rec
	})
	st := SeamlessStep{Step: ws}
	if simCPU1, err := cpuSeconds(sim.pid()); err == nil {
		st.OperatorSimCores = (simCPU1 - simCPU0) / time.Since(t0).Seconds()
	}
	calls, err := readOpCalls(sim.logPath, from)
	if err != nil {
		st.Step.Errors["operator-sim log: "+err.Error()]++
	}
	st.join(rec.byID, calls)
	st.ServiceUsPerCall, st.NetUsPerCall = usPerCall(ws, idle)
	return st
}

// join matches the step's calls with the simulator's wallet calls by
// correlation id and fills Operator, Added, Matched and Unmatched.
func (st *SeamlessStep) join(calls []callLatency, logged []opCall) {
	took := make(map[string]time.Duration, len(logged))
	for _, c := range logged {
		if c.status != "200" {
			st.OperatorFailures++
		}
		took[c.correlation] = c.took
	}
	op, added := newHist(), newHist()
	for _, c := range calls {
		t, ok := took[c.id]
		if !ok && c.alt != "" {
			t, ok = took[c.alt]
		}
		if !ok {
			st.Unmatched++
			continue
		}
		st.Matched++
		opUs := max(t.Microseconds(), 1)
		_ = op.RecordValue(opUs)
		_ = added.RecordValue(max(c.us-opUs, 1))
	}
	st.Operator, st.Added = latencyOf(op), latencyOf(added)
}

// usPerCall is a step's service CPU per successful call, and the same
// less the service's idle CPU.
func usPerCall(s WalletStep, idle float64) (gross, net float64) {
	if s.CallsPerSec <= 0 {
		return 0, 0
	}
	return s.CPU.Service / s.CallsPerSec * 1e6, max(s.CPU.Service-idle, 0) / s.CallsPerSec * 1e6
}

func ledgerStep(steps []WalletStep, c int) *WalletStep {
	for i := range steps {
		if steps[i].Mode == "closed" && steps[i].Concurrency == c {
			return &steps[i]
		}
	}
	return nil
}

func ledgerSide(st SeamlessStep, l WalletStep, idle float64) *LedgerSide {
	ls := &LedgerSide{CallsPerSec: l.CallsPerSec, Latency: l.Latency["all"]}
	ls.ServiceUsPerCall, ls.NetUsPerCall = usPerCall(l, idle)
	ratio := func(a, b float64) float64 {
		if b <= 0 {
			return 0
		}
		return a / b
	}
	ls.AddedP50, ls.AddedP99 = ratio(st.Added.P50, ls.Latency.P50), ratio(st.Added.P99, ls.Latency.P99)
	ls.CPU, ls.NetCPU = ratio(st.ServiceUsPerCall, ls.ServiceUsPerCall), ratio(st.NetUsPerCall, ls.NetUsPerCall)
	return ls
}

// forEach runs f(0..n-1), conc at a time, and returns the first error.
func forEach(ctx context.Context, n, conc int, f func(i int) error) error {
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range conc {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// put sends body with PUT and discards the answer.
func (o operator) put(ctx context.Context, path string, body any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, o.base+path, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+o.key)
	return o.do(req, nil)
}
