package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/postgres/readstore"
	"github.com/pitboss/pitboss/audit"
)

// TestSeedLedgerVerifies generates a ledger into a fresh database and runs
// the auditor's own verification over it: the hash chain, the canonical
// bodies, double entry, and the accounts table against the fold of the
// events. Every event must apply to the read models (none dead-lettered
// by a replay), and the mix must hold every client, currency, provider and
// kind of event the benchmark queries.
func TestSeedLedgerVerifies(t *testing.T) {
	pool, _ := pgtest.NewDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	end := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	res, err := seedLedger(ctx, pool, seedOptions{Events: 20_000, Players: 300, End: end, Span: 10 * 24 * time.Hour, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if res.Events != 20_000 || res.Accounts == 0 || len(res.Players) == 0 {
		t.Fatalf("result %+v", res)
	}

	rep, err := auditstore.NewAudit(pool).Verify(ctx, auditstore.VerifyOptions{SkipReadModels: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{audit.CheckHashChain, audit.CheckEventBodies, audit.CheckDoubleEntry, audit.CheckAccounts} {
		c, ok := rep.Check(name)
		if !ok || !c.OK {
			t.Errorf("check %s: %+v", name, c)
		}
	}
	if rep.Events != 20_000 || rep.HeadPosition != 20_000 {
		t.Errorf("verify saw %d events, head %d", rep.Events, rep.HeadPosition)
	}

	rm := readstore.NewReadModels(pool)
	replayed, err := rm.Compare(ctx, readstore.ReplayOptions{Full: true, Shadow: true})
	if err != nil {
		t.Fatal(err)
	}
	if replayed.Events != 20_000 || replayed.Skipped != 0 {
		t.Errorf("replay read %d events, %d of them not applicable", replayed.Events, replayed.Skipped)
	}
	if _, err := rm.Swap(ctx, readstore.SwapOptions{}); err != nil {
		t.Fatal(err)
	}
	if again, err := rm.Compare(ctx, readstore.ReplayOptions{Full: true}); err != nil || again.Differences() != 0 {
		t.Errorf("after the swap, a rebuild differs in %d rows (%v)", again.Differences(), err)
	}

	var clients, currencies, providers, players int
	if err := pool.QueryRow(ctx, `SELECT count(DISTINCT body->'data'->>'client_id'), count(DISTINCT body->'data'->>'currency'),
		count(DISTINCT body->'data'->>'provider'), count(DISTINCT body->'data'->>'player_id') FROM events`).
		Scan(&clients, &currencies, &providers, &players); err != nil {
		t.Fatal(err)
	}
	if clients != 3 || currencies != 5 || providers < 4 || players < 100 {
		t.Errorf("mix: %d clients, %d currencies, %d providers (with none), %d players", clients, currencies, providers, players)
	}
	types := map[string]int{}
	rows, err := pool.Query(ctx, `SELECT event_type, count(*) FROM events GROUP BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var typ string
		var n int
		if err := rows.Scan(&typ, &n); err != nil {
			t.Fatal(err)
		}
		types[typ] = n
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	bets, wins, refunds := types["wallet.bet_placed.v1"], types["wallet.win_credited.v1"], types["wallet.bet_rolled_back.v1"]
	if bets == 0 || wins == 0 || refunds == 0 || types["game.launched.v1"] == 0 || types["wallet.deposited.v1"] == 0 {
		t.Errorf("event mix %v", types)
	}
	// About one spin in twenty is rolled back instead of won.
	if share := float64(refunds) / float64(bets); share < 0.03 || share > 0.08 {
		t.Errorf("rollbacks are %.3f of bets, want about 0.05 (%v)", share, types)
	}
	var first, last time.Time
	if err := pool.QueryRow(ctx, `SELECT min(occurred_at), max(occurred_at) FROM events`).Scan(&first, &last); err != nil {
		t.Fatal(err)
	}
	if first.Before(end.Add(-10*24*time.Hour)) || last.After(end) || last.Sub(first) < 9*24*time.Hour {
		t.Errorf("events from %s to %s, want the 10 days before %s", first, last, end)
	}

	// A second run on a store that has events is refused.
	if _, err := seedLedger(ctx, pool, seedOptions{Events: 10}); !errors.Is(err, eventstore.ErrLedgerNotEmpty) {
		t.Errorf("second seed: %v, want errStoreNotEmpty", err)
	}
}
