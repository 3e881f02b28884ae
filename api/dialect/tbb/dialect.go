package tbb

import (
	"encoding/json"
	"strings"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/wallet"
)

// The request and answer shapes of the Game Events pages. Every field the
// document lists is required; amounts are JSON integers of the currency's
// minor units (ISO 4217: 10.00 EUR is 1000).

// base is what every call carries.
type base struct {
	Token        string `json:"token"`
	ProviderName string `json:"provider_name"`
	ProviderID   *int64 `json:"provider_id"`
	CurrencyCode string `json:"currency_code"`
}

func (b *base) common() *base { return b }

// player is the player a call names: a balance read names none.
func (b *base) player() string { return "" }

// check refuses a call missing a field every call carries, or naming
// another provider than the path's (provider_name is our provider id;
// provider_id, the document's integer, is any integer: ours are text).
func (b *base) check(provider string) error {
	for _, f := range [][2]string{{"token", b.Token}, {"provider_name", b.ProviderName}, {"currency_code", b.CurrencyCode}} {
		if strings.TrimSpace(f[1]) == "" {
			return wallet.Refuse(wallet.InvalidRequest, f[0]+" is required")
		}
	}
	if b.ProviderID == nil {
		return wallet.Refuse(wallet.InvalidRequest, "provider_id is required")
	}
	if b.ProviderName != provider {
		return wallet.Refuse(wallet.Unauthenticated, "provider_name is not the provider of the path")
	}
	return nil
}

// balanceCall is /balance's body.
type balanceCall struct{ base }

// money is what a bet, a win and a refund carry beyond base.
type money struct {
	base
	PlayerID      string `json:"player_id"`
	Amount        *int64 `json:"amount"`
	IsMobile      *bool  `json:"is_mobile"`
	RoundID       string `json:"round_id"`
	GameSymbol    string `json:"game_symbol"`
	TransactionID string `json:"transaction_id"`
}

func (m *money) player() string { return m.PlayerID }

// amount checks the fields every money call requires and converts its
// amount to cur's money; zero is refused unless zeroOK (a lost round's
// win, a refund's amount, which is read, not booked).
func (m *money) amount(cur domain.Currency, zeroOK bool) (domain.Money, error) {
	for _, f := range [][2]string{{"player_id", m.PlayerID}, {"round_id", m.RoundID}, {"game_symbol", m.GameSymbol},
		{"transaction_id", m.TransactionID}} {
		if strings.TrimSpace(f[1]) == "" {
			return domain.Money{}, wallet.Refuse(wallet.InvalidRequest, f[0]+" is required")
		}
	}
	switch {
	case m.IsMobile == nil:
		return domain.Money{}, wallet.Refuse(wallet.InvalidRequest, "is_mobile is required")
	case m.Amount == nil:
		return domain.Money{}, wallet.Refuse(wallet.InvalidRequest, "amount is required")
	case *m.Amount < 0:
		return domain.Money{}, wallet.Refuse(wallet.InvalidAmount, "amount is negative")
	case *m.Amount == 0 && !zeroOK:
		return domain.Money{}, wallet.Refuse(wallet.InvalidAmount, "amount is 0")
	}
	return domain.FromMinor(*m.Amount, cur), nil
}

// moneyCall is /bet's body.
type moneyCall struct{ money }

// winCall is /win's body; tournament and jackpot are objects the
// document's example carries without listing them: accepted when objects,
// not booked.
type winCall struct {
	money
	RoundClose *bool                      `json:"round_close"`
	Tournament map[string]json.RawMessage `json:"tournament"`
	Jackpot    map[string]json.RawMessage `json:"jackpot"`
}

// refundCall is /refund's body.
type refundCall struct {
	money
	RefundedTransactionID string `json:"refunded_transaction_id"`
}

// balanceAnswer is /balance's answer.
type balanceAnswer struct {
	Token   string `json:"token"`
	Balance int64  `json:"balance"`
}

// moneyAnswer is a bet's, win's or refund's answer: our id of the booked
// call (its ledger event, the same on a retry), the balance after it.
type moneyAnswer struct {
	TransactionID string `json:"transaction_id"`
	Balance       int64  `json:"balance"`
	Token         string `json:"token"`
}

// moneyAnswerOf is the answer of a booked call, or its error.
func moneyAnswerOf(cl call, r wallet.Result, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return moneyAnswer{TransactionID: r.EventID, Balance: r.BalanceAfter.Minor(), Token: cl.token}, nil
}
