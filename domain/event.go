package domain

import (
	"crypto/sha256"
	"encoding/json"
	"time"
)

// EventType is a stable, versioned event name. Consumers key on it: never
// rename one; add a .v2 instead.
type EventType string

// The ledger's event types.
const (
	EventDeposited        EventType = "wallet.deposited.v1"
	EventWithdrawn        EventType = "wallet.withdrawn.v1"
	EventTransferred      EventType = "wallet.transferred.v1"
	EventAdjusted         EventType = "wallet.adjusted.v1"
	EventBalanceSynced    EventType = "wallet.balance_synced.v1"
	EventBetPlaced        EventType = "wallet.bet_placed.v1"
	EventWinCredited      EventType = "wallet.win_credited.v1"
	EventBetRolledBack    EventType = "wallet.bet_rolled_back.v1"
	EventWinReversed      EventType = "wallet.win_reversed.v1"
	EventRollbackRecorded EventType = "wallet.rollback_recorded.v1"
	EventGameLaunched     EventType = "game.launched.v1"
	// EventRoundClosed is the ledger closing a round left open past its
	// provider's limit (DecideRoundClose). It moves no money.
	EventRoundClosed EventType = "wallet.round_closed.v1"
)

// Posting is one leg of a double entry: a signed amount (decimal text,
// negative = debit) on one account. The postings of an event sum to zero.
type Posting struct {
	Account AccountID `json:"account"`
	Amount  string    `json:"amount"`
}

// EventData is the payload of a ledger event. Amounts are decimal text in
// the event's currency so any consumer can read them exactly.
type EventData struct {
	ClientID     string `json:"client_id"`
	PlayerID     string `json:"player_id,omitempty"`
	Provider     string `json:"provider,omitempty"`
	GameID       string `json:"game_id,omitempty"`
	RoundID      string `json:"round_id,omitempty"`
	SessionID    string `json:"session_id,omitempty"`
	ExternalTxID string `json:"external_tx_id,omitempty"`
	ReferenceTx  string `json:"reference_tx_id,omitempty"`
	Currency     string `json:"currency"`
	Amount       string `json:"amount"`
	BalanceAfter string `json:"balance_after,omitempty"`
	Direction    string `json:"direction,omitempty"`
	RoundClosed  bool   `json:"round_closed,omitempty"`
	Promo        bool   `json:"promo,omitempty"`
	// Jackpot is the part of a win's Amount a jackpot paid (decimal text,
	// 0 < Jackpot <= Amount); empty when none. Postings still move the whole
	// Amount: the split only says which kind of money it is.
	Jackpot string `json:"jackpot,omitempty"`
	// CampaignID and RewardID name the provider's free-bet campaign and the
	// reward given to the player, on a promo bet or win that has them.
	CampaignID string `json:"campaign_id,omitempty"`
	RewardID   string `json:"reward_id,omitempty"`
	// FreeBets, on a reward's event, is how many free bets it granted,
	// withdrew (cancelled) or left unused (expired); Amount is then the
	// value of one. ProviderRef is the provider's id of a granted reward
	// where its promotion API gave one.
	FreeBets    int64  `json:"free_bets,omitempty"`
	ProviderRef string `json:"provider_ref,omitempty"`
	// OperatorTxID is a seamless client's wallet's id of the movement
	// that decided a game call (domain.Reported); BalanceAfter is then the
	// balance that wallet reported.
	OperatorTxID string    `json:"operator_tx_id,omitempty"`
	ExpiresAt    string    `json:"expires_at,omitempty"`
	Reason       string    `json:"reason,omitempty"`
	Postings     []Posting `json:"postings"`
}

// Metadata carries correlation data. It is part of the hashed body.
type Metadata struct {
	RequestID     string `json:"request_id,omitempty"`
	CorrelationID string `json:"correlation_id,omitempty"`
	Actor         string `json:"actor,omitempty"`
}

// Event is one immutable fact in the ledger. Position, hashes and the
// stream version are assigned by the event store when it appends.
type Event struct {
	ID         string    `json:"id"`
	Type       EventType `json:"type"`
	StreamID   AccountID `json:"stream_id"`
	Version    int64     `json:"version"`
	Position   int64     `json:"position"`
	OccurredAt time.Time `json:"occurred_at"`
	Data       EventData `json:"data"`
	Meta       Metadata  `json:"meta"`
}

// body is the canonical, hashed encoding of an event. Field order is fixed
// by the struct; time is UTC with nanoseconds.
type body struct {
	Position   int64     `json:"position"`
	ID         string    `json:"id"`
	Type       EventType `json:"type"`
	StreamID   AccountID `json:"stream_id"`
	Version    int64     `json:"version"`
	OccurredAt string    `json:"occurred_at"`
	Data       EventData `json:"data"`
	Meta       Metadata  `json:"meta"`
}

// EncodeBody returns the canonical bytes of e that the hash chain covers.
func EncodeBody(e Event) ([]byte, error) {
	// RFC 3339 has four-digit years: a body with another year could be
	// written once and never read back (encodeBody refuses it).
	return encodeBody(e)
}

// DecodeBody parses canonical bytes back into an event.
func DecodeBody(b []byte) (Event, error) {
	var x body
	if !decodeCanonical(b, &x) {
		x = body{}
		if err := json.Unmarshal(b, &x); err != nil {
			return Event{}, err
		}
	}
	t, err := time.Parse(time.RFC3339Nano, x.OccurredAt)
	if err != nil {
		return Event{}, err
	}
	return Event{ID: x.ID, Type: x.Type, StreamID: x.StreamID, Version: x.Version, Position: x.Position,
		OccurredAt: t, Data: x.Data, Meta: x.Meta}, nil
}

// GenesisHash is the previous hash of the first event.
var GenesisHash = make([]byte, sha256.Size)

// ChainHash is SHA-256(prev || body): anyone holding the exported bodies can
// recompute the chain without our code.
func ChainHash(prev, body []byte) []byte {
	h := sha256.New()
	h.Write(prev)
	h.Write(body)
	return h.Sum(nil)
}
