package domain

import (
	"fmt"
	"time"
)

// TxKind says what an external transaction was. Stored with its record.
type TxKind string

// Transaction kinds remembered by the ledger.
const (
	TxBet        TxKind = "bet"
	TxWin        TxKind = "win"
	TxRollback   TxKind = "rollback"
	TxDeposit    TxKind = "deposit"
	TxWithdrawal TxKind = "withdrawal"
	TxTransfer   TxKind = "transfer"
	TxAdjustment TxKind = "adjustment"
	TxSync       TxKind = "balance_sync"
	TxLaunch     TxKind = "launch"
	// TxTombstone marks the id of a transaction that was rolled back before
	// it arrived: the late original is refused.
	TxTombstone TxKind = "tombstone"
	// TxRound is the state of one game round (its open and rolled-back bets).
	TxRound TxKind = "round"
	// TxRoundClose is the ledger's close of a stale round (DecideRoundClose).
	TxRoundClose TxKind = "round_close"
)

// TxRecord is what the ledger remembers about one external transaction id:
// enough to answer a retry with the original result, to detect a reused id
// with a different request, and to apply a rollback at most once.
type TxRecord struct {
	Key        string    `json:"key"`
	Kind       TxKind    `json:"kind"`
	Account    AccountID `json:"account"`
	PlayerID   string    `json:"player_id,omitempty"`
	Currency   string    `json:"currency"`
	Amount     int64     `json:"amount"` // minor units
	RoundID    string    `json:"round_id,omitempty"`
	RolledBack bool      `json:"rolled_back,omitempty"`
	OpenBets   int64     `json:"open_bets,omitempty"`   // rounds only
	RolledBets int64     `json:"rolled_bets,omitempty"` // rounds only
	Closed     bool      `json:"closed,omitempty"`      // rounds only
	// Wins counts the wins, not reversed, that settle a bet: on a bet the
	// wins naming it, on a round its wins naming no bet. A bet so settled
	// cannot be rolled back (ErrBetSettled).
	Wins int64 `json:"wins,omitempty"`
	// Settles is, on a win, the key of the record whose Wins counts it
	// (the bet it names, or its round), so reversing the win takes it off
	// there. Wins booked before the rule have none and count nowhere.
	Settles string `json:"settles,omitempty"`
	// Campaign and Reward: on a reward (TxReward), its campaign and id; on
	// a round whose bet spent a free bet of a reward the ledger granted,
	// that reward and its campaign (its wins are that reward's promo
	// wins); on such a bet, the reward it spent.
	Campaign string `json:"campaign,omitempty"`
	Reward   string `json:"reward,omitempty"`
	// FreeBets and Used, on a reward: how many free bets it grants and how
	// many were spent; State is RewardActive, RewardCancelled or
	// RewardExpired; ValidUntil its end (RFC 3339, UTC).
	FreeBets   int64  `json:"free_bets,omitempty"`
	Used       int64  `json:"used,omitempty"`
	State      string `json:"state,omitempty"`
	ValidUntil string `json:"valid_until,omitempty"`
	EventID    string `json:"event_id,omitempty"`
	Position   int64  `json:"position,omitempty"` // of EventID; set by the store
	// BalanceAfter is the wallet balance the original call answered with.
	BalanceAfter string            `json:"balance_after,omitempty"`
	Request      map[string]string `json:"request,omitempty"`
	// CreatedAt is when the original call was recorded.
	CreatedAt time.Time `json:"created_at"`
}

// GameTxKey is the idempotency key of a provider's transaction id: provider
// ids are unique per provider, and we keep clients apart.
func GameTxKey(client, provider, externalID string) string {
	return "game|" + client + "|" + provider + "|" + externalID
}

// ClientTxKey is the idempotency key of an operator's own transaction id.
func ClientTxKey(client, externalID string) string {
	return "client|" + client + "|" + externalID
}

// RoundKey is the key of a round's state record.
func RoundKey(client, provider, round string) string {
	return "round|" + client + "|" + provider + "|" + round
}

// AccountState is the persisted state of one account: its balance in minor
// units and the version of its stream (the number of events in it).
type AccountState struct {
	Balance int64
	Version int64
}

// Change is the outcome of one decision: one event and the records it
// creates or updates. A view applies it whole or not at all.
type Change struct {
	Event   Event
	Records []TxRecord
}

// Reader is what a decision may look at.
type Reader interface {
	Account(id AccountID) AccountState
	Record(key string) (TxRecord, bool)
}

// View holds the slice of ledger state one batch of decisions works on. The
// event store loads it, decisions read it, Apply changes it, and the store
// persists what changed. It is not safe for concurrent use.
type View struct {
	accounts     map[AccountID]AccountState
	records      map[string]TxRecord
	dirtyAcc     map[AccountID]struct{}
	dirtyRec     map[string]struct{}
	newRec       map[string]struct{}
	pendingOrder []string
}

// NewView returns an empty view.
func NewView() *View {
	return &View{
		accounts: map[AccountID]AccountState{}, records: map[string]TxRecord{},
		dirtyAcc: map[AccountID]struct{}{}, dirtyRec: map[string]struct{}{}, newRec: map[string]struct{}{},
	}
}

// LoadAccount puts a persisted account state into the view.
func (v *View) LoadAccount(id AccountID, s AccountState) { v.accounts[id] = s }

// LoadRecord puts a persisted record into the view.
func (v *View) LoadRecord(r TxRecord) { v.records[r.Key] = r }

// Account returns the state of id; an unknown account is empty.
func (v *View) Account(id AccountID) AccountState { return v.accounts[id] }

// Record returns the record stored under key.
func (v *View) Record(key string) (TxRecord, bool) {
	r, ok := v.records[key]
	return r, ok
}

// Apply checks c against the ledger's invariants and applies it: the
// postings sum to zero in the event's currency, wallets stay at or above
// zero, and the event takes the next version of its stream. On error nothing
// changes. It returns the event with its version set.
func (v *View) Apply(c Change) (Event, error) {
	e := c.Event
	cur, err := ParseCurrency(e.Data.Currency)
	if err != nil {
		return Event{}, err
	}
	next := make(map[AccountID]int64, len(e.Data.Postings))
	var sum int64
	for _, p := range e.Data.Postings {
		if p.Account.CurrencyCode() != cur.code {
			return Event{}, fmt.Errorf("posting on %s in event of %s: %w", p.Account, cur, ErrCurrencyMismatch)
		}
		m, err := ParseMoney(p.Amount, cur)
		if err != nil {
			return Event{}, fmt.Errorf("posting on %s: %w", p.Account, err)
		}
		var ok bool
		if sum, ok = addInt64(sum, m.minor); !ok {
			return Event{}, ErrAmountOverflow
		}
		base, seen := next[p.Account]
		if !seen {
			base = v.accounts[p.Account].Balance
		}
		nb, ok := addInt64(base, m.minor)
		if !ok {
			return Event{}, fmt.Errorf("balance of %s: %w", p.Account, ErrAmountOverflow)
		}
		next[p.Account] = nb
	}
	if sum != 0 {
		return Event{}, fmt.Errorf("event %s: postings sum to %d, not zero: %w", e.Type, sum, ErrInvalidAmount)
	}
	for id, b := range next {
		if b < 0 && !id.Kind().MayGoNegative() {
			return Event{}, fmt.Errorf("%s would go to %s: %w", id, FormatMinor(b, cur.Exponent()), ErrInsufficientFunds)
		}
	}
	for id, b := range next {
		s := v.accounts[id]
		s.Balance = b
		v.accounts[id] = s
		v.dirtyAcc[id] = struct{}{}
	}
	s := v.accounts[e.StreamID]
	s.Version++
	e.Version = s.Version
	v.accounts[e.StreamID] = s
	v.dirtyAcc[e.StreamID] = struct{}{}
	for _, r := range c.Records {
		if _, existed := v.records[r.Key]; !existed {
			v.newRec[r.Key] = struct{}{}
		}
		if _, dirty := v.dirtyRec[r.Key]; !dirty {
			v.pendingOrder = append(v.pendingOrder, r.Key)
		}
		v.records[r.Key] = r
		v.dirtyRec[r.Key] = struct{}{}
	}
	return e, nil
}

// DirtyAccounts returns the accounts whose state changed, with that state.
func (v *View) DirtyAccounts() map[AccountID]AccountState {
	out := make(map[AccountID]AccountState, len(v.dirtyAcc))
	for id := range v.dirtyAcc {
		out[id] = v.accounts[id]
	}
	return out
}

// Created reports whether the record under key was created in this view
// (it was not there when a change first wrote it).
func (v *View) Created(key string) bool {
	_, ok := v.newRec[key]
	return ok
}

// DirtyRecords returns the records created or changed, in the order they
// were first touched, and whether each is new.
func (v *View) DirtyRecords() (recs []TxRecord, isNew []bool) {
	for _, k := range v.pendingOrder {
		recs = append(recs, v.records[k])
		_, n := v.newRec[k]
		isNew = append(isNew, n)
	}
	return recs, isNew
}
