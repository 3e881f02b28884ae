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
	"github.com/pitboss/pitboss/projections/projectionstest"
)

var (
	day1 = time.Date(2025, 3, 1, 23, 0, 0, 0, time.UTC)
	day2 = time.Date(2025, 3, 2, 1, 0, 0, 0, time.UTC)
)

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
	l := projectionstest.NewLedger(t, day1)
	l.Deposit(projectionstest.Client("acme", "p1", "dep", projectionstest.EUR), "100.00")
	bet := l.Bet(projectionstest.Game("b1", "r1"), "10.00")
	hist, _ := projections.ByName(projections.History)
	bal, _ := projections.ByName(projections.Balances)
	none := func(projections.GameTxKey) (projections.GameTx, bool) { return projections.GameTx{}, false }
	mutate := func(f func(*domain.Event)) domain.Event {
		e := bet
		e.Data.Postings = append([]domain.Posting(nil), bet.Data.Postings...)
		f(&e)
		return e
	}
	refund := l.Rollback(projectionstest.Game("rb", "r1"), "b1")
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

// fakePositions answers pos, and raiseTo from the raiseOn-th read on (0:
// never), so a test sees the wait read again without timing it.
type fakePositions struct {
	pos, raiseOn, raiseTo int64
	reads                 atomic.Int64
}

func (f *fakePositions) Position(context.Context, projections.Name) (int64, error) {
	if n := f.reads.Add(1); f.raiseOn > 0 && n >= f.raiseOn {
		return f.raiseTo, nil
	}
	return f.pos, nil
}

func TestQueriesWaitForPosition(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		min     int64
		raiseOn int64 // the read that first sees raiseTo
		raiseTo int64
		maxWait time.Duration
		wantPos int64
		behind  bool
	}{
		{name: "already there", min: 5, maxWait: time.Minute, wantPos: 5},
		{name: "no minimum", min: 0, maxWait: time.Minute, wantPos: 5},
		{name: "catches up within the wait", min: 7, raiseOn: 3, raiseTo: 8, maxWait: time.Minute, wantPos: 8},
		{name: "never catches up", min: 100, maxWait: 50 * time.Millisecond, behind: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pos := &fakePositions{pos: 5, raiseOn: tc.raiseOn, raiseTo: tc.raiseTo}
			q := &projections.Queries{Positions: pos, MaxWait: tc.maxWait, Poll: time.Millisecond, Reports: noReports{}}
			_, got, err := q.GGR(ctx, projections.ReportQuery{}, tc.min)
			var be *projections.BehindError
			if tc.behind != errors.As(err, &be) || (!tc.behind && (err != nil || got != tc.wantPos)) {
				t.Fatalf("position %d, err %v", got, err)
			}
			if tc.behind && (be.Want != 100 || be.Have != 5 || pos.reads.Load() < 2) {
				t.Errorf("behind error = %+v after %d reads", be, pos.reads.Load())
			}
			if tc.raiseOn > 0 && pos.reads.Load() != tc.raiseOn {
				t.Errorf("%d reads, want %d: the wait stops at the first read that is there", pos.reads.Load(), tc.raiseOn)
			}
		})
	}
}

// fakeClientHeads holds each client's event positions (ascending).
type fakeClientHeads map[string][]int64

func (f fakeClientHeads) ClientHead(_ context.Context, clientID string, atMost int64) (int64, error) {
	var last int64
	for _, p := range f[clientID] {
		if p <= atMost {
			last = p
		}
	}
	return last, nil
}

type fakeLedger int64

func (f fakeLedger) Head(context.Context) (int64, []byte, error) { return int64(f), nil, nil }

// TestQueriesShowTheClientsOwnPositions: with Clients set, a client is
// shown its last event at or below the platform's position, never the
// platform's position, and read-your-writes still holds.
func TestQueriesShowTheClientsOwnPositions(t *testing.T) {
	ctx := context.Background()
	// acme wrote at 3 and 7; beta at every other position up to 20, the head
	heads := fakeClientHeads{"acme": {3, 7}, "beta": {1, 2, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}}
	tests := []struct {
		name      string
		client    string
		watermark int64
		min       int64
		wantPos   int64
		beyond    *projections.BeyondHeadError
		behind    *projections.BehindError
	}{
		{name: "acme past its last write", client: "acme", watermark: 20, wantPos: 7},
		{name: "acme between its writes", client: "acme", watermark: 5, wantPos: 3},
		{name: "acme reads its write", client: "acme", watermark: 20, min: 7, wantPos: 7},
		{name: "acme before any write", client: "acme", watermark: 2, wantPos: 0},
		{name: "beta", client: "beta", watermark: 20, wantPos: 20},
		{name: "a client without events", client: "gamma", watermark: 20, wantPos: 0},
		{name: "beyond acme's head though below the platform's", client: "acme", watermark: 5, min: 8,
			beyond: &projections.BeyondHeadError{Want: 8, Head: 7}},
		{name: "beyond acme's head, read model past it", client: "acme", watermark: 20, min: 8,
			beyond: &projections.BeyondHeadError{Want: 8, Head: 7}},
		{name: "none of acme's, between two of them", client: "acme", watermark: 6, min: 5, wantPos: 5},
		{name: "behind, reported at acme's position", client: "acme", watermark: 5, min: 7,
			behind: &projections.BehindError{Source: "history", Want: 7, Have: 3, RetryAfter: time.Second}},
		{name: "no client: the platform's position", client: "", watermark: 20, wantPos: 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := &projections.Queries{Positions: &fakePositions{pos: tc.watermark}, Ledger: fakeLedger(20), Clients: heads,
				MaxWait: 20 * time.Millisecond, Poll: time.Millisecond, Reports: noReports{}}
			_, got, err := q.GGR(ctx, projections.ReportQuery{ClientID: tc.client}, tc.min)
			var beyond *projections.BeyondHeadError
			var behind *projections.BehindError
			switch {
			case tc.beyond != nil:
				if !errors.As(err, &beyond) || *beyond != *tc.beyond {
					t.Fatalf("err %v, want %+v", err, tc.beyond)
				}
			case tc.behind != nil:
				if !errors.As(err, &behind) || *behind != *tc.behind {
					t.Fatalf("err %v, want %+v", err, tc.behind)
				}
			case err != nil || got != tc.wantPos:
				t.Fatalf("position %d, err %v; want %d", got, err, tc.wantPos)
			}
		})
	}
	t.Run("ledger position is the client's head", func(t *testing.T) {
		q := &projections.Queries{Ledger: fakeLedger(20), Clients: heads}
		if pos, err := q.LedgerPosition(ctx, "acme", 7); err != nil || pos != 7 {
			t.Fatalf("acme: %d %v", pos, err)
		}
		var beyond *projections.BeyondHeadError
		if _, err := q.LedgerPosition(ctx, "acme", 9); !errors.As(err, &beyond) || beyond.Head != 7 {
			t.Fatalf("acme beyond its head: %v", err)
		}
		if pos, err := q.LedgerPosition(ctx, "", 0); err != nil || pos != 20 {
			t.Fatalf("no client: %d %v", pos, err)
		}
	})
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

// The ids are stored in every history: they must never change. Pinned from
// the first implementation (SHA-1 of "pitboss.game_result", client,
// provider and round, NUL-separated, in the version-5 layout).
func TestGameResultIDIsPinned(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ client, provider, round, want string }{
		{"acme", "prov", "r1", "5ed03c19-f567-5c6f-a5ef-a1eabb0d60f9"},
		{"client-1", "provider-1", "round-1000022", "d4799513-fb35-5996-b418-f214e06c3c34"},
		{strings.Repeat("c", 64), strings.Repeat("p", 64), strings.Repeat("r", 120), "1117dd6a-a6c1-583a-a81d-afbeca83aff6"},
		{"", "", "", "34d1a7b7-70a3-5275-91b4-59850019e4c8"},
	} {
		if got := projections.GameResultID(tc.client, tc.provider, tc.round); got != tc.want {
			t.Errorf("GameResultID(%.8q, %.8q, %.8q) = %s, want %s", tc.client, tc.provider, tc.round, got, tc.want)
		}
	}
}

func BenchmarkGameResultID(b *testing.B) {
	for b.Loop() {
		_ = projections.GameResultID("client-1", "provider-1", "round-1000022")
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

// A Memory that holds only part of the history (a rebuild's slice) asks
// Earlier for the bets and wins it lacks, and hands back the rollback
// marks of rows it does not hold instead of dropping them.
func TestMemoryEarlierAndLateMarks(t *testing.T) {
	held := projections.GameTxKey{ClientID: "acme", Provider: "prov", ExternalTxID: "held"}
	gone := projections.GameTxKey{ClientID: "acme", Provider: "prov", ExternalTxID: "gone"}
	m := projections.NewMemory()
	m.ApplyChanges(projections.Changes{Transactions: []projections.Transaction{{ID: "t1", ClientID: "acme",
		Type: projections.TypeBet, Provider: "prov", ExternalTxID: "held", Game: "g1", Status: projections.StatusSettled, Position: 1}}})
	if _, ok := m.Lookup(gone); ok {
		t.Fatal("found a bet the memory does not hold, without Earlier")
	}
	m.Earlier = func(k projections.GameTxKey) (projections.GameTx, bool) {
		return projections.GameTx{Type: projections.TypeBet, Game: "g0", Promo: true}, k == gone
	}
	if g, ok := m.Lookup(gone); !ok || g.Game != "g0" || !g.Promo {
		t.Errorf("Lookup of a bet of an earlier slice = %+v, %v; want Earlier's", g, ok)
	}
	if g, ok := m.Lookup(held); !ok || g.Game != "g1" {
		t.Errorf("Lookup of a bet held = %+v, %v; want the memory's own", g, ok)
	}
	m.ApplyChanges(projections.Changes{RolledBack: []projections.RollbackMark{{Key: held, Position: 5}, {Key: gone, Position: 6}}})
	if len(m.LateMarks) != 1 || m.LateMarks[0].Key != gone || m.LateMarks[0].Position != 6 {
		t.Errorf("late marks = %+v, want only the mark of the bet not held", m.LateMarks)
	}
	if r, _ := m.Row("t1"); r.Status != projections.StatusRolledBack || r.Position != 5 {
		t.Errorf("held bet after its rollback: %s at %d, want rolled_back at 5", r.Status, r.Position)
	}
}
