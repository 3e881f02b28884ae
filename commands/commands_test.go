package commands_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
)

// These are black-box tests of the command handlers against the real
// Postgres ledger: the rules that only hold when decisions, idempotency and
// the append run together under concurrency.

var (
	eur = domain.MustCurrency("EUR")
	btc = domain.MustCurrency("BTC")
)

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

type uuids struct{}

func (uuids) NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	hex.Encode(s[9:13], b[4:6])
	hex.Encode(s[14:18], b[6:8])
	hex.Encode(s[19:23], b[8:10])
	hex.Encode(s[24:], b[10:])
	s[8], s[13], s[18], s[23] = '-', '-', '-', '-'
	return string(s[:])
}

// uid returns prefix with a random suffix, so tests never share ids.
func uid(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

func money(t testing.TB, s string, c domain.Currency) domain.Money {
	t.Helper()
	m, err := domain.ParseMoney(s, c)
	if err != nil {
		t.Fatalf("money %s: %v", s, err)
	}
	return m
}

// startLedger runs a ledger writer on pool until the test ends and returns
// a handler over it.
func startLedger(t testing.TB, pool *pgxpool.Pool, cfg postgres.LedgerConfig) *commands.Handler {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	l, err := postgres.NewLedger(pool, cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ledger run: %v", err)
		}
	})
	return commands.NewHandler(l, wallClock{}, uuids{})
}

type env struct {
	pool     *pgxpool.Pool
	url      string
	h        *commands.Handler
	accounts *postgres.Accounts
}

func newEnv(t testing.TB) *env {
	t.Helper()
	pool, url := pgtest.NewDatabase(t)
	return &env{pool: pool, url: url, h: startLedger(t, pool, postgres.LedgerConfig{}), accounts: postgres.NewAccounts(pool)}
}

func (e *env) balance(t testing.TB, id domain.AccountID) domain.AccountState {
	t.Helper()
	st, err := e.accounts.Account(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// player is one player's wallet at one provider, with helpers for the
// provider's wallet calls.
type player struct {
	h                          *commands.Handler
	client, id, provider, game string
	cur                        domain.Currency
}

func newPlayer(h *commands.Handler, cur domain.Currency) player {
	return player{h: h, client: uid("c"), id: uid("p"), provider: uid("prov"), game: "g1", cur: cur}
}

func (p player) wallet() domain.AccountID { return domain.PlayerWallet(p.client, p.id, p.cur) }
func (p player) house() domain.AccountID  { return domain.HouseAccount(p.client, p.provider, p.cur) }

func (p player) call(tx, round string) domain.GameTx {
	return domain.GameTx{Client: p.client, Player: p.id, Provider: p.provider, Game: p.game,
		Round: round, Session: "s1", ExternalTxID: tx, Currency: p.cur}
}

func (p player) deposit(t testing.TB, tx, amount string) commands.Result {
	t.Helper()
	r, err := p.h.Deposit(context.Background(), domain.ClientTx{Client: p.client, Player: p.id,
		ExternalTxID: tx, Currency: p.cur}, money(t, amount, p.cur))
	if err != nil {
		t.Fatalf("deposit %s: %v", amount, err)
	}
	return r
}

func (p player) bet(t testing.TB, tx, amount, round string) (commands.Result, error) {
	return p.h.PlaceBet(context.Background(), p.call(tx, round), money(t, amount, p.cur))
}

func (p player) win(t testing.TB, tx, amount, betRef, round string) (commands.Result, error) {
	return p.h.CreditWin(context.Background(), p.call(tx, round), money(t, amount, p.cur), betRef)
}

func (p player) rollback(tx, ref, round string) (commands.Result, error) {
	return p.h.Rollback(context.Background(), p.call(tx, round), ref)
}

func TestConcurrentBetsNeverOverdraw(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPlayer(e.h, eur)
	p.deposit(t, uid("dep"), "20.00")

	const bets = 50
	errs := make([]error, bets)
	var wg sync.WaitGroup
	for i := range bets {
		wg.Go(func() { _, errs[i] = p.bet(t, fmt.Sprintf("bet-%d", i), "1.00", "") })
	}
	wg.Wait()

	var ok, refused int
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, domain.ErrInsufficientFunds):
			refused++
		default:
			t.Errorf("bet %d: unexpected error %v", i, err)
		}
	}
	if ok != 20 || refused != 30 {
		t.Fatalf("%d bets accepted and %d refused, want 20 and 30", ok, refused)
	}
	if st := e.balance(t, p.wallet()); st.Balance != 0 || st.Version != 21 {
		t.Errorf("player wallet %+v, want balance 0 at version 21", st)
	}
	if st := e.balance(t, p.house()); st.Balance != 2000 {
		t.Errorf("house balance %d, want 2000 (20.00)", st.Balance)
	}
	checkStreamVersions(t, e.pool, p.wallet(), 21)
	checkLedger(t, e.pool)
}

func TestSameBetConcurrentlyMovesMoneyOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const calls = 10
	tests := []struct {
		name string
		h    *commands.Handler
	}{
		{name: "in whatever batches they fall", h: e.h},
		// A writer that waits until it holds all ten: the duplicates meet
		// inside one batch.
		{name: "inside one batch", h: startLedger(t, e.pool, postgres.LedgerConfig{MaxBatch: calls, Linger: time.Minute})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPlayer(e.h, eur)
			p.deposit(t, uid("dep"), "20.00")
			same := p
			same.h = tc.h

			results := make([]commands.Result, calls)
			errs := make([]error, calls)
			var wg sync.WaitGroup
			for i := range calls {
				wg.Go(func() { results[i], errs[i] = same.bet(t, "bet-1", "5.00", "r1") })
			}
			wg.Wait()

			replayed := 0
			for i := range calls {
				if errs[i] != nil {
					t.Fatalf("call %d: %v", i, errs[i])
				}
				if results[i].Replayed {
					replayed++
				}
				r, first := results[i], results[0]
				if r.EventID != first.EventID || r.BalanceAfter.String() != "15.00" || r.Position != first.Position ||
					r.Position == 0 || r.Amount.String() != "5.00" {
					t.Errorf("call %d answered %+v, call 0 answered %+v", i, r, first)
				}
			}
			if replayed != calls-1 {
				t.Errorf("%d answers replayed, want %d", replayed, calls-1)
			}
			if st := e.balance(t, p.wallet()); st.Balance != 1500 || st.Version != 2 {
				t.Errorf("player wallet %+v, want 15.00 at version 2", st)
			}

			_, err := p.bet(t, "bet-1", "6.00", "r1")
			var conflict *domain.IdempotencyConflictError
			if !errors.As(err, &conflict) {
				t.Fatalf("same id, different amount: got %v, want *domain.IdempotencyConflictError", err)
			}
			if conflict.Field != "amount" || conflict.Original != "5.00" || conflict.Given != "6.00" {
				t.Errorf("conflict %+v, want field amount 5.00 -> 6.00", conflict)
			}
			if st := e.balance(t, p.wallet()); st.Balance != 1500 {
				t.Errorf("balance %d after the conflicting retry, want 1500", st.Balance)
			}
		})
	}
	checkLedger(t, e.pool)
}

func TestRollbackRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t)

	type step struct {
		do           func(p player) (commands.Result, error)
		wantErr      error
		wantReplay   bool
		wantBalance  string // after the step; "" = not checked
		wantEventTyp domain.EventType
		wantAmount   string // "" = not checked
	}
	bet := func(tx, amount, round string) func(p player) (commands.Result, error) {
		return func(p player) (commands.Result, error) { return p.bet(t, tx, amount, round) }
	}
	win := func(tx, amount, ref, round string) func(p player) (commands.Result, error) {
		return func(p player) (commands.Result, error) { return p.win(t, tx, amount, ref, round) }
	}
	rollback := func(tx, ref, round string) func(p player) (commands.Result, error) {
		return func(p player) (commands.Result, error) { return p.rollback(tx, ref, round) }
	}
	withdraw := func(tx, amount string) func(p player) (commands.Result, error) {
		return func(p player) (commands.Result, error) {
			return p.h.Withdraw(context.Background(), domain.ClientTx{Client: p.client, Player: p.id,
				ExternalTxID: tx, Currency: p.cur}, money(t, amount, p.cur))
		}
	}
	tests := []struct {
		name      string
		steps     []step
		wantTypes []domain.EventType // the player's stream after the deposit of 10.00
	}{
		{
			name: "rollback before its bet leaves a tombstone that refuses the late bet",
			steps: []step{
				{do: rollback("rb-1", "bet-1", "r1"), wantBalance: "10.00"},
				{do: bet("bet-1", "5.00", "r1"), wantErr: domain.ErrRolledBackEarlier},
				{do: rollback("rb-1", "bet-1", "r1"), wantReplay: true, wantBalance: "10.00"},
			},
			wantTypes: []domain.EventType{domain.EventRollbackRecorded},
		},
		{
			name: "a bet is rolled back at most once",
			steps: []step{
				{do: bet("bet-1", "4.00", "r1"), wantBalance: "6.00"},
				{do: rollback("rb-1", "bet-1", "r1"), wantBalance: "10.00"},
				{do: rollback("rb-1", "bet-1", "r1"), wantReplay: true, wantBalance: "10.00"},
				{do: rollback("rb-2", "bet-1", "r1"), wantErr: domain.ErrAlreadyRolledBack},
			},
			wantTypes: []domain.EventType{domain.EventBetPlaced, domain.EventBetRolledBack},
		},
		{
			name: "a win on a rolled-back bet is refused",
			steps: []step{
				{do: bet("bet-1", "3.00", ""), wantBalance: "7.00"},
				{do: rollback("rb-1", "bet-1", ""), wantBalance: "10.00"},
				{do: win("win-1", "5.00", "bet-1", ""), wantErr: domain.ErrBetRolledBack},
			},
			wantTypes: []domain.EventType{domain.EventBetPlaced, domain.EventBetRolledBack},
		},
		{
			name: "a win in a round whose bets were all rolled back is refused",
			steps: []step{
				{do: bet("bet-1", "3.00", "r7"), wantBalance: "7.00"},
				{do: rollback("rb-1", "bet-1", "r7"), wantBalance: "10.00"},
				{do: win("win-1", "5.00", "", "r7"), wantErr: domain.ErrBetRolledBack},
			},
			wantTypes: []domain.EventType{domain.EventBetPlaced, domain.EventBetRolledBack},
		},
		{
			name: "a rollback naming no round still closes out the bet's round",
			steps: []step{
				{do: bet("bet-1", "3.00", "r8"), wantBalance: "7.00"},
				{do: rollback("rb-1", "bet-1", ""), wantBalance: "10.00", wantAmount: "3.00"},
				{do: rollback("rb-1", "bet-1", ""), wantReplay: true, wantBalance: "10.00", wantAmount: "3.00"},
				{do: win("win-1", "5.00", "", "r8"), wantErr: domain.ErrBetRolledBack},
			},
			wantTypes: []domain.EventType{domain.EventBetPlaced, domain.EventBetRolledBack},
		},
		{
			name: "a rollback of a win reverses it",
			steps: []step{
				{do: bet("bet-1", "2.00", "r1"), wantBalance: "8.00"},
				{do: win("win-1", "7.00", "bet-1", "r1"), wantBalance: "15.00"},
				{do: rollback("rb-1", "win-1", "r1"), wantBalance: "8.00", wantEventTyp: domain.EventWinReversed},
				{do: rollback("rb-2", "win-1", "r1"), wantErr: domain.ErrAlreadyRolledBack},
			},
			wantTypes: []domain.EventType{domain.EventBetPlaced, domain.EventWinCredited, domain.EventWinReversed},
		},
		{
			name: "a win the wallet no longer holds cannot be reversed",
			steps: []step{
				{do: win("win-1", "5.00", "", ""), wantBalance: "15.00"},
				{do: withdraw("wd-1", "15.00"), wantBalance: "0.00"},
				{do: rollback("rb-1", "win-1", ""), wantErr: domain.ErrInsufficientFunds},
			},
			wantTypes: []domain.EventType{domain.EventWinCredited, domain.EventWithdrawn},
		},
	}
	t.Run("cases", func(t *testing.T) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				p := newPlayer(e.h, eur)
				p.deposit(t, uid("dep"), "10.00")
				for i, s := range tc.steps {
					res, err := s.do(p)
					if s.wantErr != nil {
						if !errors.Is(err, s.wantErr) {
							t.Fatalf("step %d: got %v, want %v", i, err, s.wantErr)
						}
						continue
					}
					if err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
					if res.Replayed != s.wantReplay {
						t.Errorf("step %d: replayed %v, want %v", i, res.Replayed, s.wantReplay)
					}
					if s.wantAmount != "" && res.Amount.String() != s.wantAmount {
						t.Errorf("step %d: amount %q, want %q", i, res.Amount, s.wantAmount)
					}
					if s.wantBalance != "" && res.BalanceAfter.String() != s.wantBalance {
						t.Errorf("step %d: balance after %s, want %s", i, res.BalanceAfter, s.wantBalance)
					}
					if s.wantBalance != "" {
						if got := domain.FormatMinor(e.balance(t, p.wallet()).Balance, 2); got != s.wantBalance {
							t.Errorf("step %d: stored balance %s, want %s", i, got, s.wantBalance)
						}
					}
					if s.wantEventTyp != "" {
						var typ domain.EventType
						if err := e.pool.QueryRow(context.Background(),
							`SELECT event_type FROM events WHERE event_id = $1`, res.EventID).Scan(&typ); err != nil {
							t.Fatal(err)
						}
						if typ != s.wantEventTyp {
							t.Errorf("step %d: event %s, want %s", i, typ, s.wantEventTyp)
						}
					}
				}
				want := append([]domain.EventType{domain.EventDeposited}, tc.wantTypes...)
				if got := streamTypes(t, e.pool, p.wallet()); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("stream %v, want %v", got, want)
				}
			})
		}
	})
	checkLedger(t, e.pool)
}

// TestMixedSessionKeepsTheBooks runs every command in two currencies, with
// refusals in between, and then audits the store the way an auditor would:
// double entry, balances explained by postings, the hash chain.
func TestMixedSessionKeepsTheBooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	for _, cur := range []domain.Currency{eur, btc} {
		p := newPlayer(e.h, cur)
		m := func(s string) domain.Money { return money(t, s, cur) }
		clientCall := func(tx, player string) domain.ClientTx {
			return domain.ClientTx{Client: p.client, Player: player, ExternalTxID: tx, Currency: cur, Reason: "test"}
		}
		must := func(what string, _ commands.Result, err error) {
			t.Helper()
			if err != nil {
				t.Fatalf("%s %s: %v", cur, what, err)
			}
		}
		refused := func(what string, _ commands.Result, err error, want error) {
			t.Helper()
			if !errors.Is(err, want) {
				t.Fatalf("%s %s: got %v, want %v", cur, what, err, want)
			}
		}
		r, err := e.h.Deposit(ctx, clientCall("c-dep-1", ""), m("1000"))
		must("client deposit", r, err)
		r, err = e.h.Transfer(ctx, clientCall("c-tr-1", p.id), m("100.5"), domain.ToPlayer)
		must("transfer to player", r, err)
		r, err = e.h.RecordLaunch(ctx, domain.Launch{Client: p.client, Player: p.id, Provider: p.provider,
			Game: p.game, Session: "s1", ExternalTxID: "launch-1", Currency: cur, ExpiresAt: time.Now().Add(time.Hour)})
		must("launch", r, err)
		r, err = p.bet(t, "b1", "10", "r1")
		must("bet", r, err)
		r, err = p.bet(t, "b2", "1000", "r1")
		refused("oversized bet", r, err, domain.ErrInsufficientFunds)
		r, err = p.win(t, "w1", "25.25", "b1", "r1")
		must("win", r, err)
		r, err = p.bet(t, "b3", "7", "r2")
		must("bet", r, err)
		r, err = p.rollback("rb3", "b3", "r2")
		must("rollback bet", r, err)
		r, err = p.rollback("rb4", "b4", "r3")
		must("rollback unknown", r, err)
		r, err = p.bet(t, "b4", "1", "r3")
		refused("late bet", r, err, domain.ErrRolledBackEarlier)
		r, err = p.bet(t, "b5", "5", "r4")
		must("bet", r, err)
		r, err = p.win(t, "w5", "3", "b5", "r4")
		must("win", r, err)
		r, err = p.rollback("rb5", "w5", "r4")
		must("rollback win", r, err)
		r, err = e.h.Adjust(ctx, clientCall("adj-1", p.id), m("-2"))
		must("negative adjustment", r, err)
		r, err = e.h.Adjust(ctx, clientCall("adj-2", ""), m("3"))
		must("client adjustment", r, err)
		r, err = e.h.SyncBalance(ctx, clientCall("sync-1", p.id), m("50"),
			domain.GameTx{Provider: p.provider, Game: p.game, Session: "s2"})
		must("balance sync", r, err)
		r, err = e.h.Transfer(ctx, clientCall("c-tr-2", p.id), m("20"), domain.FromPlayer)
		must("transfer from player", r, err)
		r, err = e.h.Withdraw(ctx, clientCall("wd-1", p.id), m("30"))
		must("player withdrawal", r, err)
		r, err = e.h.Withdraw(ctx, clientCall("wd-2", ""), m("1"))
		must("client withdrawal", r, err)
		r, err = e.h.Withdraw(ctx, clientCall("wd-3", p.id), m("0.01"))
		refused("overdraw", r, err, domain.ErrInsufficientFunds)

		if got := e.balance(t, p.wallet()).Balance; got != 0 {
			t.Errorf("%s player balance %d, want 0 (synced to 50, 20 back, 30 out)", cur, got)
		}
	}
	checkLedger(t, e.pool)
}

// TestGroupCommitBatches: with 64 callers at once, one transaction carries
// many operations.
func TestGroupCommitBatches(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const callers, betsEach = 64, 8
	players := make([]player, callers)
	var wg sync.WaitGroup
	for i := range players {
		players[i] = newPlayer(e.h, eur)
		wg.Go(func() { players[i].deposit(t, uid("dep"), "100.00") })
	}
	wg.Wait()
	errs := make(chan error, callers*betsEach)
	for _, p := range players {
		wg.Go(func() {
			for j := range betsEach {
				if _, err := p.bet(t, fmt.Sprintf("bet-%d", j), "1.00", ""); err != nil {
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
	if err := e.pool.QueryRow(context.Background(),
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
	checkLedger(t, e.pool)
}

// TestTwoWritersInterleave runs two ledgers on one database, as two API
// processes would, and bets against the same wallets through both.
func TestTwoWritersInterleave(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pool2, err := postgres.Connect(context.Background(), e.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool2.Close)
	h2 := startLedger(t, pool2, postgres.LedgerConfig{})
	handlers := []*commands.Handler{e.h, h2}

	const wallets, betsEach = 5, 40 // 200 bets; each wallet holds 30 of them
	players := make([]player, wallets)
	for i := range players {
		players[i] = newPlayer(e.h, eur)
		players[i].provider = "prov" // one house account for all of them
		players[i].client = players[0].client
		players[i].deposit(t, uid("dep"), "30.00")
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
				money(t, "1.00", eur))
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
		if st := e.balance(t, players[i].wallet()); st.Balance != 0 || st.Version != 31 {
			t.Errorf("wallet %d: %+v, want balance 0 at version 31", i, st)
		}
		checkStreamVersions(t, e.pool, players[i].wallet(), 31)
	}
	if st := e.balance(t, players[0].house()); st.Balance != 150_00 {
		t.Errorf("house balance %d, want 15000", st.Balance)
	}
	if perWriter[0] == 0 || perWriter[1] == 0 {
		t.Errorf("accepted per writer %v: both writers should have committed bets", perWriter)
	}
	t.Logf("accepted per writer: %v", perWriter)
	checkLedger(t, e.pool)
}

// checkLedger audits the whole store: the hash chain, double entry per
// currency, account rows explained by postings and stream versions, and
// commit order equal to position order.
func checkLedger(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	checkChain(t, pool)
	checkDoubleEntry(t, pool)
	checkAccountsMatchEvents(t, pool)
	checkCommitOrder(t, pool)
}

func checkChain(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	rows, err := pool.Query(context.Background(),
		`SELECT position, body::text, prev_hash, hash, stream_id, stream_version FROM events ORDER BY position`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	prev, want := domain.GenesisHash, int64(1)
	for rows.Next() {
		var (
			pos, version   int64
			body           string
			prevHash, hash []byte
			stream         string
		)
		if err := rows.Scan(&pos, &body, &prevHash, &hash, &stream, &version); err != nil {
			t.Fatal(err)
		}
		if pos != want {
			t.Fatalf("position %d follows %d: a hole in the chain", pos, want-1)
		}
		if !bytes.Equal(prevHash, prev) {
			t.Fatalf("position %d: prev_hash does not match the hash of %d", pos, pos-1)
		}
		if got := domain.ChainHash(prev, []byte(body)); !bytes.Equal(got, hash) {
			t.Fatalf("position %d: hash does not match sha256(prev || body)", pos)
		}
		ev, err := domain.DecodeBody([]byte(body))
		if err != nil {
			t.Fatalf("position %d: %v", pos, err)
		}
		if ev.Position != pos || string(ev.StreamID) != stream || ev.Version != version {
			t.Fatalf("position %d: body says position %d, stream %s v%d; row says %s v%d",
				pos, ev.Position, ev.StreamID, ev.Version, stream, version)
		}
		prev, want = hash, want+1
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// The same check in SQL, as an auditor without our code would run it.
	var bad int
	if err := pool.QueryRow(context.Background(), `
SELECT count(*) FROM events
 WHERE hash <> sha256(prev_hash || convert_to(body::text, 'UTF8'))`).Scan(&bad); err != nil {
		t.Fatal(err)
	}
	if bad != 0 {
		t.Fatalf("%d events fail sha256(prev_hash || body) in SQL", bad)
	}
}

func checkDoubleEntry(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
SELECT body->'data'->>'currency', sum((p->>'amount')::numeric)::text, count(*)
  FROM events, json_array_elements(body->'data'->'postings') AS p
 GROUP BY 1 ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	currencies := 0
	for rows.Next() {
		var (
			cur, sum string
			n        int
		)
		if err := rows.Scan(&cur, &sum, &n); err != nil {
			t.Fatal(err)
		}
		currencies++
		if m, err := domain.ParseMoney(sum, domain.MustCurrency(cur)); err != nil || !m.IsZero() {
			t.Errorf("%s: %d postings sum to %s, want 0", cur, n, sum)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if currencies == 0 {
		t.Error("no postings at all: the double-entry check checked nothing")
	}
}

func checkAccountsMatchEvents(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
WITH p AS (
  SELECT p->>'account' AS account, (p->>'amount')::numeric AS amount, e.position
    FROM events e, json_array_elements(e.body->'data'->'postings') AS p
), touched AS (
  SELECT account, position FROM p
  UNION ALL SELECT stream_id, position FROM events
), s AS (
  SELECT stream_id, count(*) AS n, max(stream_version) AS top FROM events GROUP BY stream_id
)
SELECT coalesce(a.account_id, x.account), a.currency, a.balance, a.version, a.last_position,
       coalesce((SELECT sum(amount) FROM p WHERE p.account = x.account), 0)::text,
       coalesce(s.n, 0), coalesce(s.top, 0), x.last
  FROM (SELECT account, max(position) AS last FROM touched GROUP BY account) x
  FULL JOIN accounts a ON a.account_id = x.account
  LEFT JOIN s ON s.stream_id = x.account`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id, sum                 string
			cur                     *string
			balance, version, lastP *int64
			n, top                  int64
			last                    *int64
		)
		if err := rows.Scan(&id, &cur, &balance, &version, &lastP, &sum, &n, &top, &last); err != nil {
			t.Fatal(err)
		}
		if cur == nil {
			t.Errorf("%s has postings or events but no account row", id)
			continue
		}
		if last == nil {
			t.Errorf("account row %s has no events at all", id)
			continue
		}
		m, err := domain.ParseMoney(sum, domain.MustCurrency(*cur))
		if err != nil {
			t.Fatal(err)
		}
		if m.Minor() != *balance {
			t.Errorf("%s: balance %d, postings sum to %s", id, *balance, sum)
		}
		if *version != n || n != top {
			t.Errorf("%s: version %d, stream holds %d events up to version %d", id, *version, n, top)
		}
		if *lastP != *last {
			t.Errorf("%s: last_position %d, last event touching it is %d", id, *lastP, *last)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// checkCommitOrder: the writer's advisory lock makes the transaction id
// order the position order.
func checkCommitOrder(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	var bad int
	if err := pool.QueryRow(context.Background(), `
SELECT count(*) FROM (SELECT tx_id, lag(tx_id) OVER (ORDER BY position) AS prev FROM events) x
 WHERE tx_id < prev`).Scan(&bad); err != nil {
		t.Fatal(err)
	}
	if bad != 0 {
		t.Errorf("%d events have a smaller tx_id than the event before them", bad)
	}
}

func checkStreamVersions(t testing.TB, pool *pgxpool.Pool, stream domain.AccountID, want int64) {
	t.Helper()
	rows, err := pool.Query(context.Background(),
		`SELECT stream_version FROM events WHERE stream_id = $1 ORDER BY stream_version`, string(stream))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	next := int64(1)
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		if v != next {
			t.Fatalf("%s: version %d where %d was due", stream, v, next)
		}
		next++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if next-1 != want {
		t.Errorf("%s holds versions 1..%d, want 1..%d", stream, next-1, want)
	}
}

func streamTypes(t testing.TB, pool *pgxpool.Pool, stream domain.AccountID) []domain.EventType {
	t.Helper()
	rows, err := pool.Query(context.Background(),
		`SELECT event_type FROM events WHERE stream_id = $1 ORDER BY stream_version`, string(stream))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []domain.EventType
	for rows.Next() {
		var typ domain.EventType
		if err := rows.Scan(&typ); err != nil {
			t.Fatal(err)
		}
		out = append(out, typ)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
