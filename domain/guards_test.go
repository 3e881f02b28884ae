package domain_test

import (
	"errors"
	"testing"

	"github.com/pitboss/pitboss/domain"
)

// Guards that sit behind the command layer's replay check: a decision
// refuses on its own an id already booked, and a win may only settle a bet
// of the same player and currency.
func TestDecisionGuards(t *testing.T) {
	cases := []struct {
		name  string
		given []decision
		when  decision
		want  error
	}{
		{"bet under an id already booked as a bet", []decision{fund("10"), bet("b1", amt("1"))},
			bet("b1", amt("1")), domain.ErrDuplicateTransaction},
		{"win under an id already booked as a bet", []decision{fund("10"), bet("b1", amt("1"))},
			win("b1", amt("1"), ""), domain.ErrDuplicateTransaction},
		{"win naming a win as its bet", []decision{fund("10"), win("w1", amt("1"), "")},
			win("w2", amt("1"), "w1"), domain.ErrInvalidArgument},
		{"win naming a bet in another currency", []decision{
			deposit("fund-usd", amtIn("10", usd), forPlayer(player), clientIn(usd)), bet("b1", amtIn("1", usd), inCur(usd))},
			win("w1", amt("1"), "b1"), domain.ErrCurrencyMismatch},
		{"balance sync with a malformed game id", nil,
			func(r domain.Reader, env domain.Env) (domain.Change, error) {
				g := game("x")
				g.Game = "bad:id"
				return domain.DecideBalanceSync(r, ctx("sync-1", forPlayer(player)), amt("5"), g, env)
			}, domain.ErrInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := given(t, tc.given...)
			if _, _, err := h.when(tc.when); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

// An account id of no known kind is held to the wallet rule: it can never
// go below zero, so a malformed id cannot mint money.
func TestUnknownAccountKindMayNotGoNegative(t *testing.T) {
	odd := domain.AccountID("mystery:acme:EUR")
	if odd.Kind() != domain.KindUnknown || odd.Kind().MayGoNegative() {
		t.Fatalf("kind %v may go negative: %v", odd.Kind(), odd.Kind().MayGoNegative())
	}
	v := domain.NewView()
	_, err := v.Apply(domain.Change{Event: domain.Event{ID: "e1", Type: domain.EventAdjusted, StreamID: wallet,
		Data: domain.EventData{Currency: "EUR", Amount: "1.00", Postings: []domain.Posting{
			{Account: odd, Amount: "-1.00"}, {Account: wallet, Amount: "1.00"}}}}})
	if !errors.Is(err, domain.ErrInsufficientFunds) {
		t.Fatalf("got %v, want ErrInsufficientFunds", err)
	}
}
