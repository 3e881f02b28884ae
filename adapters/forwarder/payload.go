package forwarder

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// number is decimal text written as a JSON number, never through a float.
type number string

// MarshalJSON writes the text as is; it was checked by decimalText.
func (n number) MarshalJSON() ([]byte, error) { return []byte(n), nil }

// CallbackPayload is the body of a forwarded callback (spec: signed launch
// API, "Forwarded callback payload"), extended with the fields a client
// needs to reconcile. Amounts are JSON numbers with exactly the currency's
// decimals. Invariant: credit_amount = win_amount − bet_amount = the change
// of the player's balance caused by this event (balance_after minus the
// balance before it).
type CallbackPayload struct {
	MemberAccount string `json:"member_account"`
	GameUID       string `json:"game_uid"`
	BetAmount     number `json:"bet_amount"`
	WinAmount     number `json:"win_amount"`
	CreditAmount  number `json:"credit_amount"`
	Currency      string `json:"currency"`
	BalanceAfter  number `json:"balance_after"`
	// TransactionID is our id of the transaction: the ledger event's id
	// (what POST /api/v1/transactions and the wallet answer as
	// transaction_id), so it equals EventID.
	TransactionID          string `json:"transaction_id"`
	ExternalTxID           string `json:"external_transaction_id"`
	ReferenceTransactionID string `json:"reference_transaction_id,omitempty"`
	RoundID                string `json:"round_id"`
	RoundClosed            bool   `json:"round_closed"`
	Provider               string `json:"provider"`
	EventID                string `json:"event_id"`
	EventType              string `json:"event_type"`
	Kind                   string `json:"kind"`
	OccurredAt             string `json:"occurred_at"`
	StreamID               string `json:"stream_id"`
	StreamVersion          int64  `json:"stream_version"`
}

// Forwarded reports whether events of type t are forwarded to the client's
// callback URL: game activity only — bets, wins and rollbacks. Launches
// move no money and balance syncs restate the balance the client itself
// sent; they (and the operator's own money movements) are webhook kinds.
func Forwarded(t domain.EventType) bool {
	switch t {
	case domain.EventBetPlaced, domain.EventWinCredited, domain.EventBetRolledBack, domain.EventWinReversed,
		domain.EventRollbackRecorded:
		return true
	}
	return false
}

// decimalText checks that s is plain decimal text (as the ledger writes
// amounts) so it can be written as a JSON number verbatim.
func decimalText(s string) (number, error) {
	d := strings.TrimPrefix(s, "-")
	whole, frac, hasFrac := strings.Cut(d, ".")
	ok := whole != "" && strings.Trim(whole, "0123456789") == "" && (len(whole) == 1 || whole[0] != '0') &&
		(!hasFrac || (frac != "" && strings.Trim(frac, "0123456789") == ""))
	if !ok {
		return "", fmt.Errorf("amount %q is not decimal text: %w", s, domain.ErrInvalidAmount)
	}
	return number(s), nil
}

// zeroLike is zero with the decimals of amount ("0.00" for "10.50").
func zeroLike(amount number) number {
	if _, frac, ok := strings.Cut(string(amount), "."); ok {
		return number("0." + strings.Repeat("0", len(frac)))
	}
	return "0"
}

// neg is -amount; zero stays unsigned.
func neg(amount number) number {
	s := string(amount)
	if strings.Trim(s, "0.") == "" {
		return amount
	}
	if strings.HasPrefix(s, "-") {
		return number(s[1:])
	}
	return number("-" + s)
}

// BuildCallback returns the forwarded callback body of e, or nil when e is
// not forwarded.
//
//	event                       bet_amount  win_amount  credit_amount
//	wallet.bet_placed.v1        amount      0           −amount
//	wallet.win_credited.v1      0           amount      amount
//	wallet.bet_rolled_back.v1   −amount     0           amount   (the bet is refunded)
//	wallet.win_reversed.v1      0           −amount     −amount  (the win is taken back)
//	wallet.rollback_recorded.v1 0           0           0        (rollback of a transaction never seen)
//
// So summing bet_amount and win_amount over all callbacks gives the net
// amounts wagered and won, rollbacks included.
func BuildCallback(e domain.Event) ([]byte, error) {
	if !Forwarded(e.Type) {
		return nil, nil
	}
	amount, err := decimalText(e.Data.Amount)
	if err != nil {
		return nil, err
	}
	balance, err := decimalText(e.Data.BalanceAfter)
	if err != nil {
		return nil, err
	}
	zero := zeroLike(amount)
	bet, win := zero, zero
	switch e.Type {
	case domain.EventBetPlaced:
		bet = amount
	case domain.EventWinCredited:
		win = amount
	case domain.EventBetRolledBack:
		bet = neg(amount)
	case domain.EventWinReversed:
		win = neg(amount)
	}
	credit := zero
	switch {
	case bet != zero:
		credit = neg(bet)
	case win != zero:
		credit = win
	}
	kind, _ := gateway.KindOfEvent(e.Type)
	p := CallbackPayload{
		MemberAccount: e.Data.PlayerID, GameUID: e.Data.GameID, BetAmount: bet, WinAmount: win, CreditAmount: credit,
		Currency: e.Data.Currency, BalanceAfter: balance, TransactionID: e.ID,
		ExternalTxID: e.Data.ExternalTxID, ReferenceTransactionID: e.Data.ReferenceTx,
		RoundID: e.Data.RoundID, RoundClosed: e.Data.RoundClosed, Provider: e.Data.Provider,
		EventID: e.ID, EventType: string(e.Type), Kind: kind, OccurredAt: e.OccurredAt.UTC().Format(time.RFC3339Nano),
		StreamID: string(e.StreamID), StreamVersion: e.Version,
	}
	return json.Marshal(p)
}

// WebhookEnvelope is the body of every webhook: a stable envelope around
// the ledger event exactly as it is published on Kafka (its canonical
// body, described by schemas/events/<event_type>.schema.json).
type WebhookEnvelope struct {
	ID        string          `json:"id"`         // the event id
	Type      string          `json:"type"`       // the webhook kind, e.g. "bet"
	EventType string          `json:"event_type"` // the versioned event type, e.g. "wallet.bet_placed.v1"
	CreatedAt string          `json:"created_at"` // when the event occurred, RFC 3339 UTC
	ClientID  string          `json:"client_id"`
	Data      json.RawMessage `json:"data"`
}

// BuildWebhook returns the webhook body of e, whose canonical body is raw.
func BuildWebhook(e domain.Event, kind string, raw []byte) ([]byte, error) {
	if !json.Valid(raw) {
		return nil, fmt.Errorf("event %s: body is not JSON", e.ID)
	}
	return json.Marshal(WebhookEnvelope{ID: e.ID, Type: kind, EventType: string(e.Type),
		CreatedAt: e.OccurredAt.UTC().Format(time.RFC3339Nano), ClientID: e.Data.ClientID, Data: raw})
}

// Prepare turns one Kafka record's value (a canonical event body) into the
// deliveries to enqueue. ok is false for an event type this build does not
// know: nothing to deliver.
func Prepare(raw []byte) (out gateway.Outgoing, ok bool, err error) {
	e, out, ok, err := decodeRecord(raw)
	if !ok || err != nil {
		return gateway.Outgoing{}, ok, err
	}
	if err := buildBodies(e, raw, &out); err != nil {
		return gateway.Outgoing{}, false, err
	}
	return out, true, nil
}

// decodeRecord is the first half of Prepare: the event and its Outgoing
// without the bodies, which the forwarder builds only for the clients it
// does not skip.
func decodeRecord(raw []byte) (e domain.Event, out gateway.Outgoing, ok bool, err error) {
	e, err = domain.DecodeBody(raw)
	if err != nil {
		return e, out, false, fmt.Errorf("decode event: %w", err)
	}
	kind, known := gateway.KindOfEvent(e.Type)
	if !known {
		return e, out, false, nil
	}
	if e.ID == "" || e.Data.ClientID == "" || e.StreamID == "" {
		return e, out, false, fmt.Errorf("event %q of type %s lacks id, client or stream", e.ID, e.Type)
	}
	out = gateway.Outgoing{EventID: e.ID, EventType: string(e.Type), Kind: kind, ClientID: e.Data.ClientID,
		StreamID: string(e.StreamID), StreamVersion: e.Version, Position: e.Position, OccurredAt: e.OccurredAt}
	return e, out, true, nil
}

// buildBodies is the second half of Prepare: out's callback and webhook
// bodies.
func buildBodies(e domain.Event, raw []byte, out *gateway.Outgoing) (err error) {
	if out.Callback, err = BuildCallback(e); err != nil {
		return fmt.Errorf("event %s: callback: %w", e.ID, err)
	}
	if out.Webhook, err = BuildWebhook(e, out.Kind, raw); err != nil {
		return err
	}
	return nil
}
