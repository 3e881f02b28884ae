package chaos_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/pitboss/pitboss/chaos/stack"
)

// seamlessEnv is the installation of TestChaos with the sandbox client in
// seamless mode: its players' money in an operator simulator run as a
// process of its own (`pitboss operator-sim --protocol valkyrie-pam`, a
// state file), their sessions launched with the tokens it issued, and a
// load of our provider wallet protocol for them.
type seamlessEnv struct {
	*env
	sim     *stack.OperatorSim
	admin   *stack.API
	players []*stack.Player
	load    *stack.Load
	seed    uint64
	// prev is the report after the fault before: the table shows each
	// fault's own follow-ups.
	prev stack.SeamlessReport
	seen map[int64]bool // follow-ups of the faults before
}

// seamlessFault is one fault of the client's wallet: inject breaks it
// while the load runs and returns when it is healed.
type seamlessFault struct {
	name   string
	full   bool // only with CHAOS=full
	atSim  bool // a fault the simulator injects, counted in its state
	inject func(ctx context.Context, t *testing.T, e *seamlessEnv) error
}

// simFault puts f in force at the simulator for d, then heals it.
func simFault(f stack.SimFaults, d func(e *seamlessEnv) time.Duration) func(context.Context, *testing.T, *seamlessEnv) error {
	return func(ctx context.Context, t *testing.T, e *seamlessEnv) error {
		e.seed++
		f.Seed = e.seed
		if err := e.sim.SetFaults(ctx, f); err != nil {
			return err
		}
		time.Sleep(d(e))
		return e.sim.SetFaults(ctx, stack.SimFaults{})
	}
}

func seamlessFaults() []seamlessFault {
	short := func(s, f time.Duration) func(e *seamlessEnv) time.Duration {
		return func(e *seamlessEnv) time.Duration { return e.dur(s, f) }
	}
	return []seamlessFault{
		{name: "none (baseline)", inject: func(ctx context.Context, t *testing.T, e *seamlessEnv) error {
			time.Sleep(e.dur(3*time.Second, 10*time.Second))
			return nil
		}},
		{name: "operator timeouts: 20 % of calls held past the 5-s call timeout, unapplied",
			atSim: true, inject: simFault(stack.SimFaults{Timeout: stack.SimRule{Probability: 0.2}, TimeoutHold: "30s"},
				short(6*time.Second, 20*time.Second))},
		{name: "operator 5xx: 25 % of calls answered 503, unapplied",
			atSim: true, inject: simFault(stack.SimFaults{Error5xx: stack.SimRule{Probability: 0.25}, ErrorStatus: 503},
				short(5*time.Second, 20*time.Second))},
		{name: "answers lost after applying: 25 % of calls, connection dropped",
			atSim: true, inject: simFault(stack.SimFaults{LostAnswer: stack.SimRule{Probability: 0.25}},
				short(5*time.Second, 20*time.Second))},
		{name: "answers lost after applying: 25 % of calls, answered 502", full: true,
			atSim: true, inject: simFault(stack.SimFaults{LostAnswer: stack.SimRule{Probability: 0.25}, LostAnswerStatus: 502},
				short(5*time.Second, 20*time.Second))},
		{name: "operator-sim kill -9, restarted after 2 s", inject: func(ctx context.Context, t *testing.T, e *seamlessEnv) error {
			if err := e.sim.Proc.Kill(); err != nil {
				return err
			}
			time.Sleep(2 * time.Second)
			return e.sim.Start(ctx)
		}},
		// The ledger down while the operator answers: a debit the operator
		// took that the ledger could not book is voided (or, its cancel not
		// queued either, re-sent by the provider's retry and booked).
		{name: "PostgreSQL restart (fast stop, down 5 s / 15 s)", inject: func(ctx context.Context, t *testing.T, e *seamlessEnv) error {
			if err := e.pg.Stop("fast"); err != nil {
				return err
			}
			time.Sleep(e.dur(5*time.Second, 15*time.Second))
			return e.pg.Start(ctx)
		}},
		{name: "operator-sim restarts itself on every 25th call (state file read back)", full: true,
			atSim: true, inject: simFault(stack.SimFaults{Restart: stack.SimRule{Every: 25}, RestartPause: "300ms"},
				short(5*time.Second, 20*time.Second))},
		{name: "every fault at once: timeouts 5 %, 5xx 10 %, lost 10 %, restarts 2 %", full: true,
			atSim: true, inject: simFault(stack.SimFaults{Timeout: stack.SimRule{Probability: 0.05}, TimeoutHold: "30s",
				Error5xx: stack.SimRule{Probability: 0.1}, LostAnswer: stack.SimRule{Probability: 0.1},
				Restart: stack.SimRule{Probability: 0.02}, RestartPause: "300ms"}, short(5*time.Second, 30*time.Second))},
	}
}

// newSeamlessEnv starts TestChaos's installation, then the operator
// simulator, sets the sandbox client seamless to it, and funds and
// launches the players.
func newSeamlessEnv(t *testing.T, full bool) *seamlessEnv {
	e := &seamlessEnv{env: newEnv(t, full), seen: map[int64]bool{}}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	var err error
	if e.sim, err = stack.NewOperatorSim(e.svc.Bin, e.svc.Dir, "valkyrie-pam"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.sim.Proc.Stop(10 * time.Second) })
	if err := e.sim.Start(ctx); err != nil {
		t.Fatal(err)
	}
	e.admin = &stack.API{Base: e.svc.BaseURL(), Key: e.svc.AdminToken, HTTP: stack.NewHTTPClient(2, 30*time.Second)}
	// The chaos installation allows private targets (PITBOSS_PRIVATE_CALLBACKS=all),
	// so the client's wallet may be the simulator on loopback. Set
	// through the api process itself, which applies it at once.
	if err := stack.SetClientWallet(ctx, e.admin, e.sandbox.Client, "seamless", e.sim.URL(), "valkyrie-pam", e.sim.Token); err != nil {
		t.Fatal(err)
	}
	// valkyrie-pam carries at most 6 decimals: BTC's 8 would refuse most
	// wins before they are sent, so EUR and JPY.
	currencies := []stack.Currency{{Code: "EUR", Exp: 2}, {Code: "JPY", Exp: 0}}
	n := envInt("CHAOS_SEAMLESS_PLAYERS", 16)
	if e.players, err = stack.SetupSeamlessPlayers(ctx, e.api, e.sim, e.sandbox, "seamless", n, 100_000, currencies); err != nil {
		t.Fatal(err)
	}
	workers := envInt("CHAOS_WORKERS", 8)
	e.load = &stack.Load{
		Provider: &stack.Provider{Base: e.svc.BaseURL(), ID: e.sandbox.Provider, Secret: e.sandbox.ProviderSecret,
			HTTP: stack.NewHTTPClient(workers, 15*time.Second)},
		Players: e.players, Workers: workers, Rate: float64(envInt("CHAOS_RATE", 60)), Prefix: "stx",
		Retry: stack.Retry{First: 50 * time.Millisecond, Max: time.Second, GiveUp: 3 * time.Minute},
	}
	t.Logf("seamless: operator-sim (valkyrie-pam) at %s, %d players (EUR, JPY) funded and launched in %v", e.sim.URL(),
		len(e.players), time.Since(start).Round(time.Millisecond))
	return e
}

// seamlessRow is one line of the seamless report table.
type seamlessRow struct {
	fault                      string
	stats                      stack.PhaseStats
	struck                     string
	rep                        stack.SeamlessReport
	drained                    time.Duration
	behind                     int
	longest                    time.Duration // a follow-up's, from queued to settled
	lost, dup, problems        int
	operatorDiffs, mirrorDiffs int
	appliedTwice               int
	never, cancelled, stood    int // this fault's follow-ups
	resent                     int
	kafka, verify              string
}

// TestChaosSeamless is the fault-injection suite's seamless form: steady
// provider wallet load for a seamless client's players while the client's
// own wallet (the operator simulator, a process of its own) times out,
// answers 5xx, loses answers after applying them and is killed; after
// each fault heals and every follow-up is settled: no money lost or
// doubled at the operator (its balance is the start plus what the ledger
// recorded, and the ledger's mirror equals it), no movement applied there
// twice, every voided bet never applied or cancelled there, every
// acknowledged call booked once and every refused one a voided bet,
// every event on Kafka, `pitboss verify` ok.
//
// Settings as TestChaos's (CHAOS=full, CHAOS_ONLY, CHAOS_RATE,
// CHAOS_WORKERS), and CHAOS_SEAMLESS_PLAYERS (16).
func TestChaosSeamless(t *testing.T) {
	full := os.Getenv("CHAOS") == "full"
	shortParallel(t, full)
	e := newSeamlessEnv(t, full)
	var rows []seamlessRow
	for i, f := range seamlessFaults() {
		if f.full && !full {
			continue
		}
		if only := os.Getenv("CHAOS_ONLY"); only != "" && !strings.Contains(f.name, only) && i > 0 {
			continue
		}
		var r seamlessRow
		ok := t.Run(f.name, func(t *testing.T) { r = e.run(t, i, f) })
		rows = append(rows, r)
		if !ok {
			e.dump()
			t.Logf("---- operator-sim log:\n%s", e.sim.Proc.LogTail(25))
			break
		}
	}
	t.Log("\n" + seamlessTable(rows))
}

func seamlessTable(rows []seamlessRow) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "fault\tsent\tattempts\tacked\trefused (voided bets)\tunanswered\tlongest wait s\tfaults struck\t"+
		"voided: never applied / cancelled / booked after all\tre-sent, booked\tlongest follow-up s\tmirror behind\toperator diffs\t"+
		"mirror diffs\tapplied twice\tlost\tdup effects\tkafka\tverify\t")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%d / %d / %d\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t\n", r.fault,
			r.stats.Sent, r.stats.Attempts, r.stats.Acked, r.stats.Rejected, r.stats.Unanswered, secs(r.stats.MaxWait), r.struck,
			r.never, r.cancelled, r.stood, r.resent, secs(r.longest), r.behind, r.operatorDiffs,
			r.mirrorDiffs, r.appliedTwice, r.lost, r.dup, r.kafka, r.verify)
	}
	w.Flush()
	return b.String()
}

// run is one fault under load, the follow-ups drained, then the checks.
func (e *seamlessEnv) run(t *testing.T, i int, f seamlessFault) seamlessRow {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	r := seamlessRow{fault: f.name, verify: "-", kafka: "-"}
	before, err := e.sim.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stop := e.load.Start(ctx, f.name)
	time.Sleep(2 * time.Second)
	if err := f.inject(ctx, t, e); err != nil {
		stop()
		t.Fatalf("inject: %v", err)
	}
	healed := time.Now()
	time.Sleep(e.dur(3*time.Second, 5*time.Second))
	stop()
	calls := e.load.Calls()
	r.stats = stack.Stats(calls, f.name)
	var problems []string
	if pending, err := stack.DrainFollowUps(ctx, e.admin, e.sandbox.Client, 3*time.Minute); err != nil {
		for _, p := range pending {
			problems = append(problems, fmt.Sprintf("pending %s %s: %d attempts, %s", p.Action, p.MoveID, p.Attempts, p.LastError))
		}
		t.Fatalf("follow-ups: %v\n  %s", err, strings.Join(problems, "\n  "))
	}
	r.drained = time.Since(healed)
	after, err := e.sim.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r.struck = struck(before, after, f.name)
	if f.atSim && r.struck == "none" {
		problems = append(problems, "the simulator's fault never struck: the checks proved nothing about it")
	}
	problems = append(problems, e.checkMoney(ctx, t, i, &r, calls)...)
	problems = append(problems, e.checkLedger(ctx, &r, calls)...)
	r.problems = len(problems)
	t.Logf("%s: sent %d (%d attempts), acked %d, refused %d %v; voided bets: %d never applied, %d cancelled, %d booked after all; %d re-sent; "+
		"the longest follow-up %ss, all settled %ss after the heal; faults struck: %s; mirrors behind before the sync: %d", f.name, r.stats.Sent,
		r.stats.Attempts, r.stats.Acked, r.stats.Rejected, r.stats.RejectedCodes, r.never, r.cancelled, r.stood, r.resent,
		secs(r.longest), secs(r.drained), r.struck, r.behind)
	if len(problems) > 0 {
		t.Errorf("after %q:\n  %s", f.name, strings.Join(problems, "\n  "))
	}
	return r
}

// struck is what the simulator counted between two states: the faults it
// caused (a kill -9 restarts its counts).
func struck(before, after stack.SimState, fault string) string {
	if strings.Contains(fault, "kill -9") {
		return "1 kill -9"
	}
	b, a := before.Counts, after.Counts
	var parts []string
	for _, c := range []struct {
		name string
		n    uint64
	}{{"timeouts", a.Timeouts - b.Timeouts}, {"5xx", a.Errors5xx - b.Errors5xx}, {"lost", a.LostAnswers - b.LostAnswers},
		{"restarts", a.Restarts - b.Restarts}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.name))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// checkMoney compares the operator, the ledger and the provider's view:
// first how many mirrors are behind the operator (a voided debit
// cancelled after a player's last booked call), then a round for every
// player that brings them level, then every check.
func (e *seamlessEnv) checkMoney(ctx context.Context, t *testing.T, i int, r *seamlessRow, calls []*stack.Call) []string {
	var problems []string
	state, err := e.sim.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cash, err := state.Cash(e.players)
	if err != nil {
		t.Fatal(err)
	}
	behind, err := stack.Balances(ctx, e.api, e.players, byIndex(e.players, cash))
	if err != nil {
		t.Fatal(err)
	}
	r.behind = len(behind)
	if err := stack.SyncMirror(ctx, e.load.Provider, e.players, fmt.Sprint(i)); err != nil {
		t.Fatal(err)
	}
	if state, err = e.sim.State(ctx); err != nil {
		t.Fatal(err)
	}
	if cash, err = state.Cash(e.players); err != nil {
		t.Fatal(err)
	}
	mirror, err := stack.Balances(ctx, e.api, e.players, byIndex(e.players, cash))
	if err != nil {
		t.Fatal(err)
	}
	r.mirrorDiffs = len(mirror)
	check(true, "the ledger's mirror is not the operator's balance", mirror, &problems)
	moves, err := stack.LedgerMoves(ctx, e.db, e.sandbox.Client, e.players)
	if err != nil {
		t.Fatal(err)
	}
	follow, err := stack.FollowUps(ctx, e.admin, e.sandbox.Client, true)
	if err != nil {
		t.Fatal(err)
	}
	r.rep = stack.SeamlessCheck(e.players, state, moves, follow, calls)
	r.operatorDiffs, r.appliedTwice = len(r.rep.OperatorDiffs), len(r.rep.AppliedTwice)
	r.never, r.cancelled = r.rep.CancelNeverApplied-e.prev.CancelNeverApplied, r.rep.CancelCancelled-e.prev.CancelCancelled
	r.stood, r.resent, e.prev = r.rep.CancelStood-e.prev.CancelStood, r.rep.Resent-e.prev.Resent, r.rep
	r.longest = e.longestFollowUp(follow)
	labels := make([]string, 0, len(r.rep.Problems()))
	for what := range r.rep.Problems() {
		labels = append(labels, what)
	}
	sort.Strings(labels)
	for _, what := range labels {
		check(true, what, r.rep.Problems()[what], &problems)
	}
	return problems
}

// longestFollowUp is the longest time one of this fault's follow-ups took
// from being queued to being settled (the admin API's times, to the
// millisecond); it marks them seen.
func (e *seamlessEnv) longestFollowUp(follow []stack.FollowUp) time.Duration {
	var longest time.Duration
	for _, f := range follow {
		if e.seen[f.ID] {
			continue
		}
		e.seen[f.ID] = true
		created, err1 := time.Parse(time.RFC3339Nano, f.CreatedAt)
		done, err2 := time.Parse(time.RFC3339Nano, f.DoneAt)
		if err1 == nil && err2 == nil {
			longest = max(longest, done.Sub(created))
		}
	}
	return longest
}

func byIndex(players []*stack.Player, cash map[string]int64) map[int]int64 {
	out := map[int]int64{}
	for _, p := range players {
		out[p.Index] = cash[p.ID]
	}
	return out
}

// checkLedger is TestChaos's proof for the seamless load: every
// acknowledged call has exactly one event (and a refused one none),
// every event reached Kafka in stream order, the read models reached the
// head, `pitboss verify` holds.
func (e *seamlessEnv) checkLedger(ctx context.Context, r *seamlessRow, calls []*stack.Call) []string {
	var problems []string
	events, err := stack.Events(ctx, e.db)
	if err != nil {
		return []string{err.Error()}
	}
	eff := stack.Effects(events, calls)
	r.lost, r.dup = len(eff.Lost), len(eff.Duplicated)
	check(true, "lost", eff.Lost, &problems)
	check(true, "duplicated", eff.Duplicated, &problems)
	check(true, "applied behind a refusal", eff.Phantom, &problems)
	kr, err := stack.KafkaCoverage(ctx, e.brokers, e.topic, events, 2*time.Minute)
	if err != nil {
		problems = append(problems, "kafka: "+err.Error())
	}
	check(true, "not on Kafka", kr.Missing, &problems)
	check(true, "Kafka stream gaps", kr.Gaps, &problems)
	check(true, "Kafka keys", kr.Misplaced, &problems)
	r.kafka = "FAILED"
	if kr.OK() && err == nil {
		r.kafka = fmt.Sprintf("ok (%d dups)", kr.Duplicates)
	}
	head := events[len(events)-1].Position
	if err := stack.ReadModelsAt(ctx, e.api, head, 2*time.Minute); err != nil {
		problems = append(problems, err.Error())
	} else if err := stack.ProjectionsAt(ctx, e.db, head, 2*time.Minute); err != nil {
		problems = append(problems, err.Error())
	}
	if rep, out, err := stack.Verify(ctx, e.svc, false); err != nil {
		r.verify = "FAILED"
		problems = append(problems, fmt.Sprintf("pitboss verify: %v\n%s", err, out))
	} else {
		r.verify = fmt.Sprintf("ok (%d events)", rep.Events)
	}
	return problems
}
