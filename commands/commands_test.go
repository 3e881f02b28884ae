package commands_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/commands/ledgertest"
	"github.com/pitboss/pitboss/domain"
)

// These are black-box tests of the command handlers over the memory
// ledger: the rules that only hold when decisions, idempotency and the
// append run together. What every ledger must do, under concurrency too,
// is the contract in commands/ledgertest (memory_ledger_test.go runs it
// here, adapters/postgres runs it against the Postgres writer).

var (
	eur = domain.MustCurrency("EUR")
)

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

type env struct {
	ledger *commands.MemoryLedger
	h      *commands.Handler
}

func newEnv(t testing.TB) *env {
	t.Helper()
	l := commands.NewMemoryLedger()
	return &env{ledger: l, h: commands.NewHandler(l, ledgertest.WallClock{}, ledgertest.UUIDs{})}
}

func (e *env) balance(t testing.TB, id domain.AccountID) domain.AccountState {
	t.Helper()
	st, err := e.ledger.Account(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// eventType returns the type of the committed event id.
func (e *env) eventType(t testing.TB, id string) domain.EventType {
	t.Helper()
	for _, s := range e.ledger.Events() {
		if s.Event.ID == id {
			return s.Event.Type
		}
	}
	t.Fatalf("no event %s", id)
	return ""
}

// streamTypes returns the types of the events of stream in version order.
func (e *env) streamTypes(stream domain.AccountID) []domain.EventType {
	var out []domain.EventType
	for _, s := range e.ledger.Events() { // position order is version order within a stream
		if s.Event.StreamID == stream {
			out = append(out, s.Event.Type)
		}
	}
	return out
}

// checkLedger audits the whole store: the hash chain, double entry, and
// account states explained by postings and stream versions.
func (e *env) checkLedger(t testing.TB) {
	t.Helper()
	checkChain(t, e.ledger)
	var events []domain.Event
	for _, s := range e.ledger.Events() {
		events = append(events, s.Event)
	}
	ledgertest.AuditBooks(t, e.ledger, events)
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
						if typ := e.eventType(t, res.EventID); typ != s.wantEventTyp {
							t.Errorf("step %d: event %s, want %s", i, typ, s.wantEventTyp)
						}
					}
				}
				want := append([]domain.EventType{domain.EventDeposited}, tc.wantTypes...)
				if got := e.streamTypes(p.wallet()); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("stream %v, want %v", got, want)
				}
			})
		}
	})
	e.checkLedger(t)
}

// TestPlaceBetInSession: a session takes new bets until it expires or is
// superseded; either way a retry of a bet it took before answers as the
// first time, and a refused bet moves nothing.
func TestPlaceBetInSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	live := commands.SessionTerms{ExpiresAt: time.Now().Add(time.Hour)}
	tests := []struct {
		name  string
		terms commands.SessionTerms
	}{
		{"expired", commands.SessionTerms{ExpiresAt: time.Now().Add(-time.Second)}},
		{"superseded", commands.SessionTerms{ExpiresAt: live.ExpiresAt, Superseded: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPlayer(e.h, eur)
			p.deposit(t, uid("dep"), "10.00")
			ctx := context.Background()
			first, err := e.h.PlaceBetInSession(ctx, p.call("b-1", "r-1"), money(t, "2.00", eur), live)
			if err != nil {
				t.Fatal(err)
			}
			again, err := e.h.PlaceBetInSession(ctx, p.call("b-1", "r-1"), money(t, "2.00", eur), tt.terms)
			if err != nil || !again.Replayed || again.EventID != first.EventID {
				t.Fatalf("retry after the session ended: %+v, %v; want the first answer replayed", again, err)
			}
			if _, err := e.h.PlaceBetInSession(ctx, p.call("b-2", "r-2"), money(t, "1.00", eur), tt.terms); !errors.Is(err, commands.ErrSessionExpired) {
				t.Fatalf("new bet: %v, want ErrSessionExpired", err)
			}
			if got := e.balance(t, p.wallet()).Balance; got != 800 {
				t.Fatalf("balance %d minor, want 800", got)
			}
		})
	}
}
