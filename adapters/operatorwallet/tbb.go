package operatorwallet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/wallet"
)

// tbbSignatureHeader carries the lower-case hex HMAC-SHA256 of the raw
// body keyed with the shared secret: the signature the provider-side
// dialect (api/dialect/tbb) checks, made by the same gateway.Signature.
const tbbSignatureHeader = "X-REQUEST-SIGN"

// tbbClient speaks The Bet Brothers' operator Wallet API: we stand where
// TBB's platform stands, the operator's WALLET_ENDPOINT answers. Every
// call is a signed POST to that one endpoint, its body's "action" naming
// the call.
type tbbClient struct {
	http     transport
	endpoint string
	secret   string
}

var _ wallet.OperatorWallet = (*tbbClient)(nil)

// tbbCode is what one of the addendum's wallet error codes means: a
// verdict, or undecided (the operator did not say no for good).
type tbbCode struct {
	verdict   wallet.Verdict
	undecided bool
}

// tbbCodes is every code of the addendum's Wallet Error Response with
// its meaning; a code not listed is undecided.
var tbbCodes = map[int]tbbCode{
	// Badly formatted JSON, or a signature that does not match: our
	// request or our secret, never the player's doing.
	400: {verdict: wallet.Fault},
	403: {verdict: wallet.Fault},
	402: {verdict: wallet.InsufficientFunds},
	404: {verdict: wallet.WrongPlayer},
	405: {verdict: wallet.InvalidGame},
	406: {verdict: wallet.UnknownTransaction},
	// Player blocked, bet rejected, responsible-gaming limit reached.
	407: {verdict: operatorRefused},
	408: {verdict: operatorRefused},
	418: {verdict: operatorRefused},
	// Unknown error, service unavailable, request timed out.
	500: {undecided: true},
	503: {undecided: true},
	504: {undecided: true},
}

// The actions of the Wallet API, by movement.
var tbbActions = map[wallet.MoveKind]string{wallet.Debit: "bet", wallet.Credit: "win", wallet.Cancel: "refund",
	wallet.Reverse: "rollback-win"}

// tbbBalanceBody is the balance call's body: flat, unlike the movements'.
type tbbBalanceBody struct {
	PlayerID     string `json:"player_id"`
	Reference    string `json:"reference"`
	CurrencyCode string `json:"currency_code"`
	Action       string `json:"action"`
	IsMobile     bool   `json:"is_mobile"`
	SessionToken string `json:"session_token"`
}

// tbbMoveBody is a bet's, win's, refund's or rollback-win's body: the
// amount in minor units, the game and session in payload, the provider's
// ids in payload.provider_transfer_data.
type tbbMoveBody struct {
	Amount       int64      `json:"amount"`
	CurrencyCode string     `json:"currency_code"`
	IsMobile     bool       `json:"is_mobile"`
	PlayerID     string     `json:"player_id"`
	Action       string     `json:"action"`
	Payload      tbbPayload `json:"payload"`
}

type tbbPayload struct {
	Reference            string      `json:"reference"`
	SessionToken         string      `json:"session_token"`
	ProviderTransferData tbbTransfer `json:"provider_transfer_data"`
}

type tbbTransfer struct {
	TransactionID            string       `json:"transaction_id"`
	RoundID                  string       `json:"round_id"`
	RoundClose               *bool        `json:"round_close,omitempty"`
	RefundedTransactionID    string       `json:"refunded_transaction_id,omitempty"`
	RollbackWinTransactionID string       `json:"rollback_win_transaction_id,omitempty"`
	Jackpot                  *tbbJackpot  `json:"jackpot,omitempty"`
	FreeSpin                 *tbbFreeSpin `json:"free_spin,omitempty"`
}

type tbbJackpot struct {
	IsJackpot bool `json:"is_jackpot"`
}

type tbbFreeSpin struct {
	IsFreeSpin bool `json:"is_free_spin"`
}

// tbbAnswer is every answer's fields: a success's (transaction_id,
// balance, currency_code) or an error's (code, message). The document
// asks us not to be strict: fields it does not list are ignored.
type tbbAnswer struct {
	TransactionID tbbID       `json:"transaction_id"`
	Balance       json.Number `json:"balance"`
	CurrencyCode  string      `json:"currency_code"`
	Code          json.Number `json:"code"`
	Message       string      `json:"message"`
}

// tbbID is an id the operator may write as a string or a number.
type tbbID string

// UnmarshalJSON reads a JSON string or number.
func (id *tbbID) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*id = tbbID(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("transaction_id is neither a string nor a number")
	}
	*id = tbbID(n)
	return nil
}

var tbbMinor = regexp.MustCompile(`^-?[0-9]{1,19}$`)

// balance is the answer's balance in c's minor units, after checking its
// currency when it says one.
func (a tbbAnswer) balance(c domain.Currency) (domain.Money, error) {
	if a.CurrencyCode != "" && a.CurrencyCode != c.Code() {
		return domain.Money{}, fmt.Errorf("balance in %s, want %s", clip(a.CurrencyCode), c.Code())
	}
	if !tbbMinor.MatchString(string(a.Balance)) {
		return domain.Money{}, fmt.Errorf("balance %q is no integer of minor units", clip(string(a.Balance)))
	}
	minor, err := strconv.ParseInt(string(a.Balance), 10, 64)
	if err != nil {
		return domain.Money{}, fmt.Errorf("balance %s: %w", a.Balance, err)
	}
	return domain.FromMinor(minor, c), nil
}

// Session: the Wallet API has no session call.
func (c *tbbClient) Session(context.Context, wallet.OperatorPlayer) (wallet.OperatorSession, error) {
	return wallet.OperatorSession{}, wallet.ErrNoSessionCall
}

// Lookup: the Wallet API cannot look a movement up.
func (c *tbbClient) Lookup(context.Context, wallet.OperatorMove) (wallet.OperatorAnswer, bool, error) {
	return wallet.OperatorAnswer{}, false, wallet.ErrNoLookup
}

// Balance is the player's balance: action "balance". The port names no
// game for a balance, so the document's reference (the game) is empty.
func (c *tbbClient) Balance(ctx context.Context, p wallet.OperatorPlayer) (domain.Money, error) {
	body, err := json.Marshal(tbbBalanceBody{PlayerID: p.Player, Reference: p.Game, CurrencyCode: p.Currency.Code(),
		Action: "balance", SessionToken: p.Token})
	if err != nil {
		return domain.Money{}, fmt.Errorf("tbb balance: encode: %w", err)
	}
	a, err := c.call(ctx, "balance", false, body)
	if err != nil {
		return domain.Money{}, err
	}
	b, err := a.balance(p.Currency)
	if err != nil {
		return domain.Money{}, unreadable(false, "tbb balance: %v", err)
	}
	return b, nil
}

// Move books m: action bet, win, refund or rollback-win.
func (c *tbbClient) Move(ctx context.Context, m wallet.OperatorMove) (wallet.OperatorAnswer, error) {
	if r := tbbCheck(m); r != nil {
		return wallet.OperatorAnswer{}, r
	}
	body, err := json.Marshal(tbbBody(m))
	if err != nil {
		return wallet.OperatorAnswer{}, fmt.Errorf("tbb %s %s: encode: %w", m.Kind, clip(m.ID), err)
	}
	a, err := c.call(ctx, m.Kind.String(), true, body)
	if err != nil {
		return wallet.OperatorAnswer{}, err
	}
	b, err := a.balance(m.Currency)
	if err != nil {
		return wallet.OperatorAnswer{}, unreadable(true, "tbb %s %s: %v", m.Kind, clip(m.ID), err)
	}
	return wallet.OperatorAnswer{TxID: string(a.TransactionID), Balance: b}, nil
}

// tbbCheck refuses, before anything is sent, a movement the Wallet API
// cannot carry faithfully.
func tbbCheck(m wallet.OperatorMove) *wallet.OperatorRefusal {
	switch {
	case tbbActions[m.Kind] == "":
		return refusedBefore(wallet.InvalidRequest, "field", "no movement kind")
	case m.Amount.Currency() != m.Currency || (!m.Jackpot.IsZero() && m.Jackpot.Currency() != m.Currency):
		return refusedBefore(wallet.WrongCurrency, "currency", "an amount in another currency than the player's")
	case m.Amount.IsNegative() || m.Jackpot.IsNegative():
		return refusedBefore(wallet.InvalidAmount, "amount", "a negative amount")
	case !m.Jackpot.IsZero() && (m.Kind != wallet.Credit || m.Jackpot.Cmp(m.Amount) > 0):
		return refusedBefore(wallet.InvalidAmount, "amount", "a jackpot part that is no part of a credit")
	case m.Promo && m.Kind != wallet.Credit && !m.Amount.IsZero():
		// A bet has no field saying free-bet money: sent as a bet, a
		// promo stake with an amount would take the player's own money.
		// A free spin's stake of zero is a bet of zero.
		return refusedBefore(wallet.Unsupported, "unsupported", "the Wallet API has no free-bet stake")
	case m.ID == "":
		return refusedBefore(wallet.InvalidRequest, "field", "no transaction id")
	case (m.Kind == wallet.Cancel || m.Kind == wallet.Reverse) && m.Ref == "":
		return refusedBefore(wallet.InvalidRequest, "field", "a refund or rollback names no transaction")
	}
	return nil
}

// tbbBody is m's body (m passed tbbCheck). transaction_id is always the
// movement's own id (the operator's idempotency key); a refund names the
// bet in refunded_transaction_id, a rollback-win the win in
// rollback_win_transaction_id.
func tbbBody(m wallet.OperatorMove) tbbMoveBody {
	t := tbbTransfer{TransactionID: m.ID, RoundID: m.Round}
	if t.RoundID == "" {
		// round_id is required; a payout outside any round (a promo
		// payout) is a round of its own.
		t.RoundID = m.ID
	}
	switch m.Kind {
	case wallet.Credit:
		closed := m.RoundClosed
		t.RoundClose = &closed
		if !m.Jackpot.IsZero() {
			// The document has no jackpot amount: the flag only.
			t.Jackpot = &tbbJackpot{IsJackpot: true}
		}
		if m.Promo {
			t.FreeSpin = &tbbFreeSpin{IsFreeSpin: true}
		}
	case wallet.Cancel:
		t.RefundedTransactionID = m.Ref
	case wallet.Reverse:
		t.RollbackWinTransactionID = m.Ref
	}
	return tbbMoveBody{Amount: m.Amount.Minor(), CurrencyCode: m.Currency.Code(), PlayerID: m.Player,
		Action:  tbbActions[m.Kind],
		Payload: tbbPayload{Reference: m.Game, SessionToken: m.Token, ProviderTransferData: t}}
}

// call posts the signed body and reads the answer: a success, the
// operator's refusal, or an error wrapping wallet.ErrOutcomeUnknown.
func (c *tbbClient) call(ctx context.Context, op string, move bool, body []byte) (tbbAnswer, error) {
	status, raw, err := c.http.do(ctx, move, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("tbb request: %w", err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		req.Header.Set(tbbSignatureHeader, gateway.Signature(c.secret, body))
		return req, nil
	})
	if err != nil {
		return tbbAnswer{}, fmt.Errorf("tbb %s: %w", op, err)
	}
	var a tbbAnswer
	decodeErr := json.Unmarshal(raw, &a)
	if status >= 200 && status <= 299 {
		if decodeErr != nil {
			return tbbAnswer{}, unreadable(move, "tbb %s: %v", op, decodeErr)
		}
		return a, nil
	}
	// The HTTP status is the error's type, the body's code its detail:
	// the body's code when it has one.
	code, fromBody := status, false
	if decodeErr == nil && a.Code != "" {
		if n, err := strconv.Atoi(string(a.Code)); err == nil {
			code, fromBody = n, true
		}
	}
	row, known := tbbCodes[code]
	switch {
	case status >= 500, !known, row.undecided,
		// A bare 408 is a proxy's timeout, not the operator's "bet is
		// rejected" (code 408 in its body).
		status == http.StatusRequestTimeout && !fromBody:
		return tbbAnswer{}, fmt.Errorf("tbb %s: %w", op, undecided(strconv.Itoa(code), a.Message))
	}
	return tbbAnswer{}, &wallet.OperatorRefusal{Verdict: row.verdict, Code: strconv.Itoa(code), Message: clip(a.Message)}
}
