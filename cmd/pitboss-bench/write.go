package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/providersim"
)

// Latency is a distribution in milliseconds.
type Latency struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
	P999  float64 `json:"p99_9_ms"`
	Max   float64 `json:"max_ms"`
}

func latencyOf(h *hdrhistogram.Histogram) Latency {
	q := func(p float64) float64 { return float64(h.ValueAtQuantile(p)) / 1000 }
	return Latency{Count: h.TotalCount(), P50: q(50), P90: q(90), P99: q(99), P999: q(99.9), Max: float64(h.Max()) / 1000}
}

// LedgerBatches is what the service's own metrics say about its group
// commit during a step.
type LedgerBatches struct {
	Batches        float64 `json:"batches"`
	OpsPerBatch    float64 `json:"operations_per_batch"`
	EventsPerBatch float64 `json:"events_per_batch"`
	MeanBatchMs    float64 `json:"mean_batch_ms"`
	Failures       float64 `json:"failures"`
}

// WalletStep is one load step of the wallet benchmark.
type WalletStep struct {
	Mode        string             `json:"mode"` // closed: fixed concurrency; open, moderate: fixed arrival rate
	Concurrency int                `json:"concurrency,omitempty"`
	TargetRate  float64            `json:"target_calls_per_second,omitempty"`
	Seconds     float64            `json:"seconds"`
	Calls       int64              `json:"calls"`
	OK          int64              `json:"ok"`
	CallsPerSec float64            `json:"calls_per_second"` // successful wallet calls per second
	Latency     map[string]Latency `json:"latency"`          // all, bet, win, rollback
	Errors      map[string]int64   `json:"errors,omitempty"`
	Lag         StepLag            `json:"lag"`
	CPU         CPUUse             `json:"cpu"`
	RSSMB       float64            `json:"service_rss_mb"`
	Ledger      LedgerBatches      `json:"ledger"`
	Pgbench     *PgbenchResult     `json:"pgbench,omitempty"`
	VsPgbench   float64            `json:"calls_per_pgbench_tps,omitempty"`
	// The moderate step's: each statement's cost (pg_stat_statements)
	// and the service's CPU by role (its profile's labels).
	Statements     []StatementCost `json:"statements,omitempty"`
	StatementsNote string          `json:"statements_note,omitempty"`
	Roles          []RoleCPU       `json:"roles,omitempty"`
}

// WriteReport is the wallet benchmark's outcome.
type WriteReport struct {
	Players        int          `json:"players"`
	PreloadSeconds float64      `json:"preload_seconds"`
	Topic          string       `json:"topic"`
	Steps          []WalletStep `json:"steps"`
	PeakRSSMB      float64      `json:"service_peak_rss_mb"` // VmHWM at the end of the run
	Profile        []string     `json:"profile_top,omitempty"`
	ProfileStep    int          `json:"profile_step,omitempty"`
	// Seamless is the seamless step (issue 34), on the same service
	// after the ledger-mode steps.
	Seamless *SeamlessReport `json:"seamless,omitempty"`
}

func runWrite(ctx context.Context, cfg config, ts string, logf func(string, ...any)) (*WriteReport, error) {
	rep := &WriteReport{Players: cfg.Players}
	dbURL, err := recreateDatabase(ctx, cfg.ServerDB, cfg.WriteDB)
	if err != nil {
		return rep, err
	}
	svcURL := dbURL
	if cfg.PoolMaxConns > 0 {
		if svcURL, err = withQuery(dbURL, "pool_max_conns", strconv.Itoa(cfg.PoolMaxConns)); err != nil {
			return rep, err
		}
	}
	rep.Topic = "pitboss.bench." + strings.ToLower(ts) + ".v1"
	spec := serviceSpec{Name: "write", DBURL: svcURL, Topic: rep.Topic, Pprof: cfg.Profile, LogLevel: cfg.LogLevel}
	if cfg.Seamless {
		// The sandbox client's wallet is the simulator on loopback.
		spec.Extra = append(spec.Extra, "PITBOSS_PRIVATE_CALLBACKS=sandbox")
	}
	svc, err := newService(cfg, spec)
	if err != nil {
		return rep, err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, t := range []string{rep.Topic, rep.Topic + ".dlq"} {
			_ = kafka.DeleteTopic(dctx, cfg.Brokers, t)
		}
	}()
	logf("write: migrate and sandbox on %s", cfg.WriteDB)
	if _, err := svc.command(ctx, "migrate"); err != nil {
		return rep, err
	}
	if _, err := svc.command(ctx, "sandbox"); err != nil {
		return rep, err
	}
	proto, err := setWalletProtocol(ctx, svc, cfg)
	if err != nil {
		return rep, err
	}
	if err := svc.start(ctx, cfg.Roles); err != nil {
		return rep, err
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = svc.stop()
		}
	}()
	creds, err := readSandbox(svc.dataDir)
	if err != nil {
		return rep, err
	}
	logf("write: preload %d players (deposit + launch each, over the API)", cfg.Players)
	t0 := time.Now()
	players, err := preload(ctx, operator{http: newHTTPClient(32), base: svc.base, key: creds.key}, creds, cfg.Players)
	if err != nil {
		return rep, err
	}
	rep.PreloadSeconds = time.Since(t0).Seconds()
	// The tables were empty seconds ago, and autovacuum analyses them a
	// minute or more later: until then the service's cached plans come
	// from an empty table's statistics (a sequential scan of accounts in
	// the ledger's lookups, every checkpoint of a projection read for each
	// batch: 0.4–2.4 ms a statement instead of a few hundredths, found with
	// pg_stat_statements and auto_explain). A production database has
	// statistics; so does the benchmark's, from here on (again after the
	// warm-up, below). ANALYZE invalidates the cached plans.
	if err := analyzeTables(ctx, dbURL); err != nil {
		return rep, err
	}
	if err := preparePgbench(ctx, cfg.Root, dbURL); err != nil {
		return rep, err
	}
	lw, err := startLagWatch(ctx, cfg.Brokers, rep.Topic, dbURL)
	if err != nil {
		return rep, err
	}
	lw.projections = cfg.Roles == "" || slices.Contains(strings.Split(cfg.Roles, ","), "projector")
	defer lw.close()
	maxConc := slices.Max(cfg.Steps)
	wc := &walletClient{http: newHTTPClient(max(maxConc, 256)), base: svc.base, provider: creds.provider,
		secret: creds.providerSecret, run: "bench" + ts}
	if cfg.Protocol != gateway.WalletProtocolPitboss {
		proto.Secret = creds.providerSecret
		if wc.dialect, err = providersim.NewLoad(proto); err != nil {
			return rep, err
		}
		wc.game = creds.game
	}

	logf("write: warm-up, 2s at 16")
	warm := wc.closedLoop(ctx, players, 16, 2*time.Second)
	if _, err := lw.measure(ctx, warm.answers, 30*time.Second); err != nil {
		return rep, err
	}
	if warm.hist["all"].TotalCount() == 0 {
		return rep, fmt.Errorf("warm-up: no wallet call succeeded: %v", warm.errors)
	}
	// Again, now that the warm-up has written the first bets, wins and
	// rounds: the tables only spins fill (rounds, game results, players)
	// were still empty at the first ANALYZE.
	if err := analyzeTables(ctx, dbURL); err != nil {
		return rep, err
	}

	watch := cpuWatch{pid: svc.pid(), db: cfg.WriteDB}
	profileAt := closest(cfg.Steps, 64)
	var best float64
	for _, c := range cfg.Steps {
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		logf("write: closed loop, concurrency %d for %s", c, cfg.Duration)
		var prof chan string
		if cfg.Profile && c == profileAt && svc.pprof != "" {
			prof = make(chan string, 1)
			go func() { prof <- takeProfile(ctx, cfg, svc, fmt.Sprintf("cpu-c%d", c)) }()
		}
		step := measureStep(ctx, svc, lw, watch, func() *recorder { return wc.closedLoop(ctx, players, c, cfg.Duration) })
		step.Mode, step.Concurrency = "closed", c
		if prof != nil {
			if top := <-prof; top != "" {
				rep.Profile, rep.ProfileStep = strings.Split(top, "\n"), c
			}
		}
		if cfg.Pgbench {
			clients := min(c, cfg.PgbenchMaxClients)
			logf("write: pgbench, %d clients for %s", clients, cfg.Duration)
			pb, err := runPgbench(ctx, cfg, dbURL, filepath.Join(cfg.Out, "pgbench"), clients, cfg.Duration, cpuWatch{db: cfg.WriteDB})
			if err != nil {
				return rep, err
			}
			step.Pgbench = &pb
			if pb.TPS > 0 {
				step.VsPgbench = step.CallsPerSec / pb.TPS
			}
		}
		logf("write: %d: %.0f calls/s (p50 %.1f, p99 %.1f ms), %.2fx pgbench; relay lag p99 %.0f ms, projection p99 %.0f ms; %.1f ops/batch, %.1f ms/batch",
			c, step.CallsPerSec, step.Latency["all"].P50, step.Latency["all"].P99, step.VsPgbench, step.Lag.Relay.P99ms,
			step.Lag.ProjectionBalances.P99ms, step.Ledger.OpsPerBatch, step.Ledger.MeanBatchMs)
		best = max(best, step.CallsPerSec)
		rep.Steps = append(rep.Steps, step)
	}

	rate := cfg.Rate
	if rate <= 0 {
		rate = 0.7 * best
	}
	if rate >= 2 {
		logf("write: open loop at %.0f calls/s for %s", rate, cfg.Duration)
		step := measureStep(ctx, svc, lw, watch, func() *recorder { return wc.openLoop(ctx, players, rate, cfg.Duration) })
		step.Mode, step.TargetRate = "open", rate
		logf("write: open %.0f: %.0f calls/s, p99 %.1f ms", rate, step.CallsPerSec, step.Latency["all"].P99)
		rep.Steps = append(rep.Steps, step)
	}

	if cfg.ModerateRate > 0 && ctx.Err() == nil {
		rep.Steps = append(rep.Steps, moderateStep(ctx, cfg, svc, dbURL, func() WalletStep {
			return measureStep(ctx, svc, lw, watch, func() *recorder { return wc.openLoop(ctx, players, cfg.ModerateRate, cfg.Duration) })
		}, logf))
	}

	if _, hwm, err := memKB(svc.pid()); err == nil {
		rep.PeakRSSMB = float64(hwm) / 1024
	}
	if cfg.Seamless && ctx.Err() == nil {
		rep.Seamless, err = runSeamless(ctx, seamlessRun{cfg: cfg, svc: svc, lw: lw, watch: watch, wc: wc, creds: creds,
			ledger: rep.Steps, logf: logf})
		if err != nil {
			return rep, fmt.Errorf("seamless step: %w", err)
		}
	}
	stopped = true
	if err := svc.stop(); err != nil {
		return rep, err
	}
	return rep, nil
}

// measureStep runs one load step and gathers everything measured around it.
func measureStep(ctx context.Context, svc *service, lw *lagWatch, watch cpuWatch, load func() *recorder) WalletStep {
	m0 := scrapeLedger(svc.base)
	span := watch.begin()
	rec := load()
	cpu := span.stop(watch)
	m1 := scrapeLedger(svc.base)
	step := WalletStep{CPU: cpu, Calls: rec.calls, Errors: rec.errors,
		Latency: map[string]Latency{}}
	for k, h := range rec.hist {
		if h.TotalCount() > 0 {
			step.Latency[k] = latencyOf(h)
		}
	}
	step.OK = rec.hist["all"].TotalCount()
	if !rec.first.IsZero() {
		step.Seconds = rec.last.Sub(rec.first).Seconds()
	}
	if step.Seconds > 0 {
		step.CallsPerSec = float64(step.OK) / step.Seconds
	}
	if rss, _, err := memKB(svc.pid()); err == nil {
		step.RSSMB = float64(rss) / 1024
	}
	step.Ledger = m1.minus(m0)
	lag, err := lw.measure(ctx, rec.answers, 60*time.Second)
	if err != nil {
		step.Errors["lag measurement: "+err.Error()]++
	}
	step.Lag = lag
	return step
}

func closest(steps []int, want int) int {
	best := steps[0]
	for _, s := range steps {
		if abs(s-want) < abs(best-want) {
			best = s
		}
	}
	return best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// ledgerMetrics are the sums of the ledger's batch metrics.
type ledgerMetrics struct {
	batches, ops, events, seconds, failures float64
}

func (m ledgerMetrics) minus(o ledgerMetrics) LedgerBatches {
	n := m.batches - o.batches
	b := LedgerBatches{Batches: n, Failures: m.failures - o.failures}
	if n > 0 {
		b.OpsPerBatch = (m.ops - o.ops) / n
		b.EventsPerBatch = (m.events - o.events) / n
		b.MeanBatchMs = (m.seconds - o.seconds) / n * 1000
	}
	return b
}

// scrapeLedger reads the ledger batch metrics from /metrics.
func scrapeLedger(base string) ledgerMetrics {
	var m ledgerMetrics
	res, err := http.Get(base + "/metrics")
	if err != nil {
		return m
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			continue
		}
		switch name {
		case "pitboss_ledger_batch_operations_count":
			m.batches = f
		case "pitboss_ledger_batch_operations_sum":
			m.ops = f
		case "pitboss_ledger_batch_events_sum":
			m.events = f
		case "pitboss_ledger_batch_duration_seconds_sum":
			m.seconds = f
		case "pitboss_ledger_batch_failures_total":
			m.failures = f
		}
	}
	return m
}

// takeProfile takes a CPU profile of the service over most of a step into
// <name>.pprof and returns `go tool pprof -top` of it ("" if that is not
// possible).
func takeProfile(ctx context.Context, cfg config, svc *service, name string) string {
	secs := max(int(cfg.Duration/time.Second)-1, 1)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", svc.pprof, secs), nil)
	if err != nil {
		return ""
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer res.Body.Close()
	path := filepath.Join(cfg.Out, name+".pprof")
	f, err := os.Create(path)
	if err != nil {
		return ""
	}
	_, err = io.Copy(f, res.Body)
	f.Close()
	if err != nil || res.StatusCode != http.StatusOK {
		return ""
	}
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=30", cfg.Pitboss, path).Output()
	if err != nil {
		return ""
	}
	_ = os.WriteFile(strings.TrimSuffix(path, ".pprof")+".top.txt", out, 0o644)
	cum, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-cum", "-nodecount=40", cfg.Pitboss, path).Output()
	if err == nil {
		_ = os.WriteFile(strings.TrimSuffix(path, ".pprof")+".cum.txt", cum, 0o644)
	}
	return strings.TrimSpace(string(out))
}
