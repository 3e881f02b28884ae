package eventstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/postgres/storetest"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
)

var eur = domain.MustCurrency("EUR")

func deposit(t testing.TB, h *commands.Handler, client, player, amount string) commands.Result {
	t.Helper()
	m, err := domain.ParsePositive(amount, eur)
	if err != nil {
		t.Fatal(err)
	}
	r, err := h.Deposit(context.Background(), domain.ClientTx{Client: client, Player: player,
		ExternalTxID: storetest.UID("dep"), Currency: eur}, m)
	if err != nil {
		t.Fatalf("deposit: %v", err)
	}
	return r
}

// adjustOp is a hand-made operation: it posts the signed amount to wallet
// against the client's external account, on the wallet's stream.
func adjustOp(client string, wallet domain.AccountID, amount string, records ...domain.TxRecord) commands.Operation {
	ext := domain.ExternalAccount(client, eur)
	m, err := domain.ParseMoney(amount, eur)
	if err != nil {
		panic(err)
	}
	return commands.Operation{
		Accounts: []domain.AccountID{wallet, ext},
		Decide: func(v *domain.View) (commands.Outcome, error) {
			e, err := v.Apply(domain.Change{
				Event: domain.Event{ID: storetest.NewUUID(), Type: domain.EventAdjusted, StreamID: wallet, OccurredAt: time.Now(),
					Data: domain.EventData{ClientID: client, Currency: "EUR", Amount: m.String(),
						Postings: []domain.Posting{{Account: ext, Amount: m.Neg().String()}, {Account: wallet, Amount: m.String()}}}},
				Records: records,
			})
			if err != nil {
				return commands.Outcome{}, err
			}
			return commands.Outcome{Event: &e}, nil
		},
	}
}

func balanceOf(t testing.TB, pool *pgxpool.Pool, id domain.AccountID) domain.AccountState {
	t.Helper()
	st, err := eventstore.NewAccounts(pool).Account(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// executeTogether runs ops concurrently through a ledger that only commits
// once it holds all of them, so they share one batch.
func executeTogether(t *testing.T, pool *pgxpool.Pool, ops ...commands.Operation) ([]commands.Outcome, []error) {
	t.Helper()
	l, err := eventstore.NewLedger(pool, eventstore.LedgerConfig{MaxBatch: len(ops), Linger: time.Minute}, storetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	storetest.RunLedger(t, l)
	outs, errs := make([]commands.Outcome, len(ops)), make([]error, len(ops))
	var wg sync.WaitGroup
	for i, op := range ops {
		wg.Go(func() { outs[i], errs[i] = l.Execute(context.Background(), op) })
	}
	wg.Wait()
	return outs, errs
}

func TestLedgerConfig(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	tests := []struct {
		name    string
		cfg     eventstore.LedgerConfig
		wantErr []string
	}{
		{name: "defaults", cfg: eventstore.LedgerConfig{}},
		{name: "everything set", cfg: eventstore.LedgerConfig{MaxBatch: 8, Linger: time.Millisecond, LockKey: 7,
			NotifyChannel: "x", BatchTimeout: time.Second}},
		{name: "negative batch", cfg: eventstore.LedgerConfig{MaxBatch: -1}, wantErr: []string{"MaxBatch"}},
		{name: "huge batch", cfg: eventstore.LedgerConfig{MaxBatch: 1_000_000}, wantErr: []string{"MaxBatch"}},
		{name: "negative linger", cfg: eventstore.LedgerConfig{Linger: -time.Second}, wantErr: []string{"Linger"}},
		{name: "long channel", cfg: eventstore.LedgerConfig{NotifyChannel: strings.Repeat("c", 64)}, wantErr: []string{"NotifyChannel"}},
		{name: "negative timeout", cfg: eventstore.LedgerConfig{BatchTimeout: -1}, wantErr: []string{"BatchTimeout"}},
		{name: "one batch in flight", cfg: eventstore.LedgerConfig{InFlight: 1}},
		{name: "three batches in flight", cfg: eventstore.LedgerConfig{InFlight: 3}, wantErr: []string{"InFlight"}},
		{name: "negative in flight", cfg: eventstore.LedgerConfig{InFlight: -1}, wantErr: []string{"InFlight"}},
		{name: "every error at once", cfg: eventstore.LedgerConfig{MaxBatch: -1, Linger: -1}, wantErr: []string{"MaxBatch", "Linger"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := eventstore.NewLedger(pool, tc.cfg, nil)
			if len(tc.wantErr) == 0 && err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			for _, want := range tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("got %v, want an error about %s", err, want)
				}
			}
		})
	}
	if _, err := eventstore.NewLedger(nil, eventstore.LedgerConfig{}, nil); err == nil {
		t.Error("a ledger without a pool was accepted")
	}
}

// TestLedgerConcurrencyError: when the stream version an event takes is
// already in the store, every operation in the batch gets a
// *domain.ConcurrencyError and nothing is applied.
func TestLedgerConcurrencyError(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	_, h := storetest.StartLedger(t, pool, eventstore.LedgerConfig{})
	client, stale, innocent := storetest.UID("c"), storetest.UID("p"), storetest.UID("p")
	staleWallet := domain.PlayerWallet(client, stale, eur)
	innocentWallet := domain.PlayerWallet(client, innocent, eur)
	deposit(t, h, client, stale, "10.00")
	deposit(t, h, client, innocent, "10.00")
	// The state row now claims one event fewer than the stream holds.
	if _, err := pool.Exec(context.Background(),
		`UPDATE accounts SET version = version - 1 WHERE account_id = $1`, string(staleWallet)); err != nil {
		t.Fatal(err)
	}
	before := storetest.EventCount(t, pool)

	_, errs := executeTogether(t, pool,
		adjustOp(client, staleWallet, "1.00"), adjustOp(client, innocentWallet, "2.00"))
	for i, err := range errs {
		var ce *domain.ConcurrencyError
		if !errors.As(err, &ce) {
			t.Fatalf("op %d: got %v, want *domain.ConcurrencyError", i, err)
		}
		if ce.StreamID != string(staleWallet) || ce.Expected != 0 {
			t.Errorf("op %d: %+v, want stream %s expected 0", i, ce, staleWallet)
		}
	}
	if n := storetest.EventCount(t, pool); n != before {
		t.Errorf("%d events after the failed batch, want %d", n, before)
	}
	if st := balanceOf(t, pool, innocentWallet); st.Balance != 1000 || st.Version != 1 {
		t.Errorf("innocent wallet %+v: the failed batch was partly applied", st)
	}

	// Through the handler the conflict is retried, and still fails: the row
	// stays stale, so every retry meets the same taken version. (A writer
	// that does not know the account from its own batches: h's writer
	// would decide from its cache, which holds what it wrote — the state
	// the events say — and is not misled by a row changed outside the
	// ledger. Every change to an account comes with an event.)
	_, h2 := storetest.StartLedger(t, pool, eventstore.LedgerConfig{})
	_, err := h2.Deposit(context.Background(), domain.ClientTx{Client: client, Player: stale,
		ExternalTxID: storetest.UID("dep"), Currency: eur}, domain.FromMinor(100, eur))
	if ce := (*domain.ConcurrencyError)(nil); !errors.As(err, &ce) || !strings.Contains(err.Error(), "attempts") {
		t.Errorf("handler: got %v, want a ConcurrencyError after its retries", err)
	}
}

// TestLedgerBrokenOperationsAreIsolated: an operation that panics (after
// changing the view) or touches an account it did not declare fails alone;
// the rest of its batch commits, untouched by it.
func TestLedgerBrokenOperationsAreIsolated(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	client := storetest.UID("c")
	a, b, c, d := domain.PlayerWallet(client, storetest.UID("a"), eur), domain.PlayerWallet(client, storetest.UID("b"), eur),
		domain.PlayerWallet(client, storetest.UID("c"), eur), domain.PlayerWallet(client, storetest.UID("d"), eur)
	undeclared := domain.PlayerWallet(client, storetest.UID("x"), eur)

	panics := adjustOp(client, c, "5.00")
	applyThenPanic := panics.Decide
	panics.Decide = func(v *domain.View) (commands.Outcome, error) {
		if _, err := applyThenPanic(v); err != nil {
			return commands.Outcome{}, err
		}
		panic("boom")
	}
	sneaky := adjustOp(client, undeclared, "7.00")
	sneaky.Accounts = sneaky.Accounts[1:]    // declares only the external account
	rejected := adjustOp(client, d, "-1.00") // d is empty
	badID := adjustOp(client, c, "3.00")
	decide := badID.Decide
	badID.Decide = func(v *domain.View) (commands.Outcome, error) {
		out, err := decide(v)
		if out.Event != nil {
			out.Event.ID = "not-a-uuid"
		}
		return out, err
	}

	outs, errs := executeTogether(t, pool, adjustOp(client, a, "1.00"), panics, sneaky, rejected, badID,
		adjustOp(client, b, "2.00"))
	for i, want := range []string{"", "panicked", "did not declare", "insufficient funds", "not a UUID", ""} {
		switch {
		case want == "" && errs[i] != nil:
			t.Errorf("op %d: %v", i, errs[i])
		case want != "" && (errs[i] == nil || !strings.Contains(errs[i].Error(), want)):
			t.Errorf("op %d: got %v, want an error with %q", i, errs[i], want)
		}
	}
	if errs[0] == nil && errs[5] == nil && max(outs[0].Event.Position, outs[5].Event.Position) != 2 {
		t.Errorf("positions %d and %d are not consecutive", outs[0].Event.Position, outs[5].Event.Position)
	}
	for id, want := range map[domain.AccountID]domain.AccountState{
		a: {Balance: 100, Version: 1}, b: {Balance: 200, Version: 1}, c: {}, d: {}, undeclared: {},
	} {
		if st := balanceOf(t, pool, id); st != want {
			t.Errorf("%s: %+v, want %+v", id, st, want)
		}
	}
	if n := storetest.EventCount(t, pool); n != 2 {
		t.Errorf("%d events, want 2", n)
	}
}

// TestLedgerFailedInsertFailsTheBatch: a record key that already exists is
// never silently overwritten; the whole batch fails and nothing is applied.
func TestLedgerFailedInsertFailsTheBatch(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	_, h := storetest.StartLedger(t, pool, eventstore.LedgerConfig{})
	client, player, other := storetest.UID("c"), storetest.UID("p"), storetest.UID("o")
	first := deposit(t, h, client, player, "10.00")
	key := domain.ClientTxKey(client, first.ExternalTxID)
	before := storetest.EventCount(t, pool)

	// The operation does not declare the key, so the view takes the record
	// for new.
	dup := adjustOp(client, domain.PlayerWallet(client, player, eur), "1.00",
		domain.TxRecord{Key: key, Kind: domain.TxAdjustment, Currency: "EUR"})
	_, errs := executeTogether(t, pool, dup, adjustOp(client, domain.PlayerWallet(client, other, eur), "1.00"))
	for i, err := range errs {
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23505" || pgErr.ConstraintName != "tx_records_pkey" {
			t.Errorf("op %d: got %v, want the unique violation on tx_records_pkey", i, err)
		}
	}
	if n := storetest.EventCount(t, pool); n != before {
		t.Errorf("%d events after the failed batch, want %d", n, before)
	}
	if st := balanceOf(t, pool, domain.PlayerWallet(client, other, eur)); st != (domain.AccountState{}) {
		t.Errorf("other wallet %+v after the failed batch, want empty", st)
	}
}

// TestLedgerContext: a caller that gives up while its operation is queued
// gets its context's error and the operation never runs.
func TestLedgerContext(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	l, err := eventstore.NewLedger(pool, eventstore.LedgerConfig{}, storetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	client := storetest.UID("c")
	var ran atomic.Int32
	op := adjustOp(client, domain.PlayerWallet(client, storetest.UID("p"), eur), "1.00")
	decide := op.Decide
	op.Decide = func(v *domain.View) (commands.Outcome, error) {
		ran.Add(1)
		return decide(v)
	}

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Execute(cancelled, op); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: got %v", err)
	}
	// The writer is not running yet, so the operation waits in the queue
	// until its deadline.
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := l.Execute(short, op); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("expired while queued: got %v", err)
	}
	storetest.RunLedger(t, l)
	out, err := l.Execute(context.Background(), adjustOp(client, domain.PlayerWallet(client, storetest.UID("p"), eur), "1.00"))
	if err != nil {
		t.Fatal(err)
	}
	if out.Event.Position != 1 {
		t.Errorf("first committed event at position %d, want 1", out.Event.Position)
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("an abandoned operation ran %d times", n)
	}

	// Once taken, an operation runs to the end even if its caller leaves.
	taken, release := make(chan struct{}), make(chan struct{})
	slow := adjustOp(client, domain.PlayerWallet(client, storetest.UID("p"), eur), "1.00")
	decideSlow := slow.Decide
	slow.Decide = func(v *domain.View) (commands.Outcome, error) {
		close(taken)
		<-release
		return decideSlow(v)
	}
	leaving, leave := context.WithCancel(context.Background())
	go func() {
		<-taken
		leave()
	}()
	if _, err := l.Execute(leaving, slow); !errors.Is(err, context.Canceled) {
		t.Errorf("caller left after its operation was taken: got %v", err)
	}
	close(release)
	// The next operation queues behind the slow one's batch.
	if out, err := l.Execute(context.Background(), adjustOp(client, domain.PlayerWallet(client, storetest.UID("p"), eur), "1.00")); err != nil || out.Event.Position != 3 {
		t.Errorf("after the slow batch: %+v %v, want position 3 (the left caller's operation committed at 2)", out.Event, err)
	}
}

func TestLedgerStops(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	l, err := eventstore.NewLedger(pool, eventstore.LedgerConfig{}, storetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	client := storetest.UID("c")
	if _, err := l.Execute(context.Background(), adjustOp(client, domain.PlayerWallet(client, storetest.UID("p"), eur), "1.00")); err != nil {
		t.Fatal(err)
	}
	if err := l.Run(ctx); err == nil {
		t.Error("a second Run was accepted")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	_, err = l.Execute(context.Background(), adjustOp(client, domain.PlayerWallet(client, storetest.UID("p"), eur), "1.00"))
	if !errors.Is(err, eventstore.ErrLedgerClosed) {
		t.Errorf("after stop: got %v, want ErrLedgerClosed", err)
	}
}

// TestLedgerNotifiesAndRecordsPositions: a commit notifies the relay's
// channel — a batch decided from the store (the first) and one decided
// from the cache (the second) — and the outcome, the stored record and the
// account row agree on the event's position.
func TestLedgerNotifiesAndRecordsPositions(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	listener, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Release()
	if _, err := listener.Exec(ctx, "LISTEN pitboss_events"); err != nil {
		t.Fatal(err)
	}
	l, h := storetest.StartLedger(t, pool, eventstore.LedgerConfig{})
	client, player := storetest.UID("c"), storetest.UID("p")
	res := deposit(t, h, client, player, "10.00")
	if _, err := listener.Conn().WaitForNotification(ctx); err != nil {
		t.Fatalf("no notification after a commit: %v", err)
	}
	if res.Position != 1 {
		t.Errorf("result position %d, want 1", res.Position)
	}
	var recPos, lastPos int64
	if err := pool.QueryRow(ctx, `SELECT (record->>'position')::bigint FROM tx_records WHERE key = $1`,
		domain.ClientTxKey(client, res.ExternalTxID)).Scan(&recPos); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT last_position FROM accounts WHERE account_id = $1`,
		string(domain.ExternalAccount(client, eur))).Scan(&lastPos); err != nil {
		t.Fatal(err)
	}
	if recPos != 1 || lastPos != 1 {
		t.Errorf("record position %d, external account last_position %d, want 1 and 1", recPos, lastPos)
	}
	deposit(t, h, client, player, "5.00")
	if _, err := listener.Conn().WaitForNotification(ctx); err != nil {
		t.Fatalf("no notification after a commit decided from the cache: %v", err)
	}
	if st := l.Stats(); st.Store != 1 || st.Fast != 1 {
		t.Errorf("batches %+v, want one from the store and one from the cache", st)
	}
}

func TestAccounts(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	ctx := context.Background()
	accounts := eventstore.NewAccounts(pool)
	pos, hash, err := accounts.Head(ctx)
	if err != nil || pos != 0 || !bytes.Equal(hash, domain.GenesisHash) {
		t.Fatalf("head of an empty store: %d %x %v, want 0 and the genesis hash", pos, hash, err)
	}
	client, player := storetest.UID("c"), storetest.UID("p")
	wallet := domain.PlayerWallet(client, player, eur)
	if st, err := accounts.Account(ctx, wallet); err != nil || st != (domain.AccountState{}) {
		t.Fatalf("unknown account: %+v %v, want the zero state", st, err)
	}
	_, h := storetest.StartLedger(t, pool, eventstore.LedgerConfig{})
	deposit(t, h, client, player, "10.00")
	deposit(t, h, client, player, "2.50")
	if st, err := accounts.Account(ctx, wallet); err != nil || st != (domain.AccountState{Balance: 1250, Version: 2}) {
		t.Errorf("wallet: %+v %v, want 12.50 at version 2", st, err)
	}
	if st, err := accounts.Account(ctx, domain.ExternalAccount(client, eur)); err != nil || st.Balance != -1250 || st.Version != 0 {
		t.Errorf("external account: %+v %v, want -12.50 at version 0", st, err)
	}
	var want []byte
	if err := pool.QueryRow(ctx, `SELECT hash FROM events WHERE position = 2`).Scan(&want); err != nil {
		t.Fatal(err)
	}
	if pos, hash, err := accounts.Head(ctx); err != nil || pos != 2 || !bytes.Equal(hash, want) {
		t.Errorf("head: %d %x %v, want 2 %x", pos, hash, err, want)
	}
}

// BenchmarkLedgerExecute places bets from 32 goroutines per CPU on 64
// wallets through the command handler and the real store. Besides the
// time it reports, from the writer's own connection, round trips and
// statements per batch, the share of batches decided from the cache and
// the share sent while another was in flight; with one batch in flight
// and with two.
//
// rtt=0 is loopback; rtt=1ms puts the database a network away
// (pgtest.LatencyProxy), where a round trip costs what it does between
// machines and a second batch in flight has something to hide.
func BenchmarkLedgerExecute(b *testing.B) {
	for _, rtt := range []time.Duration{0, time.Millisecond} {
		for _, inFlight := range []int{1, 2} {
			b.Run(fmt.Sprintf("rtt=%s/in_flight=%d", rtt, inFlight), func(b *testing.B) { benchmarkLedgerExecute(b, rtt, inFlight) })
		}
	}
}

func benchmarkLedgerExecute(b *testing.B, rtt time.Duration, inFlight int) {
	_, url := pgtest.NewDatabase(b)
	var count pgtest.StatementCounter
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		b.Fatal(err)
	}
	if rtt > 0 {
		addr := pgtest.LatencyProxy(b, net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port))), rtt/2)
		host, port, _ := net.SplitHostPort(addr)
		p, _ := strconv.Atoi(port)
		cfg.ConnConfig.Host, cfg.ConnConfig.Port = host, uint16(p)
	}
	cfg.ConnConfig.Tracer = &count
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	l, h := storetest.StartLedger(b, pool, eventstore.LedgerConfig{InFlight: inFlight})
	const wallets = 64
	client, provider := storetest.UID("c"), storetest.UID("prov")
	players := make([]string, wallets)
	var wg sync.WaitGroup
	for i := range players {
		players[i] = storetest.UID("p")
		wg.Go(func() { deposit(b, h, client, players[i], "1000000.00") })
	}
	wg.Wait()
	stake := domain.FromMinor(1, eur)
	var next, seq atomic.Int64
	b.SetParallelism(32)
	b.ReportAllocs()
	before := l.Stats()
	count.Reset()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		player := players[next.Add(1)%wallets]
		for pb.Next() {
			g := domain.GameTx{Client: client, Player: player, Provider: provider, Game: "g",
				ExternalTxID: fmt.Sprintf("bet-%d", seq.Add(1)), Currency: eur}
			if _, err := h.PlaceBet(context.Background(), g, stake); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	st := l.Stats()
	batches := float64(st.Fast + st.Store - before.Fast - before.Store)
	b.ReportMetric(float64(count.RoundTrips.Load())/batches, "roundtrips/batch")
	b.ReportMetric(float64(count.Statements.Load())/batches, "statements/batch")
	b.ReportMetric(100*float64(st.Fast-before.Fast)/batches, "%fast")
	b.ReportMetric(100*float64(st.Pipelined-before.Pipelined)/batches, "%pipelined")
	var events, txs float64
	if err := pool.QueryRow(context.Background(),
		`SELECT count(*), count(DISTINCT tx_id) FROM events WHERE event_type = $1`, domain.EventBetPlaced).
		Scan(&events, &txs); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(events/txs, "ops/commit")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "bets/s")
}

// BenchmarkClientHead measures the probe that scopes every read's
// X-Ledger-Position to its client (projections.ClientHeads): a quiet
// client whose only event lies under thousands of a busy client's, and the
// busy client itself, both asked at the head.
func BenchmarkClientHead(b *testing.B) {
	pool, _ := pgtest.NewDatabase(b)
	_, h := storetest.StartLedger(b, pool, eventstore.LedgerConfig{})
	quiet, busy := seedQuietAndBusy(b, h, 5000)
	accounts := eventstore.NewAccounts(pool)
	ctx := context.Background()
	head, _, err := accounts.Head(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, client string }{{"quiet", quiet}, {"busy", busy}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if p, err := accounts.ClientHead(ctx, c.client, head); err != nil || p == 0 {
					b.Fatalf("client head %d %v", p, err)
				}
			}
		})
	}
}
