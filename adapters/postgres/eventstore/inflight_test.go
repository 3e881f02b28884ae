package eventstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/postgres/storetest"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/commands/ledgertest"
	"github.com/pitboss/pitboss/internal/eventually"
)

// Two batches in flight: the writer sends the next batch, decided from its
// cache as if the one before had committed, once that one holds the ledger
// lock. The tests hold the player's account row from a transaction of
// their own, so the first batch, past the lock and its head check, waits
// for the row while the second waits for the lock: both provably in
// flight at once.

// lockWaits counts this database's lock waits of locktype: 'advisory' (a
// batch waiting for the ledger lock) or 'transactionid' (one waiting for
// the test's row), with the pid of one of them.
func lockWaits(t *testing.T, pool *pgxpool.Pool, locktype string) (n, pid int) {
	t.Helper()
	err := pool.QueryRow(context.Background(), `
		SELECT count(*), coalesce(min(l.pid), 0) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
		WHERE l.locktype = $1 AND NOT l.granted AND a.datname = current_database()`, locktype).Scan(&n, &pid)
	if err != nil {
		t.Fatal(err)
	}
	return n, pid
}

type betResult struct {
	tx  string
	err error
}

// betAsync places a bet of amount in a goroutine and reports on out.
func betAsync(p player, tx, amount string, out chan<- betResult) {
	go func() {
		_, err := p.bet(tx, amount, "")
		out <- betResult{tx: tx, err: err}
	}()
}

// inFlightPair puts two bets of 1.00 in flight at once on a player holding
// 9.00 with a warm cache: b1 holds the ledger lock and waits for the
// player's account row, which the returned transaction holds; b2 waits for
// the ledger lock. It returns b1's backend pid.
func inFlightPair(t *testing.T) (pool *pgxpool.Pool, l *eventstore.Ledger, p player, row pgx.Tx, b1PID int, out chan betResult) {
	t.Helper()
	pool, l, p = playerWithTen(t, eventstore.LedgerConfig{})
	row, b1PID, out = twoInFlight(t, pool, l, p)
	return pool, l, p, row, b1PID, out
}

// twoInFlight is inFlightPair for a player of l holding 10.00. out has
// room for a third result.
func twoInFlight(t *testing.T, pool *pgxpool.Pool, l *eventstore.Ledger, p player) (row pgx.Tx, b1PID int, out chan betResult) {
	t.Helper()
	if _, err := p.bet("warm", "1.00", ""); err != nil { // the house account, into the cache
		t.Fatal(err)
	}
	ctx := context.Background()
	row, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = row.Rollback(ctx) })
	if _, err := row.Exec(ctx, "SELECT 1 FROM accounts WHERE account_id = $1 FOR UPDATE", string(p.wallet())); err != nil {
		t.Fatal(err)
	}
	before := l.Stats().Pipelined
	out = make(chan betResult, 3)
	betAsync(p, "b1", "1.00", out)
	eventually.True(t, 30*time.Second, "b1 to wait for the account row", func() bool {
		n, pid := lockWaits(t, pool, "transactionid")
		b1PID = pid
		return n == 1
	})
	betAsync(p, "b2", "1.00", out)
	eventually.True(t, 30*time.Second, "b2 to wait for the ledger lock", func() bool {
		n, _ := lockWaits(t, pool, "advisory")
		return n == 1
	})
	if got := l.Stats().Pipelined - before; got != 1 {
		t.Fatalf("%d batches sent while another was in flight, want 1", got)
	}
	return row, b1PID, out
}

// since is the ledger's batch counts since before.
func since(l *eventstore.Ledger, before eventstore.LedgerStats) eventstore.LedgerStats {
	after := l.Stats()
	return eventstore.LedgerStats{Fast: after.Fast - before.Fast, Store: after.Store - before.Store,
		Refused: after.Refused - before.Refused, Pipelined: after.Pipelined - before.Pipelined}
}

// results collects n bets' results by transaction id.
func results(out <-chan betResult, n int) map[string]error {
	got := map[string]error{}
	for range n {
		r := <-out
		got[r.tx] = r.err
	}
	return got
}

// bothFromCache checks that b1 and b2 committed, both sent from the cache
// and the second while the first was in flight.
func bothFromCache(t *testing.T, l *eventstore.Ledger, before eventstore.LedgerStats, out <-chan betResult) {
	t.Helper()
	for tx, err := range results(out, 2) {
		if err != nil {
			t.Errorf("bet %s: %v", tx, err)
		}
	}
	if got, want := since(l, before), (eventstore.LedgerStats{Fast: 2, Pipelined: 1}); got != want {
		t.Errorf("batches %+v, want %+v", got, want)
	}
}

// TestLedgerTwoBatchesInFlight: both batches commit, the second on top of
// the first, neither decided from the store, and the cache holds both.
func TestLedgerTwoBatchesInFlight(t *testing.T) {
	t.Parallel()
	pool, l, p, row, _, out := inFlightPair(t)
	before := l.Stats() // neither has landed; b2's sending is counted
	before.Pipelined--
	if err := row.Rollback(context.Background()); err != nil {
		t.Fatal(err)
	}
	bothFromCache(t, l, before, out)
	if st := balanceOf(t, pool, p.wallet()); st.Balance != 700 || st.Version != 4 {
		t.Errorf("wallet %+v, want 7.00 at version 4", st)
	}
	counted(t, l, eventstore.LedgerStats{Fast: 2}, "a replay of each from the cache", func() {
		for _, tx := range []string{"b1", "b2"} {
			again, err := p.bet(tx, "1.00", "")
			if err != nil || !again.Replayed {
				t.Errorf("retry of %s: %+v, %v; want a replay", tx, again, err)
			}
		}
	})
	checkLedger(t, pool)
}

// TestLedgerInFlightFirstFails: the first batch fails while the second,
// decided on its writes, waits for the lock. Canceled (the server refuses
// the statement, the connection lives), both are decided again from the
// store and both commit. Its connection killed (the outcome unknown), its
// caller gets the error; the second fails its head check, is decided
// again from the store and commits; a retry of the first books it once.
func TestLedgerInFlightFirstFails(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kill                string
		want                eventstore.LedgerStats
		b1Fails             bool
		balance, afterRetry int64
	}{
		{kill: "pg_cancel_backend", want: eventstore.LedgerStats{Store: 2, Refused: 2, Pipelined: 1}, balance: 700, afterRetry: 700},
		{kill: "pg_terminate_backend", want: eventstore.LedgerStats{Store: 1, Refused: 1, Pipelined: 1}, b1Fails: true, balance: 800, afterRetry: 700},
	} {
		t.Run(tc.kill, func(t *testing.T) {
			t.Parallel()
			pool, l, p, row, pid, out := inFlightPair(t)
			before := l.Stats()
			before.Pipelined--
			ctx := context.Background()
			if _, err := pool.Exec(ctx, "SELECT "+tc.kill+"($1)", pid); err != nil {
				t.Fatal(err)
			}
			// The row stays held until the kill has taken effect (a
			// cancel is delivered asynchronously): until a batch was
			// refused — b1 when cancelled, b2 (its head check) when b1's
			// backend is gone. Its decision again from the store may then
			// wait for the row, until the rollback below.
			eventually.True(t, 30*time.Second, "a batch refused after the kill", func() bool {
				return l.Stats().Refused > before.Refused
			})
			if err := row.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			got := results(out, 2)
			if err := got["b1"]; (err != nil) != tc.b1Fails {
				t.Errorf("b1: %v, want failed %v", err, tc.b1Fails)
			}
			if err := got["b2"]; err != nil {
				t.Errorf("b2: %v", err)
			}
			if st := since(l, before); st != tc.want {
				t.Errorf("batches %+v, want %+v", st, tc.want)
			}
			if st := balanceOf(t, pool, p.wallet()); st.Balance != tc.balance {
				t.Errorf("wallet %+v, want %d", st, tc.balance)
			}
			again, err := p.bet("b1", "1.00", "")
			if err != nil || again.Replayed == tc.b1Fails {
				t.Errorf("retry of b1: %+v, %v; want replayed %v", again, err, !tc.b1Fails)
			}
			if st := balanceOf(t, pool, p.wallet()); st.Balance != tc.afterRetry {
				t.Errorf("wallet after the retry %+v, want %d", st, tc.afterRetry)
			}
			checkLedger(t, pool)
		})
	}
}

// TestLedgerInFlightUnderLoad: 8 bettors on one wallet, with one batch
// and with two in flight: every bet commits once, the wallet ends where
// the bets say, and InFlight 1 never sends a batch while another is in
// flight.
func TestLedgerInFlightUnderLoad(t *testing.T) {
	t.Parallel()
	for _, inFlight := range []int{1, 2} {
		t.Run(fmt.Sprint("in flight ", inFlight), func(t *testing.T) {
			t.Parallel()
			pool, l, p := playerWithTen(t, eventstore.LedgerConfig{InFlight: inFlight})
			const bettors, bets = 8, 10 // 80 bets of 0.10: 8.00
			var wg sync.WaitGroup
			for g := range bettors {
				wg.Go(func() {
					for i := range bets {
						if _, err := p.bet(fmt.Sprintf("b%d-%d", g, i), "0.10", ""); err != nil {
							t.Errorf("bet: %v", err)
							return
						}
					}
				})
			}
			wg.Wait()
			if st := balanceOf(t, pool, p.wallet()); st.Balance != 200 || st.Version != 1+bettors*bets {
				t.Errorf("wallet %+v, want 2.00 at version %d", st, 1+bettors*bets)
			}
			if st := l.Stats(); inFlight == 1 && st.Pipelined != 0 {
				t.Errorf("%d batches pipelined with InFlight 1", st.Pipelined)
			}
			checkLedger(t, pool)
		})
	}
}

// TestLedgerInFlightLockOrder: the second batch is not sent before the
// first holds the ledger lock — had both waited for it at once, the server
// could grant it to the second first, whose head check would fail. The
// test holds the ledger lock itself while b1 waits for it and b2 is
// decided; then a probe of the test's asks for the lock too. The server
// grants the lock in the order asked: b1, the probe, and only then b2, if
// b2 asked after b1 held it. The probe, holding the lock, sees b1's bet
// and not b2's; released, both commit from the cache.
func TestLedgerInFlightLockOrder(t *testing.T) {
	t.Parallel()
	pool, l, p := playerWithTen(t, eventstore.LedgerConfig{})
	if _, err := p.bet("warm", "1.00", ""); err != nil { // the wallet at version 2
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", eventstore.DefaultLedgerLockKey); err != nil {
		t.Fatal(err)
	}
	before := l.Stats()
	out := make(chan betResult, 2)
	betAsync(p, "b1", "1.00", out)
	eventually.True(t, 30*time.Second, "b1 to wait for the ledger lock", func() bool {
		n, _ := lockWaits(t, pool, "advisory")
		return n == 1
	})
	betAsync(p, "b2", "1.00", out)
	eventually.True(t, 30*time.Second, "b2 to be decided", func() bool { return l.Stats().Pipelined > before.Pipelined })
	seen := make(chan int64, 1)
	go func() {
		var version int64
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", eventstore.DefaultLedgerLockKey); err != nil {
				return err
			}
			return tx.QueryRow(ctx, "SELECT version FROM accounts WHERE account_id = $1", string(p.wallet())).Scan(&version)
		})
		if err != nil {
			t.Errorf("probe: %v", err)
		}
		seen <- version
	}()
	eventually.True(t, 30*time.Second, "the probe to wait for the ledger lock behind b1", func() bool {
		n, _ := lockWaits(t, pool, "advisory")
		return n >= 2
	})
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", eventstore.DefaultLedgerLockKey); err != nil {
		t.Fatal(err)
	}
	if v := <-seen; v != 3 {
		t.Errorf("the probe, granted the lock after b1, saw the wallet at version %d, want 3 (b1's bet, not b2's)", v)
	}
	bothFromCache(t, l, before, out)
	checkLedger(t, pool)
}

// TestLedgerStopsWithBatchesInFlight: the writer stopped while two batches
// are in flight (and a third call waits) answers every call it took before
// Run returns: both batches commit, the third call commits or is refused
// with ErrLedgerClosed, never left unanswered.
func TestLedgerStopsWithBatchesInFlight(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	l, err := eventstore.NewLedger(pool, eventstore.LedgerConfig{}, storetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	ran := make(chan error, 1)
	go func() { ran <- l.Run(runCtx) }()
	p := newPlayer(commands.NewHandler(l, ledgertest.WallClock{}, ledgertest.UUIDs{}))
	deposit(t, p.h, p.client, p.id, "10.00")
	row, _, out := twoInFlight(t, pool, l, p)
	ctx := context.Background()
	betAsync(p, "b3", "1.00", out)
	stop()
	if err := row.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-ran; err != nil {
		t.Fatalf("run: %v", err)
	}
	got := results(out, 3)
	if got["b1"] != nil || got["b2"] != nil {
		t.Errorf("batches in flight at the stop: b1 %v, b2 %v; want both committed", got["b1"], got["b2"])
	}
	want := int64(700)
	if err := got["b3"]; err == nil {
		want = 600
	} else if !errors.Is(err, eventstore.ErrLedgerClosed) {
		t.Errorf("b3, waiting at the stop: %v, want committed or ErrLedgerClosed", err)
	}
	if st := balanceOf(t, pool, p.wallet()); st.Balance != want {
		t.Errorf("wallet %+v, want %d", st, want)
	}
	checkLedger(t, pool)
}
