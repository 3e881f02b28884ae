package eventstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/postgres/storetest"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
)

// The writer's cache: a batch whose state it holds is decided from it and
// written in one round trip; any doubt sends the batch to the store.

// counted runs step and fails t unless the ledger's batch counts moved by
// exactly want (why says what want means).
func counted(t *testing.T, l *eventstore.Ledger, want eventstore.LedgerStats, why string, step func()) {
	t.Helper()
	before := l.Stats()
	step()
	after := l.Stats()
	got := eventstore.LedgerStats{Fast: after.Fast - before.Fast, Store: after.Store - before.Store,
		Refused: after.Refused - before.Refused}
	if got != want {
		t.Errorf("batches %+v, want %+v: %s", got, want, why)
	}
}

// playerWithTen is a player holding 10.00 on a fresh database, through a
// writer of cfg.
func playerWithTen(t *testing.T, cfg eventstore.LedgerConfig) (*pgxpool.Pool, *eventstore.Ledger, player) {
	t.Helper()
	pool, _ := pgtest.NewDatabase(t)
	l, h := storetest.StartLedger(t, pool, cfg)
	p := newPlayer(h)
	deposit(t, h, p.client, p.id, "10.00")
	return pool, l, p
}

// TestLedgerDecidesFromItsCache: once a player's accounts are known, bets,
// wins and retries are decided from the cache, and the ledger they leave is
// the one the store's path would have written.
func TestLedgerDecidesFromItsCache(t *testing.T) {
	t.Parallel()
	pool, l, p := playerWithTen(t, eventstore.LedgerConfig{})
	// The first bet meets the house account for the first time.
	if _, err := p.bet("b0", "1.00", "r0"); err != nil {
		t.Fatal(err)
	}
	counted(t, l, eventstore.LedgerStats{Fast: 4}, "three bets and a retry, all from the cache", func() {
		for _, tx := range []string{"b1", "b2", "b3"} {
			if _, err := p.bet(tx, "1.00", "r1"); err != nil {
				t.Fatalf("bet %s: %v", tx, err)
			}
		}
		again, err := p.bet("b1", "1.00", "r1")
		if err != nil || !again.Replayed {
			t.Fatalf("retry of b1: %+v, %v; want a replay", again, err)
		}
	})
	if st := balanceOf(t, pool, p.wallet()); st.Balance != 600 || st.Version != 5 {
		t.Errorf("wallet %+v, want 6.00 at version 5", st)
	}
	checkLedger(t, pool)
}

// TestLedgerCacheStaleAfterAnotherWriter: another writer moves the head,
// so a batch decided from the stale cache is refused by the head check and
// decided again from the store, with the other writer's bets counted.
func TestLedgerCacheStaleAfterAnotherWriter(t *testing.T) {
	t.Parallel()
	pool, url := pgtest.NewDatabase(t)
	l, h := storetest.StartLedger(t, pool, eventstore.LedgerConfig{})
	pool2, err := postgres.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool2.Close)
	_, h2 := storetest.StartLedger(t, pool2, eventstore.LedgerConfig{})
	p := newPlayer(h)
	deposit(t, h, p.client, p.id, "3.00")
	if _, err := p.bet("b1", "1.00", ""); err != nil {
		t.Fatal(err)
	}
	// The other writer spends the rest of the wallet.
	p2 := p
	p2.h = h2
	if _, err := p2.bet("b2", "2.00", ""); err != nil {
		t.Fatal(err)
	}
	// From its cache the first writer would see 2.00 left and take it.
	counted(t, l, eventstore.LedgerStats{Store: 1, Refused: 1}, "the stale cache's bet refused, then decided from the store", func() {
		if _, err := p.bet("b3", "1.00", ""); !errors.Is(err, domain.ErrInsufficientFunds) {
			t.Fatalf("bet b3 after the other writer spent the wallet: %v, want insufficient funds", err)
		}
	})
	if st := balanceOf(t, pool, p.wallet()); st.Balance != 0 || st.Version != 3 {
		t.Errorf("wallet %+v, want 0 at version 3", st)
	}
	// A batch the cache would answer alone (a replay, no event) checks the
	// head first. The refused batch emptied the cache: the first retry of
	// b1 is decided from the store and puts its record back.
	retry := func() {
		again, err := p.bet("b1", "1.00", "")
		if err != nil || !again.Replayed {
			t.Fatalf("retry of b1: %+v, %v; want a replay", again, err)
		}
	}
	counted(t, l, eventstore.LedgerStats{Store: 1}, "a record the cache lacked", retry)
	counted(t, l, eventstore.LedgerStats{Fast: 1}, "a replay from the cache, the head unmoved", retry)
	deposit(t, h2, p.client, p.id, "1.00") // the other writer moves the head
	counted(t, l, eventstore.LedgerStats{Store: 1}, "a replay from the cache, the head moved", retry)
	if st := balanceOf(t, pool, p.wallet()); st.Balance != 100 {
		t.Errorf("wallet %+v, want 1.00", st)
	}
	checkLedger(t, pool)
}

// TestLedgerCacheMissThatExisted: a record the cache no longer holds (a
// cache of four entries) is taken to be absent; the retry that would book
// the bet again is refused by the record's key and answered from the
// store as the replay it is.
func TestLedgerCacheMissThatExisted(t *testing.T) {
	t.Parallel()
	pool, l, p := playerWithTen(t, eventstore.LedgerConfig{CacheSize: 4})
	first, err := p.bet("b1", "1.00", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tx := range []string{"b2", "b3", "b4"} {
		if _, err := p.bet(tx, "1.00", ""); err != nil {
			t.Fatal(err)
		}
	}
	events := storetest.EventCount(t, pool)
	counted(t, l, eventstore.LedgerStats{Store: 1, Refused: 1}, "the retry booked again from the cache, refused by its key", func() {
		again, err := p.bet("b1", "1.00", "")
		if err != nil || !again.Replayed || again.EventID != first.EventID {
			t.Fatalf("retry of b1: %+v, %v; want a replay of %s", again, err, first.EventID)
		}
	})
	if n := storetest.EventCount(t, pool); n != events {
		t.Errorf("%d events after the retry, want %d", n, events)
	}
	if st := balanceOf(t, pool, p.wallet()); st.Balance != 600 {
		t.Errorf("wallet %+v, want 6.00", st)
	}
	checkLedger(t, pool)
}

// TestLedgerCacheAfterTheLedgerWentBack: the store was put back to an
// earlier state under a running writer (a restore; here, emptied). No
// position collides, so only the head check sees it: the bet the cache
// would accept is decided from the store, where the wallet is empty.
func TestLedgerCacheAfterTheLedgerWentBack(t *testing.T) {
	t.Parallel()
	pool, l, p := playerWithTen(t, eventstore.LedgerConfig{})
	if _, err := p.bet("b1", "1.00", ""); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"events", "accounts", "tx_records"} {
		if _, err := pool.Exec(context.Background(), "DELETE FROM "+table); err != nil {
			t.Fatal(err)
		}
	}
	counted(t, l, eventstore.LedgerStats{Store: 1, Refused: 1}, "the cache's bet refused by the head check", func() {
		if _, err := p.bet("b2", "1.00", ""); !errors.Is(err, domain.ErrInsufficientFunds) {
			t.Fatalf("bet on the emptied ledger: %v, want insufficient funds", err)
		}
	})
	if n := storetest.EventCount(t, pool); n != 0 {
		t.Errorf("%d events, want none", n)
	}
}

// ledger_expect_head (migration 00026) fails the transaction unless the
// head is where the writer expects it, with SQLSTATE PB001.
func TestLedgerExpectHead(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	ctx := context.Background()
	check := func(pos int64, hash []byte) string {
		_, err := pool.Exec(ctx, "SELECT ledger_expect_head($1, $2)", pos, hash)
		if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) {
			return pgErr.Code
		}
		if err != nil {
			t.Fatal(err)
		}
		return ""
	}
	if code := check(0, domain.GenesisHash); code != "" {
		t.Errorf("empty ledger at 0: %s, want no error", code)
	}
	if code := check(1, domain.GenesisHash); code != "PB001" {
		t.Errorf("empty ledger, expected 1: %q, want PB001", code)
	}
	_, h := storetest.StartLedger(t, pool, eventstore.LedgerConfig{})
	res := deposit(t, h, storetest.UID("c"), storetest.UID("p"), "1.00")
	var hash []byte
	if err := pool.QueryRow(ctx, "SELECT hash FROM events WHERE position = $1", res.Position).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	if code := check(res.Position, hash); code != "" {
		t.Errorf("at the head: %s, want no error", code)
	}
	for _, tc := range []struct {
		pos  int64
		hash []byte
	}{{res.Position - 1, hash}, {res.Position + 1, hash}, {res.Position, domain.GenesisHash}} {
		if code := check(tc.pos, tc.hash); code != "PB001" {
			t.Errorf("head (%d, %x) expected: %q, want PB001", tc.pos, tc.hash, code)
		}
	}
}

// TestLedgerDefersWhatTheCacheCannotSettle: in a batch of three bets
// decided from the cache, one is refused for want of funds — a decision
// made on its own record, which the cache lacks and the batch does not
// create. The other two commit in one round trip; that one alone is
// decided again from the store.
func TestLedgerDefersWhatTheCacheCannotSettle(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	l, h := storetest.StartLedger(t, pool, eventstore.LedgerConfig{MaxBatch: 3, Linger: time.Minute})
	rich1, rich2, poor := newPlayer(h), newPlayer(h), newPlayer(h)
	for _, p := range []*player{&rich2, &poor} {
		p.client, p.provider = rich1.client, rich1.provider
	}
	players := []player{rich1, rich2, poor}
	together := func(call func(i int, p player) error) []error {
		errs := make([]error, len(players))
		var wg sync.WaitGroup
		for i, p := range players {
			wg.Go(func() { errs[i] = call(i, p) })
		}
		wg.Wait()
		return errs
	}
	// Three at a time, so each is one batch: deposits, then a first bet
	// each (the house account's first use); the writer now knows every
	// account.
	for i, err := range together(func(i int, p player) error {
		_, err := p.h.Deposit(context.Background(), domain.ClientTx{Client: p.client, Player: p.id,
			ExternalTxID: "dep-" + p.id, Currency: eur}, domain.FromMinor([]int64{1000, 1000, 150}[i], eur))
		return err
	}) {
		if err != nil {
			t.Fatalf("deposit %d: %v", i, err)
		}
	}
	for i, err := range together(func(_ int, p player) error { _, err := p.bet("b0-"+p.id, "1.00", ""); return err }) {
		if err != nil {
			t.Fatalf("first bet %d: %v", i, err)
		}
	}
	counted(t, l, eventstore.LedgerStats{Fast: 1, Store: 1}, "two bets from the cache, the refused one from the store", func() {
		errs := together(func(_ int, p player) error { _, err := p.bet("b1-"+p.id, "1.00", ""); return err })
		if errs[0] != nil || errs[1] != nil || !errors.Is(errs[2], domain.ErrInsufficientFunds) {
			t.Fatalf("bets: %v; want two accepted and the poor player's refused for want of funds", errs)
		}
	})
	for i, want := range []int64{800, 800, 50} {
		if st := balanceOf(t, pool, players[i].wallet()); st.Balance != want {
			t.Errorf("player %d: %+v, want balance %d", i, st, want)
		}
	}
	checkLedger(t, pool)
}

// TestLedgerDeferredDecisionWithAnEvent: an operation that appended an
// event on a record the cache lacked (and did not create) is deferred, and
// the rest of its batch is decided again without it — its event's change
// must not reach their write. From the store it then sees the record.
func TestLedgerDeferredDecisionWithAnEvent(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	ctx := context.Background()
	l, err := eventstore.NewLedger(pool, eventstore.LedgerConfig{MaxBatch: 2, Linger: time.Minute}, storetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	storetest.RunLedger(t, l)
	together := func(ops ...commands.Operation) []error {
		errs := make([]error, len(ops))
		var wg sync.WaitGroup
		for i, op := range ops {
			wg.Go(func() { _, errs[i] = l.Execute(ctx, op) })
		}
		wg.Wait()
		return errs
	}
	client := storetest.UID("c")
	wallet := domain.PlayerWallet(client, storetest.UID("p"), eur)
	// The first batch meets the accounts (from the store); the writer now
	// knows them.
	for _, err := range together(adjustOp(client, wallet, "10.00"), adjustOp(client, wallet, "10.00")) {
		if err != nil {
			t.Fatal(err)
		}
	}
	// A record the writer never saw.
	if _, err := pool.Exec(ctx, `INSERT INTO tx_records (key, kind, record) VALUES ('peek', 'deposit',
		'{"key":"peek","kind":"deposit","account":"x","currency":"EUR","amount":0,"created_at":"2025-01-01T00:00:00Z"}')`); err != nil {
		t.Fatal(err)
	}
	// peeker adjusts by 5.00 when it sees no record "peek", by 1.00 when
	// it does, and creates no record.
	peeker := adjustOp(client, wallet, "5.00")
	inner := adjustOp(client, wallet, "1.00").Decide
	without := peeker.Decide
	peeker.Records = []string{"peek"}
	peeker.Decide = func(v *domain.View) (commands.Outcome, error) {
		if _, ok := v.Record("peek"); ok {
			return inner(v)
		}
		return without(v)
	}
	counted(t, l, eventstore.LedgerStats{Fast: 1, Store: 1}, "one part from the cache, the peeker from the store", func() {
		for i, err := range together(peeker, adjustOp(client, wallet, "2.00")) {
			if err != nil {
				t.Fatalf("op %d: %v", i, err)
			}
		}
	})
	if st := balanceOf(t, pool, wallet); st.Balance != 23_00 || st.Version != 4 {
		t.Errorf("wallet %+v, want 23.00 at version 4", st)
	}
	checkStreamVersions(t, pool, wallet, 4)
}

// TestLedgerCachedRecordGoneFromTheTable: a bet's record the cache holds
// was deleted outside the ledger (no event, so the head did not move). The
// win naming it would update it from the cache; the update finds no row
// and fails the transaction (ledger_expect_rows), and the win is decided
// from the store, where the bet is unknown. Nothing is committed.
func TestLedgerCachedRecordGoneFromTheTable(t *testing.T) {
	t.Parallel()
	pool, l, p := playerWithTen(t, eventstore.LedgerConfig{})
	if _, err := p.bet("b1", "1.00", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(context.Background(), `DELETE FROM tx_records WHERE key = $1`,
		domain.GameTxKey(p.client, p.provider, "b1")); err != nil {
		t.Fatal(err)
	}
	events := storetest.EventCount(t, pool)
	counted(t, l, eventstore.LedgerStats{Store: 1, Refused: 1}, "the win's update of the bet refused, then decided from the store", func() {
		_, err := p.h.CreditWin(context.Background(), p.call("w1", ""), domain.FromMinor(200, eur), "b1")
		if !errors.Is(err, domain.ErrTransactionUnknown) {
			t.Fatalf("win naming the deleted bet: %v, want the bet unknown", err)
		}
	})
	if n := storetest.EventCount(t, pool); n != events {
		t.Errorf("%d events after the win, want %d", n, events)
	}
	if st := balanceOf(t, pool, p.wallet()); st.Balance != 900 {
		t.Errorf("wallet %+v, want 9.00", st)
	}
}
