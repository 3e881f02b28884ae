package readstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/postgres/readstore"
	"github.com/pitboss/pitboss/adapters/postgres/storetest"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
	pt "github.com/pitboss/pitboss/projections/projectionstest"
)

// rounds are the Rounds answer's shape a test compares: per round, its
// provider, player, status, totals and the external ids of its rows.
type roundSeen struct {
	provider, player string
	status           projections.Status
	totals           projections.RoundTotals
	rows             []string // type:external id, in history order
}

func seeRounds(t *testing.T, rounds []projections.Round) []roundSeen {
	t.Helper()
	out := make([]roundSeen, len(rounds))
	for i, r := range rounds {
		tot, err := r.Totals()
		if err != nil {
			t.Fatal(err)
		}
		out[i] = roundSeen{provider: r.Result.Provider, player: r.Result.PlayerID, status: r.Status(), totals: tot}
		for _, row := range r.Rows {
			out[i].rows = append(out[i].rows, string(row.Type)+":"+row.ExternalTxID)
		}
	}
	return out
}

// A round is read by the provider's round id, of one provider or of every
// provider the client bet with: its rows in history order (refunds,
// reversals, a rollback that found nothing, the ledger's close), its
// status and totals; another client's round is never found.
func TestRoundsByRoundID(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	rm := readstore.NewReadModels(pool)
	start := time.Date(2026, 3, 14, 10, 0, 0, 0, time.UTC)
	l := pt.NewLedger(t, start)
	l.Deposit(pt.Client("acme", "p1", "d1", pt.EUR), "100")
	l.Deposit(pt.Client("acme", "p2", "d2", pt.EUR), "100")
	l.Deposit(pt.Client("rival", "p1", "d3", pt.EUR), "100")
	// r1 at prov: two bets, one refunded, a win reversed, a rollback of a
	// transaction never booked.
	l.Bet(pt.Game("b1", "r1"), "10")
	l.Bet(pt.Game("b2", "r1"), "5")
	l.Rollback(pt.Game("rb1", "r1"), "b2")
	l.Win(pt.Game("w1", "r1", pt.Closed), "30", "b1")
	l.Rollback(pt.Game("rb2", "r1"), "w1")
	l.Rollback(pt.Game("rb3", "r1"), "ghost")
	// r1 at other (another player), r2 closed by the ledger, r3 all
	// refunded, and rival's own r1.
	l.Bet(pt.Game("ob1", "r1", func(g *domain.GameTx) { g.Provider = "other" }, pt.ByPlayer("p2")), "2")
	l.Bet(pt.Game("b3", "r2", pt.Promo), "0")
	l.Bet(pt.Game("b4", "r3"), "1")
	l.Rollback(pt.Game("rb4", "r3"), "b4")
	l.Bet(pt.Game("b1", "r1", pt.AtClient("rival")), "7")
	l.Now = start.Add(49 * time.Hour)
	l.CloseRound("acme", "prov", "r2", 48*time.Hour)
	for _, e := range l.Events {
		for _, n := range projections.All {
			p, err := projections.ByName(n)
			if err != nil {
				t.Fatal(err)
			}
			if err := storetest.ApplyOne(rm, p, e); err != nil {
				t.Fatalf("apply %s to %s: %v", e.Type, n, err)
			}
		}
	}

	r1 := roundSeen{provider: "prov", player: "p1", status: projections.StatusSettled,
		totals: projections.RoundTotals{Bets: 1500, Wins: 3000, Refunds: 500, Reversals: 3000, Net: -1000},
		rows:   []string{"bet:b1", "bet:b2", "rollback:rb1", "win:w1", "rollback:rb2", "rollback:rb3"}}
	tests := []struct {
		name string
		q    projections.RoundQuery
		want []roundSeen
	}{
		{"of a provider", projections.RoundQuery{ClientID: "acme", RoundID: "r1", Provider: "prov"}, []roundSeen{r1}},
		{"of the other provider", projections.RoundQuery{ClientID: "acme", RoundID: "r1", Provider: "other"},
			[]roundSeen{{provider: "other", player: "p2", status: projections.StatusPending,
				totals: projections.RoundTotals{Bets: 200, Net: -200}, rows: []string{"bet:ob1"}}}},
		// Two providers have an r1: both, without rows.
		{"of every provider, ambiguous", projections.RoundQuery{ClientID: "acme", RoundID: "r1"},
			[]roundSeen{{provider: "other", player: "p2", status: projections.StatusPending},
				{provider: "prov", player: "p1", status: projections.StatusSettled}}},
		{"closed by the ledger", projections.RoundQuery{ClientID: "acme", RoundID: "r2"},
			[]roundSeen{{provider: "prov", player: "p1", status: projections.StatusAutoClosed,
				rows: []string{"bet:b3", "round_close:"}}}},
		{"every bet refunded", projections.RoundQuery{ClientID: "acme", RoundID: "r3", Provider: "prov"},
			[]roundSeen{{provider: "prov", player: "p1", status: projections.StatusRolledBack,
				totals: projections.RoundTotals{Bets: 100, Refunds: 100}, rows: []string{"bet:b4", "rollback:rb4"}}}},
		{"another client's", projections.RoundQuery{ClientID: "rival", RoundID: "r1"},
			[]roundSeen{{provider: "prov", player: "p1", status: projections.StatusPending,
				totals: projections.RoundTotals{Bets: 700, Net: -700}, rows: []string{"bet:b1"}}}},
		{"unknown round", projections.RoundQuery{ClientID: "acme", RoundID: "r9"}, []roundSeen{}},
		{"another provider's name", projections.RoundQuery{ClientID: "acme", RoundID: "r2", Provider: "other"}, []roundSeen{}},
		{"a client without bets", projections.RoundQuery{ClientID: "nobody", RoundID: "r1"}, []roundSeen{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := rm.Rounds(context.Background(), tc.q)
			if err != nil {
				t.Fatal(err)
			}
			seen := seeRounds(t, got)
			if !slices.EqualFunc(seen, tc.want, func(a, b roundSeen) bool {
				return a.provider == b.provider && a.player == b.player && a.status == b.status && a.totals == b.totals &&
					slices.Equal(a.rows, b.rows)
			}) {
				t.Fatalf("rounds %+v\nwant %+v", seen, tc.want)
			}
			for _, r := range got {
				if r.Result.Type != projections.TypeGameResult || r.Result.ClientID != tc.q.ClientID ||
					r.Result.RoundID != tc.q.RoundID || r.Result.Currency != "EUR" {
					t.Fatalf("game result %+v", r.Result)
				}
			}
		})
	}
}
