package domain_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// Shared fixtures of the domain tests: one operator, two players, one
// provider, and a given/when/then harness over a domain.View.

var (
	eur = domain.MustCurrency("EUR")
	usd = domain.MustCurrency("USD")
	jpy = domain.MustCurrency("JPY")
	btc = domain.MustCurrency("BTC")
)

const (
	client   = "acme"
	player   = "p-17"
	stranger = "p-99"
	provider = "pragmatic"
)

var (
	wallet         = domain.PlayerWallet(client, player, eur)
	strangerWallet = domain.PlayerWallet(client, stranger, eur)
	house          = domain.HouseAccount(client, provider, eur)
	external       = domain.ExternalAccount(client, eur)
	clientWallet   = domain.ClientWallet(client, eur)
)

// t0 is the fixed "now" of the tests; the domain never reads the clock.
var t0 = time.Date(2025, time.March, 1, 12, 0, 0, 0, time.UTC)

// amt is an EUR amount; a fixture that does not parse is a bug in the test.
func amt(s string) domain.Money { return amtIn(s, eur) }

func amtIn(s string, c domain.Currency) domain.Money {
	m, err := domain.ParseMoney(s, c)
	if err != nil {
		panic(fmt.Sprintf("fixture amount %q %s: %v", s, c, err))
	}
	return m
}

// decision is one Decide* call waiting for the view and the environment.
type decision func(r domain.Reader, env domain.Env) (domain.Change, error)

type gameOpt func(*domain.GameTx)

func inRound(id string) gameOpt               { return func(g *domain.GameTx) { g.Round = id } }
func by(p string) gameOpt                     { return func(g *domain.GameTx) { g.Player = p } }
func inCur(c domain.Currency) gameOpt         { return func(g *domain.GameTx) { g.Currency = c } }
func closingRound(g *domain.GameTx)           { g.RoundClosed = true }
func asPromo(g *domain.GameTx)                { g.Promo = true }
func gameWith(f func(*domain.GameTx)) gameOpt { return f }
func freeBet(campaign, reward string) gameOpt {
	return func(g *domain.GameTx) { g.Promo, g.Campaign, g.Reward = true, campaign, reward }
}
func withJackpot(m domain.Money) gameOpt { return func(g *domain.GameTx) { g.Jackpot = m } }

// capped is a call of a protocol that can say balances up to max minor
// units (GameTx.MaxBalance).
func capped(max int64) gameOpt { return func(g *domain.GameTx) { g.MaxBalance = max } }

func game(id string, opts ...gameOpt) domain.GameTx {
	g := domain.GameTx{Client: client, Player: player, Provider: provider, Game: "sweet-bonanza",
		Session: "s-1", ExternalTxID: id, Currency: eur}
	for _, o := range opts {
		o(&g)
	}
	return g
}

func bet(id string, m domain.Money, opts ...gameOpt) decision {
	return func(r domain.Reader, env domain.Env) (domain.Change, error) {
		return domain.DecideBet(r, game(id, opts...), m, env)
	}
}

func win(id string, m domain.Money, betRef string, opts ...gameOpt) decision {
	return func(r domain.Reader, env domain.Env) (domain.Change, error) {
		return domain.DecideWin(r, game(id, opts...), m, betRef, env)
	}
}

func rollback(id, ref string, opts ...gameOpt) decision {
	return func(r domain.Reader, env domain.Env) (domain.Change, error) {
		return domain.DecideRollback(r, game(id, opts...), ref, env)
	}
}

type clientOpt func(*domain.ClientTx)

func forPlayer(p string) clientOpt                  { return func(c *domain.ClientTx) { c.Player = p } }
func clientIn(cur domain.Currency) clientOpt        { return func(c *domain.ClientTx) { c.Currency = cur } }
func clientWith(f func(*domain.ClientTx)) clientOpt { return f }

// ctx is an operator transaction on the client's own wallet unless
// forPlayer names a player.
func ctx(id string, opts ...clientOpt) domain.ClientTx {
	c := domain.ClientTx{Client: client, ExternalTxID: id, Currency: eur}
	for _, o := range opts {
		o(&c)
	}
	return c
}

func deposit(id string, m domain.Money, opts ...clientOpt) decision {
	return func(r domain.Reader, env domain.Env) (domain.Change, error) {
		return domain.DecideDeposit(r, ctx(id, opts...), m, env)
	}
}

func withdrawal(id string, m domain.Money, opts ...clientOpt) decision {
	return func(r domain.Reader, env domain.Env) (domain.Change, error) {
		return domain.DecideWithdrawal(r, ctx(id, opts...), m, env)
	}
}

func transfer(id string, m domain.Money, dir string, opts ...clientOpt) decision {
	return func(r domain.Reader, env domain.Env) (domain.Change, error) {
		return domain.DecideTransfer(r, ctx(id, opts...), m, dir, env)
	}
}

func adjustment(id string, m domain.Money, opts ...clientOpt) decision {
	return func(r domain.Reader, env domain.Env) (domain.Change, error) {
		return domain.DecideAdjustment(r, ctx(id, opts...), m, env)
	}
}

func balanceSync(id string, target domain.Money, opts ...clientOpt) decision {
	return func(r domain.Reader, env domain.Env) (domain.Change, error) {
		return domain.DecideBalanceSync(r, ctx(id, opts...), target, game("launch-"+id), env)
	}
}

func launch(id string, expires time.Time, mods ...func(*domain.Launch)) decision {
	return func(r domain.Reader, env domain.Env) (domain.Change, error) {
		l := domain.Launch{Client: client, Player: player, Provider: provider,
			Game: "sweet-bonanza", Session: "s-1", ExternalTxID: id, Currency: eur, ExpiresAt: expires}
		for _, m := range mods {
			m(&l)
		}
		return domain.DecideLaunch(r, l, env)
	}
}

// fund deposits into the player's EUR wallet.
func fund(s string) decision { return deposit("fund-"+s, amt(s), forPlayer(player)) }

// harness is a ledger under test: a view and a deterministic environment.
type harness struct {
	t *testing.T
	v *domain.View
	n int
}

// given applies each step in order; a step the ledger refuses is a broken
// test, not a result.
func given(t *testing.T, steps ...decision) *harness {
	t.Helper()
	h := &harness{t: t, v: domain.NewView()}
	h.apply(steps...)
	return h
}

func (h *harness) apply(steps ...decision) {
	h.t.Helper()
	t := h.t
	for i, s := range steps {
		ch, err := s(h.v, h.env())
		if err == nil {
			_, err = h.v.Apply(ch)
		}
		if err != nil {
			t.Fatalf("given step %d: %v", i+1, err)
		}
	}
}

// env gives every call its own event id and a later time.
func (h *harness) env() domain.Env {
	h.n++
	return domain.Env{Now: t0.Add(time.Duration(h.n) * time.Second), EventID: fmt.Sprintf("ev-%d", h.n),
		Meta: domain.Metadata{RequestID: fmt.Sprintf("req-%d", h.n), CorrelationID: "corr-1", Actor: "test"}}
}

// when makes the decision; an accepted decision must also pass View.Apply.
// It returns the change as decided and the event as applied.
func (h *harness) when(d decision) (domain.Change, domain.Event, error) {
	h.t.Helper()
	ch, err := d(h.v, h.env())
	if err != nil {
		return ch, domain.Event{}, err
	}
	e, err := h.v.Apply(ch)
	if err != nil {
		h.t.Fatalf("decision accepted but View.Apply refused its change: %v", err)
	}
	return ch, e, nil
}

func (h *harness) balance(id domain.AccountID) int64 { return h.v.Account(id).Balance }

// then is the expected outcome of a when: an error, or an event.
type then struct {
	err      error
	typ      domain.EventType
	stream   domain.AccountID
	version  int64
	amount   string
	after    string // balance_after
	postings []domain.Posting
	balances map[domain.AccountID]int64 // minor units, after the when (also on error)
}

func (h *harness) check(e domain.Event, err error, want then) {
	h.t.Helper()
	if !errors.Is(err, want.err) {
		h.t.Fatalf("err = %v, want %v", err, want.err)
	}
	if err == nil {
		if e.Type != want.typ {
			h.t.Errorf("type = %s, want %s", e.Type, want.typ)
		}
		if e.StreamID != want.stream {
			h.t.Errorf("stream = %s, want %s", e.StreamID, want.stream)
		}
		if want.version != 0 && e.Version != want.version {
			h.t.Errorf("version = %d, want %d", e.Version, want.version)
		}
		if e.Data.Amount != want.amount {
			h.t.Errorf("amount = %q, want %q", e.Data.Amount, want.amount)
		}
		if e.Data.BalanceAfter != want.after {
			h.t.Errorf("balance_after = %q, want %q", e.Data.BalanceAfter, want.after)
		}
		if !slices.Equal(e.Data.Postings, want.postings) {
			h.t.Errorf("postings = %v, want %v", e.Data.Postings, want.postings)
		}
		if e.Data.Postings == nil {
			h.t.Errorf("postings are nil: the event would encode \"postings\":null")
		}
	}
	for id, b := range want.balances {
		if got := h.balance(id); got != b {
			h.t.Errorf("balance of %s = %d, want %d", id, got, b)
		}
	}
}

func post(id domain.AccountID, amount string) domain.Posting {
	return domain.Posting{Account: id, Amount: amount}
}
