package caleta

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/wallet"
)

// The request and answer shapes of the document's Wallet API, and its
// amounts: integers of 1/100000 of the currency's unit.

// unitDigits is how many decimals a money_amount carries: 3.56 is 356000.
const unitDigits = 5

// balanceCall is /wallet/balance's body (wallet_balance_body).
type balanceCall struct {
	Token        string `json:"token"`
	RequestUUID  string `json:"request_uuid"`
	SupplierUser string `json:"supplier_user"`
	GameID       *int64 `json:"game_id"`
	GameCode     string `json:"game_code"`
}

// moneyBody is what /wallet/bet's and /wallet/win's bodies both carry
// (wallet_bet_body, wallet_win_body).
type moneyBody struct {
	Token           string `json:"token"`
	TransactionUUID string `json:"transaction_uuid"`
	SupplierUser    string `json:"supplier_user"`
	RoundClosed     bool   `json:"round_closed"`
	Round           string `json:"round"`
	RequestUUID     string `json:"request_uuid"`
	IsFree          bool   `json:"is_free"`
	GameID          *int64 `json:"game_id"`
	GameCode        string `json:"game_code"`
	Currency        string `json:"currency"`
	CampaignUUID    string `json:"campaign_uuid"`
	RewardUUID      string `json:"reward_uuid"`
	Bet             string `json:"bet"`
	Amount          *int64 `json:"amount"`
}

// free reports whether a bet or win is a free bet's: is_free, or the
// campaign and reward ids the document sends "during Free Bets" (either
// one makes it free: booking a campaign's call as real money would take
// the player's money for a bet the campaign pays).
func (b *moneyBody) free() bool { return b.IsFree || b.CampaignUUID != "" || b.RewardUUID != "" }

// betCall is /wallet/bet's body (wallet_bet_body).
type betCall struct{ moneyBody }

// winCall is /wallet/win's body (wallet_win_body).
type winCall struct {
	moneyBody
	ReferenceTransactionUUID string `json:"reference_transaction_uuid"`
	JackpotWin               *int64 `json:"jackpot_win"`
}

// rollbackCall is /wallet/rollback's body (wallet_rollback_body).
type rollbackCall struct {
	Token                    string `json:"token"`
	TransactionUUID          string `json:"transaction_uuid"`
	RoundClosed              bool   `json:"round_closed"`
	Round                    string `json:"round"`
	RequestUUID              string `json:"request_uuid"`
	ReferenceTransactionUUID string `json:"reference_transaction_uuid"`
	IsFree                   bool   `json:"is_free"`
	GameID                   *int64 `json:"game_id"`
	GameCode                 string `json:"game_code"`
	User                     string `json:"user"`
}

// checkCall is /wallet/check's body (wallet_check_body).
type checkCall struct {
	Token string `json:"token"`
}

// answer is the document's BalanceResponse: user, currency and balance
// only on RS_OK.
type answer struct {
	User        string `json:"user,omitempty"`
	Status      string `json:"status"`
	RequestUUID string `json:"request_uuid"`
	Currency    string `json:"currency,omitempty"`
	Balance     *int64 `json:"balance,omitempty"`
}

// checkAnswer is /wallet/check's answer: the token to use from now on
// (the same one: a session id is valid for every wallet call).
type checkAnswer struct {
	Token  string `json:"token,omitempty"`
	Status string `json:"status"`
}

// requestUUID reads request_uuid from a body that may not decode (or is
// not yet trusted) so a refusal can still echo it, as the document
// requires of every answer; "" when it cannot be read.
func requestUUID(raw []byte) string {
	var v struct {
		RequestUUID string `json:"request_uuid"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	return v.RequestUUID
}

// required refuses a body missing one of the document's required string
// fields (RS_ERROR_WRONG_TYPES: the body is JSON, its fields are not
// what the document says).
func required(fields ...[2]string) error {
	for _, f := range fields {
		if strings.TrimSpace(f[1]) == "" {
			return wallet.Refuse(wallet.InvalidRequest, f[0]+" is required")
		}
	}
	return nil
}

// pow10 is 10^n for n ≤ 18.
func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// checkCurrency refuses a currency whose minor unit is finer than the
// document's amounts (more than 5 decimals): its balances could not be
// told exactly.
func checkCurrency(cur domain.Currency) error {
	if cur.Exponent() > unitDigits {
		return wallet.Refuse(wallet.WrongCurrency, fmt.Sprintf("%s has %d decimals; the Caleta wallet carries at most %d",
			cur.Code(), cur.Exponent(), unitDigits))
	}
	return nil
}

// toMoney converts a document amount to cur's money exactly: an amount
// with a non-zero digit beyond cur's decimals (0.001 EUR, 100 units) is
// refused, never rounded.
func toMoney(field string, units *int64, cur domain.Currency) (domain.Money, error) {
	if units == nil {
		return domain.Money{}, wallet.Refuse(wallet.InvalidRequest, field+" is required")
	}
	if *units < 0 {
		return domain.Money{}, wallet.Refuse(wallet.InvalidAmount, field+" is negative")
	}
	if err := checkCurrency(cur); err != nil {
		return domain.Money{}, err
	}
	step := pow10(unitDigits - cur.Exponent())
	if *units%step != 0 {
		return domain.Money{}, wallet.Refuse(wallet.InvalidAmount, fmt.Sprintf("%s %d is not a whole number of %s minor units (multiples of %d)",
			field, *units, cur.Code(), step))
	}
	return domain.FromMinor(*units/step, cur), nil
}

// jackpotPart is the part of a win's amount jackpot_win says a jackpot
// paid, in the win's currency (zero when left out or 0). It is part of the
// amount, never added to it: one larger than the amount is refused.
func jackpotPart(units *int64, win domain.Money) (domain.Money, error) {
	if units == nil || *units == 0 {
		return domain.Zero(win.Currency()), nil
	}
	j, err := toMoney("jackpot_win", units, win.Currency())
	if err != nil {
		return domain.Money{}, err
	}
	if j.Cmp(win) > 0 {
		return domain.Money{}, wallet.Refuse(wallet.InvalidAmount, "jackpot_win is larger than amount: it is the part of the win a jackpot paid")
	}
	return j, nil
}

// toUnits is m in document units (checkCurrency holds for its currency).
func toUnits(m domain.Money) (int64, error) {
	step := pow10(unitDigits - m.Currency().Exponent())
	u := m.Minor() * step
	if m.Minor() != 0 && u/step != m.Minor() {
		// Only a balance the ledger took from elsewhere (an operator's
		// deposit) gets here: the core refuses a win or refund past it.
		return 0, wallet.Refuse(wallet.LimitExceeded, fmt.Sprintf("balance %s does not fit a Caleta amount", m))
	}
	return u, nil
}
