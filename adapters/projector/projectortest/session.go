// Package projectortest runs one fixed session of money commands through
// the real command handler, for the read-model tests. The figures the
// session must produce (balances, history, GGR, commission) are worked out
// by hand in the tests that use it; the comment on Session lists the steps.
package projectortest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/commands/ledgertest"
	"github.com/pitboss/pitboss/domain"
)

// The session's ids and days.
const (
	Client   = "acme"
	Player1  = "p1"
	Player2  = "p2"
	Provider = "prov-a"
	Slot1    = "slot-1"
	Slot2    = "slot-2"
	Events   = 16
)

// Day1 and Day2 are the two UTC days the session spans.
var (
	Day1 = time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	Day2 = time.Date(2025, 3, 2, 10, 0, 0, 0, time.UTC)
)

// Clock is a settable clock.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Now returns the time last set, a microsecond later each call (so events
// keep their order in time).
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Microsecond)
	return c.t
}

// Set moves the clock.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// IDs makes random (version 4) UUIDs: the ledger contract suite's.
type IDs = ledgertest.UUIDs

// Session runs, in EUR, on Day1:
//
//	1 deposit 1000.00 into the client's wallet
//	2 transfer 200.00 to p1;  3 transfer 100.00 to p2
//	4 p1 bets 10.00 (round r1, slot-1);  5 p1 wins 25.00, r1 closed
//	6 p1 bets 20.00 (r2, slot-1);  7 the provider rolls that bet back
//	8 p2 bets 5.00 (r3, slot-2);  9 p2 bets 5.00 (r3);  10 p2 wins 0.00, r3 closed
//
// then on Day2:
//
//	11 p2 bets 7.00 (r4, slot-1), left open
//	12 p1 bets 0.00 as a free spin (promo, r5, slot-2);  13 p1 wins 4.00 (promo), r5 closed
//	14 the provider reverses p1's win of step 5 (round r1)
//	15 p2 withdraws 10.00;  16 p1 transfers 50.00 back to the client's wallet
func Session(ctx context.Context, h *commands.Handler, clock *Clock) ([]commands.Result, error) {
	eur := domain.MustCurrency("EUR")
	money := func(s string) domain.Money {
		m, err := domain.ParseMoney(s, eur)
		if err != nil {
			panic(err)
		}
		return m
	}
	client := func(player, tx string) domain.ClientTx {
		return domain.ClientTx{Client: Client, Player: player, ExternalTxID: tx, Currency: eur}
	}
	game := func(player, game, round, tx string, closed, promo bool) domain.GameTx {
		return domain.GameTx{Client: Client, Player: player, Provider: Provider, Game: game, Round: round,
			Session: "s-" + player, ExternalTxID: tx, Currency: eur, RoundClosed: closed, Promo: promo}
	}
	steps := []func() (commands.Result, error){
		func() (commands.Result, error) { return h.Deposit(ctx, client("", "dep-1"), money("1000.00")) },
		func() (commands.Result, error) {
			return h.Transfer(ctx, client(Player1, "tr-1"), money("200.00"), domain.ToPlayer)
		},
		func() (commands.Result, error) {
			return h.Transfer(ctx, client(Player2, "tr-2"), money("100.00"), domain.ToPlayer)
		},
		func() (commands.Result, error) {
			return h.PlaceBet(ctx, game(Player1, Slot1, "r1", "b1", false, false), money("10.00"))
		},
		func() (commands.Result, error) {
			return h.CreditWin(ctx, game(Player1, Slot1, "r1", "w1", true, false), money("25.00"), "b1")
		},
		func() (commands.Result, error) {
			return h.PlaceBet(ctx, game(Player1, Slot1, "r2", "b2", false, false), money("20.00"))
		},
		func() (commands.Result, error) {
			return h.Rollback(ctx, game(Player1, Slot1, "r2", "rb1", false, false), "b2")
		},
		func() (commands.Result, error) {
			return h.PlaceBet(ctx, game(Player2, Slot2, "r3", "b3", false, false), money("5.00"))
		},
		func() (commands.Result, error) {
			return h.PlaceBet(ctx, game(Player2, Slot2, "r3", "b4", false, false), money("5.00"))
		},
		func() (commands.Result, error) {
			return h.CreditWin(ctx, game(Player2, Slot2, "r3", "w2", true, false), money("0.00"), "")
		},
		func() (commands.Result, error) {
			clock.Set(Day2)
			return h.PlaceBet(ctx, game(Player2, Slot1, "r4", "b5", false, false), money("7.00"))
		},
		func() (commands.Result, error) {
			return h.PlaceBet(ctx, game(Player1, Slot2, "r5", "b6", false, true), money("0.00"))
		},
		func() (commands.Result, error) {
			return h.CreditWin(ctx, game(Player1, Slot2, "r5", "w3", true, true), money("4.00"), "b6")
		},
		func() (commands.Result, error) {
			return h.Rollback(ctx, game(Player1, Slot1, "r1", "rb2", false, false), "w1")
		},
		func() (commands.Result, error) { return h.Withdraw(ctx, client(Player2, "wd-1"), money("10.00")) },
		func() (commands.Result, error) {
			return h.Transfer(ctx, client(Player1, "tr-3"), money("50.00"), domain.FromPlayer)
		},
	}
	clock.Set(Day1)
	out := make([]commands.Result, 0, len(steps))
	for i, step := range steps {
		r, err := step()
		if err != nil {
			return out, fmt.Errorf("session step %d: %w", i+1, err)
		}
		out = append(out, r)
	}
	return out, nil
}
