package projections_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
)

var eur = domain.MustCurrency("EUR")

var (
	day1 = time.Date(2025, 3, 1, 23, 0, 0, 0, time.UTC)
	day2 = time.Date(2025, 3, 2, 1, 0, 0, 0, time.UTC)
)

func money(s string) domain.Money {
	m, err := domain.ParseMoney(s, eur)
	if err != nil {
		panic(err)
	}
	return m
}

// ledger decides events with the domain on a view, the way the event store
// does, and numbers them.
type ledger struct {
	t      *testing.T
	view   *domain.View
	pos    int64
	now    time.Time
	events []domain.Event
}

func newLedger(t *testing.T) *ledger {
	l := &ledger{t: t, view: domain.NewView(), now: day1}
	l.do(func(r domain.Reader, env domain.Env) (domain.Change, error) {
		return domain.DecideDeposit(r, domain.ClientTx{Client: "acme", Player: "p1", ExternalTxID: "dep", Currency: eur},
			money("100.00"), env)
	})
	return l
}

func (l *ledger) do(decide func(domain.Reader, domain.Env) (domain.Change, error)) domain.Event {
	l.t.Helper()
	l.pos++
	ch, err := decide(l.view, domain.Env{Now: l.now, EventID: fmt.Sprintf("00000000-0000-4000-8000-%012d", l.pos)})
	if err != nil {
		l.t.Fatalf("decide event %d: %v", l.pos, err)
	}
	e, err := l.view.Apply(ch)
	if err != nil {
		l.t.Fatalf("apply event %d: %v", l.pos, err)
	}
	e.Position = l.pos
	l.events = append(l.events, e)
	return e
}

func game(tx, round string, opts ...func(*domain.GameTx)) domain.GameTx {
	g := domain.GameTx{Client: "acme", Player: "p1", Provider: "prov", Game: "slot", Round: round, ExternalTxID: tx, Currency: eur}
	for _, o := range opts {
		o(&g)
	}
	return g
}

func closed(g *domain.GameTx) { g.RoundClosed = true }
func promo(g *domain.GameTx)  { g.Promo = true }
func inGame(name string) func(*domain.GameTx) {
	return func(g *domain.GameTx) { g.Game = name }
}

func (l *ledger) bet(tx, round, amount string, opts ...func(*domain.GameTx)) domain.Event {
	return l.do(func(r domain.Reader, env domain.Env) (domain.Change, error) {
		return domain.DecideBet(r, game(tx, round, opts...), money(amount), env)
	})
}

func (l *ledger) win(tx, round, amount string, opts ...func(*domain.GameTx)) domain.Event {
	return l.do(func(r domain.Reader, env domain.Env) (domain.Change, error) {
		return domain.DecideWin(r, game(tx, round, opts...), money(amount), "", env)
	})
}

func (l *ledger) rollback(tx, round, ref string, opts ...func(*domain.GameTx)) domain.Event {
	return l.do(func(r domain.Reader, env domain.Env) (domain.Change, error) {
		return domain.DecideRollback(r, game(tx, round, opts...), ref, env)
	})
}

// project applies every event of l to both projections in memory.
func project(t *testing.T, events []domain.Event) *projections.Memory {
	t.Helper()
	m := projections.NewMemory()
	for _, n := range projections.All {
		p, err := projections.ByName(n)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			if _, err := m.Apply(p, e); err != nil {
				t.Fatalf("%s: event %d (%s): %v", n, e.Position, e.Type, err)
			}
		}
	}
	return m
}

func row(m *projections.Memory, id string) projections.Transaction {
	r, _ := m.Row(id)
	return r
}

func ggr(m *projections.Memory, day time.Time, game string) projections.GGRDelta {
	k := projections.GGRKey{ClientID: "acme", Day: time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, time.UTC),
		Provider: "prov", Game: game, Currency: "EUR"}
	if g, ok := m.GGR[k]; ok {
		return *g
	}
	return projections.GGRDelta{}
}

func TestHistoryRows(t *testing.T) {
	// given a bet and a win in one round, a refunded bet and a promo spin
	l := newLedger(t)
	bet := l.bet("b1", "r1", "10.00")
	win := l.win("w1", "r1", "25.00", closed)
	bet2 := l.bet("b2", "r2", "5.00")
	refund := l.rollback("rb", "r2", "b2")
	free := l.bet("b3", "r3", "0.00", promo)
	// when they are projected
	m := project(t, l.events)
	// then
	tests := []struct {
		name   string
		got    projections.Transaction
		typ    projections.TxType
		amount int64
		status projections.Status
	}{
		{"deposit is positive", row(m, l.events[0].ID), projections.TypeDeposit, 100_00, projections.StatusSettled},
		{"bet is negative", row(m, bet.ID), projections.TypeBet, -10_00, projections.StatusSettled},
		{"win is positive", row(m, win.ID), projections.TypeWin, 25_00, projections.StatusSettled},
		{"refunded bet is rolled back", row(m, bet2.ID), projections.TypeBet, -5_00, projections.StatusRolledBack},
		{"refund is positive", row(m, refund.ID), projections.TypeRollback, 5_00, projections.StatusSettled},
		{"free spin moves nothing", row(m, free.ID), projections.TypeBet, 0, projections.StatusSettled},
		{"closed round is settled", row(m, projections.GameResultID("acme", "prov", "r1")), projections.TypeGameResult, 15_00, projections.StatusSettled},
		{"refunded round is rolled back", row(m, projections.GameResultID("acme", "prov", "r2")), projections.TypeGameResult, 0, projections.StatusRolledBack},
		{"open round is pending", row(m, projections.GameResultID("acme", "prov", "r3")), projections.TypeGameResult, 0, projections.StatusPending},
	}
	for _, tc := range tests {
		if tc.got.Type != tc.typ || tc.got.Amount != tc.amount || tc.got.Status != tc.status {
			t.Errorf("%s: got %s %d %s, want %s %d %s", tc.name, tc.got.Type, tc.got.Amount, tc.got.Status, tc.typ, tc.amount, tc.status)
		}
	}
	if r := row(m, refund.ID); r.Position != refund.Position || row(m, bet2.ID).Position != refund.Position {
		t.Errorf("a rolled-back bet's position is the rollback's: bet %d, rollback %d", row(m, bet2.ID).Position, refund.Position)
	}
	if r := row(m, projections.GameResultID("acme", "prov", "r1")); r.Seq != bet.Position || r.Sub != 1 || r.Position != win.Position {
		t.Errorf("game result r1: seq %d sub %d position %d", r.Seq, r.Sub, r.Position)
	}
	if b := m.Balances[domain.PlayerWallet("acme", "p1", eur)]; b == nil || b.Balance != 115_00 || b.Position != free.Position {
		t.Errorf("balance = %+v, want 115.00 at %d", b, free.Position)
	}
	if n := m.Len(); n != 9 {
		t.Errorf("%d history rows, want 6 events and 3 game results", n)
	}
}

func TestGGRBooksRollbacksOnTheirDay(t *testing.T) {
	// given bets and wins on day 1, rolled back on day 2 from another game
	l := newLedger(t)
	l.bet("b1", "r1", "10.00", inGame("slot-a"))
	l.bet("b2", "r2", "4.00", inGame("slot-a"), promo)
	l.win("w1", "r2", "30.00", inGame("slot-a"), closed)
	l.now = day2
	l.rollback("rb1", "r1", "b1", inGame("other"))
	l.rollback("rb2", "r2", "w1", inGame("other"))
	l.bet("b3", "", "1.00", inGame("slot-a"))
	// when
	m := project(t, l.events)
	// then day 1 keeps its bets and wins, day 2 gets the adjustments,
	// booked against the game (and promo kind) of what they undo
	d1, d2 := ggr(m, day1, "slot-a"), ggr(m, day2, "slot-a")
	if d1.Bets != 10_00 || d1.PromoBets != 4_00 || d1.Wins != 30_00 || d1.BetRefunds != 0 || d1.WinReversals != 0 {
		t.Errorf("day 1 = %+v", d1)
	}
	if d2.Bets != 1_00 || d2.BetRefunds != 10_00 || d2.WinReversals != 30_00 || d2.Wins != 0 {
		t.Errorf("day 2 = %+v", d2)
	}
	if other := ggr(m, day2, "other"); other != (projections.GGRDelta{}) {
		t.Errorf("the rollback's own game got %+v", other)
	}
	rounds := map[string]bool{}
	for k, start := range m.Rounds {
		rounds[start.Day.Format(time.DateOnly)+" "+start.Game+" "+k.Round] = true
	}
	want := map[string]bool{"2025-03-01 slot-a r1": true, "2025-03-01 slot-a r2": true, "2025-03-02 slot-a tx:b3": true}
	if fmt.Sprint(rounds) != fmt.Sprint(want) {
		t.Errorf("rounds = %v, want %v", rounds, want)
	}
	if d1.Rounds != 2 || d2.Rounds != 1 {
		t.Errorf("rounds per day %d and %d, want 2 and 1 (a rollback starts no round)", d1.Rounds, d2.Rounds)
	}
}

// A round is counted once, in the group of its earliest (day, game) bet,
// whatever order its bets are applied in: its bets may be on several
// streams, which the projector applies from different partitions.
func TestRoundsAreCountedWhereTheyStart(t *testing.T) {
	key := func(day time.Time, game string) projections.GGRKey {
		return projections.GGRKey{ClientID: "acme", Day: day, Provider: "prov", Game: game, Currency: "EUR"}
	}
	bet := func(day time.Time, game, round string) projections.Changes {
		k := key(day, game)
		return projections.Changes{GGR: []projections.GGRDelta{{GGRKey: k, Scale: 2, Bets: 1_00}},
			Rounds: []projections.GGRMember{{GGRKey: k, Member: round}}}
	}
	tests := []struct {
		name string
		bets []projections.Changes
		want map[string]int64 // "day game" -> rounds
	}{
		{"two bets of a round on one day and game: one round",
			[]projections.Changes{bet(day1, "a", "r1"), bet(day1, "a", "r1")}, map[string]int64{"03-01 a": 1}},
		{"a round over midnight counts on its first day",
			[]projections.Changes{bet(day1, "a", "r1"), bet(day2, "a", "r1")}, map[string]int64{"03-01 a": 1, "03-02 a": 0}},
		{"... also when the later bet is applied first",
			[]projections.Changes{bet(day2, "a", "r1"), bet(day1, "a", "r1")}, map[string]int64{"03-01 a": 1, "03-02 a": 0}},
		{"a round over two games of one day counts in the least game id",
			[]projections.Changes{bet(day1, "b", "r1"), bet(day1, "a", "r1")}, map[string]int64{"03-01 a": 1, "03-01 b": 0}},
		{"distinct rounds count apart",
			[]projections.Changes{bet(day1, "a", "r1"), bet(day1, "a", "r2"), bet(day2, "a", "r3")},
			map[string]int64{"03-01 a": 2, "03-02 a": 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := projections.NewMemory()
			for _, ch := range tc.bets {
				m.ApplyChanges(ch)
			}
			got := map[string]int64{}
			for k, g := range m.GGR {
				got[k.Day.Format("01-02")+" "+k.Game] = g.Rounds
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("rounds per group %v, want %v", got, tc.want)
			}
		})
	}
}

func TestInvalidEvents(t *testing.T) {
	l := newLedger(t)
	bet := l.bet("b1", "r1", "10.00")
	hist, _ := projections.ByName(projections.History)
	bal, _ := projections.ByName(projections.Balances)
	none := func(projections.GameTxKey) (projections.GameTx, bool) { return projections.GameTx{}, false }
	mutate := func(f func(*domain.Event)) domain.Event {
		e := bet
		e.Data.Postings = append([]domain.Posting(nil), bet.Data.Postings...)
		f(&e)
		return e
	}
	refund := l.rollback("rb", "r1", "b1")
	tests := []struct {
		name string
		p    projections.Projection
		e    domain.Event
		want string
	}{
		{"unknown currency", hist, mutate(func(e *domain.Event) { e.Data.Currency = "ZZZQ" }), `currency "ZZZQ"`},
		{"unknown type", bal, mutate(func(e *domain.Event) { e.Type = "wallet.teleported.v1" }), "unknown event type"},
		{"amount too precise", bal, mutate(func(e *domain.Event) { e.Data.Postings[0].Amount = "-1.001" }), "posting on"},
		{"posting in another currency", hist, mutate(func(e *domain.Event) { e.Data.Postings[0].Account = "player:acme:p1:USD" }), "in an event of EUR"},
		{"rollback of a bet the history lacks", hist, refund, "does not hold"},
		{"bet without a provider", hist, mutate(func(e *domain.Event) { e.Data.Provider = "" }), "without a provider"},
		{"player wallet without its player", bal, mutate(func(e *domain.Event) { e.Data.Postings[0].Account = "player:acme:EUR" }), "malformed account id"},
		{"client wallet with a player", bal, mutate(func(e *domain.Event) { e.Data.Postings[0].Account = "client:acme:p1:EUR" }), "malformed account id"},
		{"player wallet with an empty player", bal, mutate(func(e *domain.Event) { e.Data.Postings[0].Account = "player:acme::EUR" }), "malformed account id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.p.Apply(tc.e, none)
			var ie *projections.InvalidEventError
			if !errors.As(err, &ie) || !errors.Is(err, projections.ErrInvalidEvent) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want an InvalidEventError saying %q", err, tc.want)
			}
		})
	}
}

func TestCheckpointRule(t *testing.T) {
	l := newLedger(t)
	e1 := l.bet("b1", "r1", "1.00") // version 2 of p1's stream
	e2 := l.bet("b2", "r1", "1.00") // version 3
	p, _ := projections.ByName(projections.Balances)
	m := projections.NewMemory()
	steps := []struct {
		name    string
		e       domain.Event
		applied bool
		gap     bool
	}{
		{"version 2 first is a gap", e1, false, true},
		{"version 1 applies", l.events[0], true, false},
		{"version 3 before 2 is a gap", e2, false, true},
		{"version 2 applies", e1, true, false},
		{"version 2 again is skipped", e1, false, false},
		{"version 1 again is skipped", l.events[0], false, false},
		{"version 3 applies", e2, true, false},
	}
	for _, s := range steps {
		applied, err := m.Apply(p, s.e)
		var gap *projections.GapError
		if applied != s.applied || errors.As(err, &gap) != s.gap || (!s.gap && err != nil) {
			t.Fatalf("%s: applied %v, err %v", s.name, applied, err)
		}
	}
	if b := m.Balances[domain.PlayerWallet("acme", "p1", eur)]; b.Balance != 98_00 {
		t.Errorf("balance %d after redeliveries, want 9800", b.Balance)
	}
}

// A game result shared by two players' streams takes its place and first
// fields from the lowest position, whatever order the streams arrive in.
func TestGameResultOrderIndependent(t *testing.T) {
	l := newLedger(t)
	l.do(func(r domain.Reader, env domain.Env) (domain.Change, error) {
		return domain.DecideDeposit(r, domain.ClientTx{Client: "acme", Player: "p2", ExternalTxID: "dep2", Currency: eur}, money("50.00"), env)
	})
	first := l.bet("b1", "shared", "3.00")
	second := l.do(func(r domain.Reader, env domain.Env) (domain.Change, error) {
		return domain.DecideBet(r, game("b2", "shared", func(g *domain.GameTx) { g.Player = "p2"; g.Game = "other" }), money("2.00"), env)
	})
	inOrder := project(t, l.events)
	reversed := project(t, []domain.Event{l.events[0], l.events[1], second, first})
	id := projections.GameResultID("acme", "prov", "shared")
	a, b := row(inOrder, id), row(reversed, id)
	if a != b {
		t.Errorf("order matters:\n%+v\n%+v", a, b)
	}
	if a.Seq != first.Position || a.PlayerID != "p1" || a.Game != "slot" || a.Amount != -5_00 || a.OpenBets != 2 {
		t.Errorf("game result = %+v", a)
	}
}

type fakePositions struct{ pos atomic.Int64 }

func (f *fakePositions) Position(context.Context, projections.Name) (int64, error) {
	return f.pos.Load(), nil
}

func TestQueriesWaitForPosition(t *testing.T) {
	pos := &fakePositions{}
	pos.pos.Store(5)
	q := &projections.Queries{Positions: pos, MaxWait: 300 * time.Millisecond, Poll: 5 * time.Millisecond,
		Reports: noReports{}}
	ctx := context.Background()
	tests := []struct {
		name    string
		min     int64
		raiseTo int64 // after 50ms
		wantPos int64
		behind  bool
	}{
		{name: "already there", min: 5, wantPos: 5},
		{name: "no minimum", min: 0, wantPos: 5},
		{name: "catches up within the wait", min: 7, raiseTo: 8, wantPos: 8},
		{name: "never catches up", min: 100, behind: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.raiseTo > 0 {
				go func() { time.Sleep(50 * time.Millisecond); pos.pos.Store(tc.raiseTo) }()
			}
			_, got, err := q.GGR(ctx, projections.ReportQuery{}, tc.min)
			var be *projections.BehindError
			if tc.behind != errors.As(err, &be) || (!tc.behind && (err != nil || got != tc.wantPos)) {
				t.Fatalf("position %d, err %v", got, err)
			}
			if tc.behind && (be.Want != 100 || be.Have != pos.pos.Load()) {
				t.Errorf("behind error = %+v", be)
			}
		})
	}
}

type noReports struct{}

func (noReports) GGR(context.Context, projections.ReportQuery) ([]projections.GGRRow, error) {
	return nil, nil
}
func (noReports) Commission(context.Context, projections.ReportQuery) ([]projections.CommissionRow, error) {
	return nil, nil
}

func TestGameResultIDIsStable(t *testing.T) {
	a := projections.GameResultID("acme", "prov", "r1")
	if a != projections.GameResultID("acme", "prov", "r1") || a == projections.GameResultID("acme", "prov", "r2") ||
		a == projections.GameResultID("acme", "provr", "1") || len(a) != 36 || a[14] != '5' {
		t.Errorf("GameResultID = %s", a)
	}
}

func TestPlayerMonthOf(t *testing.T) {
	t.Parallel()
	member := func(day time.Time) projections.GGRMember {
		return projections.GGRMember{GGRKey: projections.GGRKey{ClientID: "acme", Day: day, Provider: "prov", Game: "g",
			Currency: "EUR"}, Member: "p1"}
	}
	cases := []struct {
		day   time.Time
		month time.Time
		bit   int64
	}{
		{time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), 1},
		{time.Date(2024, 1, 31, 0, 0, 0, 0, time.UTC), time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), 1 << 30},
		{time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC), 1 << 28},
		{time.Date(2025, 12, 15, 0, 0, 0, 0, time.UTC), time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC), 1 << 14},
	}
	for _, c := range cases {
		k, bit := projections.PlayerMonthOf(member(c.day))
		want := projections.PlayerMonth{ClientID: "acme", Month: c.month, Currency: "EUR", PlayerID: "p1"}
		if k != want || bit != c.bit {
			t.Errorf("%s: %+v %b, want %+v %b", c.day.Format(time.DateOnly), k, bit, want, c.bit)
		}
	}
	// Bets on two games of one day and on another day of the month: one
	// row, two bits.
	m := projections.NewMemory()
	m.ApplyChanges(projections.Changes{Players: []projections.GGRMember{member(cases[0].day), member(cases[1].day)}})
	g := member(cases[0].day)
	g.Game = "other"
	m.ApplyChanges(projections.Changes{Players: []projections.GGRMember{g}})
	k, _ := projections.PlayerMonthOf(g)
	if len(m.PlayerMonths) != 1 || m.PlayerMonths[k] != 1|1<<30 || len(m.Players) != 3 {
		t.Errorf("memory: %v months, %d members; want January with days 1 and 31, 3 members", m.PlayerMonths, len(m.Players))
	}
}
