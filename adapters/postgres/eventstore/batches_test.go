package eventstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/postgres/storetest"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/commands/ledgertest"
	"github.com/pitboss/pitboss/domain"
)

// These are the Postgres writer's own behaviours under the commands: group
// commit, several writers on one database. What every ledger does is in
// ledger_contract_test.go.

// player is one player's wallet at one provider, betting through h.
type player struct {
	h                    *commands.Handler
	client, id, provider string
}

func newPlayer(h *commands.Handler) player {
	return player{h: h, client: storetest.UID("c"), id: storetest.UID("p"), provider: storetest.UID("prov")}
}

func (p player) wallet() domain.AccountID { return domain.PlayerWallet(p.client, p.id, eur) }
func (p player) house() domain.AccountID  { return domain.HouseAccount(p.client, p.provider, eur) }

func (p player) call(tx, round string) domain.GameTx {
	return domain.GameTx{Client: p.client, Player: p.id, Provider: p.provider, Game: "g1", Round: round,
		Session: "s1", ExternalTxID: tx, Currency: eur}
}

func (p player) bet(tx, amount, round string) (commands.Result, error) {
	m, err := domain.ParseMoney(amount, eur)
	if err != nil {
		return commands.Result{}, err
	}
	return p.h.PlaceBet(context.Background(), p.call(tx, round), m)
}

// TestLedgerSameCallInsideOneBatch: ten copies of one bet that meet inside
// one batch (the writer waits until it holds all ten) move the money once
// and answer alike.
func TestLedgerSameCallInsideOneBatch(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	_, h := storetest.StartLedger(t, pool, eventstore.LedgerConfig{})
	const calls = 10
	_, batched := storetest.StartLedger(t, pool, eventstore.LedgerConfig{MaxBatch: calls, Linger: time.Minute})
	p := newPlayer(h)
	deposit(t, h, p.client, p.id, "20.00")
	same := p
	same.h = batched

	results := make([]commands.Result, calls)
	errs := make([]error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() { results[i], errs[i] = same.bet("bet-1", "5.00", "r1") })
	}
	wg.Wait()
	ledgertest.OneMoveAnswers(t, results, errs, "5.00", "15.00")
	if st := balanceOf(t, pool, p.wallet()); st.Balance != 1500 || st.Version != 2 {
		t.Errorf("player wallet %+v, want 15.00 at version 2", st)
	}

	_, err := p.bet("bet-1", "6.00", "r1")
	var conflict *domain.IdempotencyConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("same id, different amount: got %v, want *domain.IdempotencyConflictError", err)
	}
	if conflict.Field != "amount" || conflict.Original != "5.00" || conflict.Given != "6.00" {
		t.Errorf("conflict %+v, want field amount 5.00 -> 6.00", conflict)
	}
	if st := balanceOf(t, pool, p.wallet()); st.Balance != 1500 {
		t.Errorf("balance %d after the conflicting retry, want 1500", st.Balance)
	}
	checkLedger(t, pool)
}

// TestLedgerGroupCommitBatches: with 64 callers at once, one transaction carries
// many operations.
func TestLedgerGroupCommitBatches(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	_, h := storetest.StartLedger(t, pool, eventstore.LedgerConfig{})
	const callers, betsEach = 64, 8
	players := make([]player, callers)
	var wg sync.WaitGroup
	for i := range players {
		players[i] = newPlayer(h)
		wg.Go(func() { deposit(t, h, players[i].client, players[i].id, "100.00") })
	}
	wg.Wait()
	errs := make(chan error, callers*betsEach)
	for _, p := range players {
		wg.Go(func() {
			for j := range betsEach {
				if _, err := p.bet(fmt.Sprintf("bet-%d", j), "1.00", ""); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var events, txs int
	if err := pool.QueryRow(context.Background(),
		`SELECT count(*), count(DISTINCT tx_id) FROM events WHERE event_type = $1`, domain.EventBetPlaced).
		Scan(&events, &txs); err != nil {
		t.Fatal(err)
	}
	t.Logf("group commit: %d bets in %d transactions (%.1f per commit)", events, txs, float64(events)/float64(txs))
	if events != callers*betsEach {
		t.Fatalf("%d bet events, want %d", events, callers*betsEach)
	}
	if txs*4 > events {
		t.Errorf("%d transactions for %d events: the writer is not batching", txs, events)
	}
	checkLedger(t, pool)
}

// TestLedgerTwoWritersInterleave runs two ledgers on one database, as two API
// processes would, and bets against the same wallets through both.
func TestLedgerTwoWritersInterleave(t *testing.T) {
	t.Parallel()
	pool, url := pgtest.NewDatabase(t)
	_, h := storetest.StartLedger(t, pool, eventstore.LedgerConfig{})
	pool2, err := postgres.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool2.Close)
	_, h2 := storetest.StartLedger(t, pool2, eventstore.LedgerConfig{})
	handlers := []*commands.Handler{h, h2}

	const wallets, betsEach = 5, 40 // 200 bets; each wallet holds 30 of them
	players := make([]player, wallets)
	for i := range players {
		players[i] = newPlayer(h)
		players[i].provider = "prov" // one house account for all of them
		players[i].client = players[0].client
		deposit(t, h, players[i].client, players[i].id, "30.00")
	}
	type outcome struct {
		wallet, writer int
		err            error
	}
	results := make(chan outcome, wallets*betsEach)
	var wg sync.WaitGroup
	for i := range wallets * betsEach {
		wg.Go(func() {
			w, h := i%wallets, i%len(handlers)
			_, err := handlers[h].PlaceBet(context.Background(), players[w].call(fmt.Sprintf("bet-%d", i), ""),
				domain.FromMinor(100, eur))
			results <- outcome{w, h, err}
		})
	}
	wg.Wait()
	close(results)
	accepted := make([]int, wallets)
	perWriter := make([]int, len(handlers))
	for r := range results {
		switch {
		case r.err == nil:
			accepted[r.wallet]++
			perWriter[r.writer]++
		case errors.Is(r.err, domain.ErrInsufficientFunds):
		default:
			t.Errorf("wallet %d via writer %d: %v", r.wallet, r.writer, r.err)
		}
	}
	for i, n := range accepted {
		if n != 30 {
			t.Errorf("wallet %d: %d bets accepted, want 30", i, n)
		}
		if st := balanceOf(t, pool, players[i].wallet()); st.Balance != 0 || st.Version != 31 {
			t.Errorf("wallet %d: %+v, want balance 0 at version 31", i, st)
		}
		checkStreamVersions(t, pool, players[i].wallet(), 31)
	}
	if st := balanceOf(t, pool, players[0].house()); st.Balance != 150_00 {
		t.Errorf("house balance %d, want 15000", st.Balance)
	}
	if perWriter[0] == 0 || perWriter[1] == 0 {
		t.Errorf("accepted per writer %v: both writers should have committed bets", perWriter)
	}
	t.Logf("accepted per writer: %v", perWriter)
	checkLedger(t, pool)
}
