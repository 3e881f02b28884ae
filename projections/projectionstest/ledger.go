package projectionstest

import (
	"fmt"
	"testing"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// Ledger makes realistic events for a store under test: it decides them
// with the domain's decisions on a view, as the event store does, and
// numbers them (position, event id) in the order they are decided.
type Ledger struct {
	t    testing.TB
	view *domain.View
	// Now is the time of the next event.
	Now time.Time
	// Events are the events so far, in position order.
	Events []domain.Event
}

// NewLedger returns an empty ledger whose first event happens at now.
func NewLedger(t testing.TB, now time.Time) *Ledger {
	return &Ledger{t: t, view: domain.NewView(), Now: now}
}

// Do decides one event and appends it; a refused decision fails the test.
func (l *Ledger) Do(decide func(domain.Reader, domain.Env) (domain.Change, error)) domain.Event {
	l.t.Helper()
	pos := int64(len(l.Events)) + 1
	ch, err := decide(l.view, domain.Env{Now: l.Now, EventID: fmt.Sprintf("00000000-0000-4000-8000-%012d", pos)})
	if err != nil {
		l.t.Fatalf("decide event %d: %v", pos, err)
	}
	e, err := l.view.Apply(ch)
	if err != nil {
		l.t.Fatalf("apply event %d: %v", pos, err)
	}
	e.Position = pos
	l.Events = append(l.Events, e)
	return e
}

// Deposit puts amount (decimal text) into c's wallet.
func (l *Ledger) Deposit(c domain.ClientTx, amount string) domain.Event {
	l.t.Helper()
	m := l.money(amount, c.Currency)
	return l.Do(func(r domain.Reader, env domain.Env) (domain.Change, error) {
		return domain.DecideDeposit(r, c, m, env)
	})
}

// Withdraw takes amount out of c's wallet.
func (l *Ledger) Withdraw(c domain.ClientTx, amount string) domain.Event {
	l.t.Helper()
	m := l.money(amount, c.Currency)
	return l.Do(func(r domain.Reader, env domain.Env) (domain.Change, error) {
		return domain.DecideWithdrawal(r, c, m, env)
	})
}

// Bet places a bet of amount.
func (l *Ledger) Bet(g domain.GameTx, amount string) domain.Event {
	l.t.Helper()
	m := l.money(amount, g.Currency)
	return l.Do(func(r domain.Reader, env domain.Env) (domain.Change, error) { return domain.DecideBet(r, g, m, env) })
}

// Win credits a win of amount, for bet betRef ("" for none).
func (l *Ledger) Win(g domain.GameTx, amount, betRef string) domain.Event {
	l.t.Helper()
	m := l.money(amount, g.Currency)
	return l.Do(func(r domain.Reader, env domain.Env) (domain.Change, error) {
		return domain.DecideWin(r, g, m, betRef, env)
	})
}

// Rollback rolls back the bet or win with the provider's id ref.
func (l *Ledger) Rollback(g domain.GameTx, ref string) domain.Event {
	l.t.Helper()
	return l.Do(func(r domain.Reader, env domain.Env) (domain.Change, error) {
		return domain.DecideRollback(r, g, ref, env)
	})
}

// CloseRound closes a stale round as the ledger's job does.
func (l *Ledger) CloseRound(client, provider, round string, after time.Duration) domain.Event {
	l.t.Helper()
	return l.Do(func(r domain.Reader, env domain.Env) (domain.Change, error) {
		return domain.DecideRoundClose(r, domain.RoundClose{Client: client, Provider: provider, Round: round, After: after}, env)
	})
}

func (l *Ledger) money(amount string, c domain.Currency) domain.Money {
	l.t.Helper()
	m, err := domain.ParseMoney(amount, c)
	if err != nil {
		l.t.Fatalf("amount %s: %v", amount, err)
	}
	return m
}

// EUR is the currency of Game unless told otherwise.
var EUR = domain.MustCurrency("EUR")

// Client is an operator's call for a player ("" for the client's own
// wallet) of client in currency cur, with the operator's transaction id tx.
func Client(client, player, tx string, cur domain.Currency) domain.ClientTx {
	return domain.ClientTx{Client: client, Player: player, ExternalTxID: tx, Currency: cur}
}

// Game is a provider's call with the provider's transaction id tx in round
// ("" for none): by default player "p1" of client "acme" plays game "slot"
// of provider "prov" in EUR.
func Game(tx, round string, opts ...func(*domain.GameTx)) domain.GameTx {
	g := domain.GameTx{Client: "acme", Player: "p1", Provider: "prov", Game: "slot", Round: round, ExternalTxID: tx,
		Currency: EUR}
	for _, o := range opts {
		o(&g)
	}
	return g
}

// Closed closes the round with the call.
func Closed(g *domain.GameTx) { g.RoundClosed = true }

// Promo makes the call promo money (a free spin).
func Promo(g *domain.GameTx) { g.Promo = true }

// FreeBet makes the call a free bet of campaign and reward (promo money).
func FreeBet(campaign, reward string) func(*domain.GameTx) {
	return func(g *domain.GameTx) { g.Promo, g.Campaign, g.Reward = true, campaign, reward }
}

// Jackpot makes minor units of a win's amount its jackpot part.
func Jackpot(minor int64) func(*domain.GameTx) {
	return func(g *domain.GameTx) { g.Jackpot = domain.FromMinor(minor, g.Currency) }
}

// InGame sets the game.
func InGame(game string) func(*domain.GameTx) { return func(g *domain.GameTx) { g.Game = game } }

// ByPlayer sets the player.
func ByPlayer(player string) func(*domain.GameTx) {
	return func(g *domain.GameTx) { g.Player = player }
}

// InCurrency sets the currency of a game call.
func InCurrency(c domain.Currency) func(*domain.GameTx) {
	return func(g *domain.GameTx) { g.Currency = c }
}

// AtClient sets the client.
func AtClient(client string) func(*domain.GameTx) {
	return func(g *domain.GameTx) { g.Client = client }
}
