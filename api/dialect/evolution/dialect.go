package evolution

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/wallet"
)

// The request and answer shapes of Evolution's One Wallet, and its
// amounts: JSON numbers in the currency's unit (12.5 is 12.50 EUR).

// number is an amount as the protocol writes it: a JSON number, kept as
// its text so no float ever holds money. A JSON string or null is refused.
type number string

// UnmarshalJSON keeps a JSON number's text.
func (n *number) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || (b[0] != '-' && (b[0] < '0' || b[0] > '9')) {
		return errors.New("an amount is a JSON number")
	}
	*n = number(b)
	return nil
}

// table is game.details.table: the live table the call was made at.
type table struct {
	ID  string `json:"id"`
	VID string `json:"vid"`
}

// game is the protocol's game object: id is the game round, type the kind
// of game, details.table the table (our game).
type game struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Details *struct {
		Table *table `json:"table"`
	} `json:"details"`
}

// tableID is the table the call names; "" when it names none.
func (g *game) tableID() string {
	if g == nil || g.Details == nil || g.Details.Table == nil {
		return ""
	}
	return g.Details.Table.ID
}

// roundID is the game round the call names; "" when it names none.
func (g *game) roundID() string {
	if g == nil {
		return ""
	}
	return g.ID
}

// base is what every call carries: the session (sid) and its player
// (userId), and the request's id (uuid), echoed in the answer.
type base struct {
	SID    string `json:"sid"`
	UserID string `json:"userId"`
	UUID   string `json:"uuid"`
}

// checkCall is /check's body.
type checkCall struct {
	base
	Channel *struct {
		Type string `json:"type"`
	} `json:"channel"`
}

// balanceCall is /balance's body.
type balanceCall struct {
	base
	Currency string `json:"currency"`
	Game     *game  `json:"game"`
}

// transaction is a debit's, credit's or cancel's transaction: id is the
// call's, refId the bet's (the debit's refId, named again by its credit
// and its cancel).
type transaction struct {
	ID     string  `json:"id"`
	RefID  string  `json:"refId"`
	Amount *number `json:"amount"`
}

// moneyCall is /debit's, /credit's and /cancel's body.
type moneyCall struct {
	base
	Currency    string       `json:"currency"`
	Game        *game        `json:"game"`
	Transaction *transaction `json:"transaction"`
}

// promoTransaction is a promo payout's transaction.
type promoTransaction struct {
	Type            string  `json:"type"`
	ID              string  `json:"id"`
	Amount          *number `json:"amount"`
	VoucherID       string  `json:"voucherId"`
	RemainingRounds *int64  `json:"remainingRounds"`
}

// promoCall is /promo_payout's body.
type promoCall struct {
	base
	Currency         string            `json:"currency"`
	Game             *game             `json:"game"`
	PromoTransaction *promoTransaction `json:"promoTransaction"`
}

// answer is the protocol's standard answer. balance and bonus are always
// written: the player's balance when the call named a known session (on a
// refusal too, so the game shows the right one), else 0; bonus is always 0
// (Pitboss keeps no bonus money).
type answer struct {
	Status  string      `json:"status"`
	Balance wire.Number `json:"balance"`
	Bonus   wire.Number `json:"bonus"`
	UUID    string      `json:"uuid,omitempty"`
}

// checkAnswer is /check's answer: the sid to use from now on (the same
// one: a session id serves every call).
type checkAnswer struct {
	Status string `json:"status"`
	SID    string `json:"sid,omitempty"`
	UUID   string `json:"uuid,omitempty"`
}

// requestUUID reads uuid from a body that may not decode (or is not yet
// trusted) so a refusal can still echo it; "" when it cannot be read.
func requestUUID(raw []byte) string {
	var v struct {
		UUID string `json:"uuid"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	return v.UUID
}

// required refuses a body missing one of the protocol's required string
// fields.
func required(fields ...[2]string) error {
	for _, f := range fields {
		if strings.TrimSpace(f[1]) == "" {
			return wallet.Refuse(wallet.InvalidRequest, f[0]+" is required")
		}
	}
	return nil
}

// toMoney reads a protocol amount in cur exactly: a plain decimal with no
// non-zero digit beyond cur's decimals (12.50 and 12.500000 are 12.50 EUR;
// 12.505 EUR is refused, never rounded), not negative, no exponent.
func toMoney(field string, n *number, cur domain.Currency) (domain.Money, error) {
	if n == nil {
		return domain.Money{}, wallet.Refuse(wallet.InvalidRequest, field+" is required")
	}
	if strings.HasPrefix(string(*n), "-") {
		return domain.Money{}, wallet.Refuse(wallet.InvalidAmount, field+" is negative")
	}
	m, err := domain.ParseMoney(string(*n), cur)
	if err != nil {
		return domain.Money{}, fmt.Errorf("%s: %w", field, err)
	}
	return m, nil
}

// The ledger's ids of the protocol's transactions. Evolution names a bet
// by its refId: the debit books it, its credit and its cancel name it. So
// each call's id is derived from the refId, in a namespace of its own (the
// prefixes differ in their first letters, so no two calls' ids can meet):
// the ledger's unique id then makes one debit, one credit and one cancel
// per bet, atomically, whatever transaction.id each carries.
func betID(refID string) string    { return "bet@" + refID }
func creditID(refID string) string { return "credit@" + refID }
func cancelID(refID string) string { return "cancel@" + refID }
func promoID(id string) string     { return "promo@" + id }
