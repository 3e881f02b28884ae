// Package projections builds the read models from ledger events and answers
// queries over them. A projection is a pure function from one event (and the
// few facts it looks up) to Changes; a store applies Changes. The live store
// is Postgres (adapters/postgres/readstore), fed by a Kafka consumer group per
// projection (adapters/projector); Memory applies the same Changes in memory
// for a rebuild (`pitboss replay`). Both use the per-stream checkpoint rule
// of Checkpoint, so a redelivered event has no second effect.
package projections

import (
	"errors"
	"fmt"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// Name names a projection. It is part of the projection's Kafka consumer
// group and of its checkpoint rows, so it is frozen once released: a renamed
// projection consumes the whole topic again into the same tables.
type Name string

// The projections.
const (
	// History keeps the transaction history, the game results and GGR.
	// They share one projection because a rollback is booked against the
	// game and promo kind of the transaction it undoes, which only the
	// history knows.
	History Name = "history"
	// Balances keeps the client and player wallet balances.
	Balances Name = "balances"
)

// All lists every projection.
var All = []Name{History, Balances}

// ConsumerGroup is the Kafka consumer group of the projection:
// "pitboss.projection.<name>.v1". Frozen, like the name.
func (n Name) ConsumerGroup() string { return "pitboss.projection." + string(n) + ".v1" }

// Valid reports whether n is a known projection.
func (n Name) Valid() bool { return n == History || n == Balances }

// TxType is the type of a transaction history row.
type TxType string

// Transaction types.
const (
	TypeBet         TxType = "bet"
	TypeWin         TxType = "win"
	TypeRollback    TxType = "rollback"
	TypeDeposit     TxType = "deposit"
	TypeWithdrawal  TxType = "withdrawal"
	TypeTransfer    TxType = "transfer"
	TypeAdjustment  TxType = "adjustment"
	TypeBalanceSync TxType = "balance_sync"
	TypeLaunch      TxType = "launch"
	// TypeGameResult is a round's net result for the player.
	TypeGameResult TxType = "game_result"
	// TypeRoundClose is the ledger closing a round left open past its
	// provider's limit (wallet.round_closed.v1): no money moves.
	TypeRoundClose TxType = "round_close"
)

// TxTypes lists every type.
var TxTypes = []TxType{TypeBet, TypeWin, TypeRollback, TypeDeposit, TypeWithdrawal, TypeTransfer,
	TypeAdjustment, TypeBalanceSync, TypeLaunch, TypeGameResult, TypeRoundClose}

// Status is the status of a transaction history row.
type Status string

// Statuses. A bet booked and then refunded is rolled_back (Caleta's
// ROLLED_BACK); "discarded" marks a rollback that found nothing to roll
// back: the transaction it names was never booked and is refused if it
// comes (Caleta's DISCARDED, docs/read-models.md). Rejected commands never
// reach the ledger. "failed" is what such a rollback was called before
// migration 00024; no row has it since.
const (
	StatusPending    Status = "pending"
	StatusSettled    Status = "settled"
	StatusRolledBack Status = "rolled_back"
	StatusDiscarded  Status = "discarded"
	StatusFailed     Status = "failed"
	// StatusAutoClosed is a round's status in the provider round export
	// (ProviderRound) when the ledger closed it as stale
	// (wallet.round_closed.v1); its game result is settled.
	StatusAutoClosed Status = "auto_closed"
)

// Statuses lists every status of a history row (a filter may name any).
var Statuses = []Status{StatusPending, StatusSettled, StatusRolledBack, StatusDiscarded, StatusFailed}

// Transaction is one row of the transaction history. In Changes.GameResults
// the numeric game-result fields are deltas (see Memory for the rule).
type Transaction struct {
	ID       string
	ClientID string
	Type     TxType
	// Amount is signed minor units from the wallet's view: money into the
	// wallet is positive.
	Amount   int64
	Currency string
	Scale    int
	// Status is the stored status; for a game result it is derived from
	// OpenBets, RolledBets, Wins and Closed (GameResultStatus).
	Status       Status
	CreatedAt    time.Time
	Provider     string // "" when none
	Game         string
	PlayerID     string
	RoundID      string
	ExternalTxID string
	ReferenceTx  string // the ExternalTxID a win or rollback refers to
	// Seq and Sub order the history: the position of the creating event
	// (for a game result, the lowest position of its events), then 0 for
	// event rows and 1 for game results.
	Seq int64
	Sub int
	// Position is the position of the last event that changed the row.
	Position        int64
	BalanceAfter    int64
	HasBalanceAfter bool
	Promo           bool
	// Jackpot is the jackpot part of a win (minor units, within Amount),
	// and on the rollback row of a reversed win the part it took back; 0
	// when none.
	Jackpot int64
	// CampaignID and RewardID name a free bet's campaign and reward, on
	// the promo bet or win that carried them ("" when none).
	CampaignID, RewardID string
	// Game results only.
	OpenBets, RolledBets, Wins int64
	Closed                     bool
}

// GameResultStatus is the status of a game result: rolled back when every
// bet was refunded and no win stands, settled once the provider closed the
// round, pending before. Postgres keeps the same rule as a generated
// column (migrations/00003_read_models.sql); a test holds them together.
func GameResultStatus(openBets, rolledBets, wins int64, closed bool) Status {
	switch {
	case openBets == 0 && rolledBets > 0 && wins == 0:
		return StatusRolledBack
	case closed:
		return StatusSettled
	}
	return StatusPending
}

// AddGameResult adds d, a later change of the same game result (one id),
// to t: the sums add up, the round closes once closed, the highest position
// stays, and seq, time, game and player come from the lowest seq (the
// earlier of equal ones). The order of changes therefore does not matter
// but for ties. Memory applies it, and Postgres's game-result upsert is
// the same rule in SQL (adapters/postgres/readstore, upsertGameResults), which also
// merges a batch's changes with it first. Status is left to the caller.
func (t *Transaction) AddGameResult(d Transaction) {
	t.Amount += d.Amount
	t.OpenBets += d.OpenBets
	t.RolledBets += d.RolledBets
	t.Wins += d.Wins
	t.Closed = t.Closed || d.Closed
	t.Position = max(t.Position, d.Position)
	if d.Seq < t.Seq {
		t.Seq, t.CreatedAt, t.Game, t.PlayerID = d.Seq, d.CreatedAt, d.Game, d.PlayerID
	}
}

// GameTxKey names a provider's bet or win: provider transaction ids are
// single-use per client and provider.
type GameTxKey struct{ ClientID, Provider, ExternalTxID string }

// GameTx is what a rollback needs to know about the transaction it undoes.
type GameTx struct {
	Type  TxType
	Game  string
	Promo bool
	// Jackpot is a win's jackpot part (minor units).
	Jackpot int64
}

// Lookup finds a bet or win already in the history.
type Lookup func(GameTxKey) (GameTx, bool)

// RollbackMark marks a bet or win as rolled back by the event at Position.
type RollbackMark struct {
	Key      GameTxKey
	Position int64
}

// GGRKey is one group of the daily GGR.
type GGRKey struct {
	ClientID string
	Day      time.Time // 00:00 UTC
	Provider string
	Game     string
	Currency string
}

// GGRDelta adds to one GGR group. All amounts are positive minor units.
// A win's jackpot part is jackpot money, never game or promo money: Wins
// and PromoWins hold the rest of the win.
type GGRDelta struct {
	GGRKey
	Scale                                                    int
	Bets, BetRefunds, Wins, WinReversals                     int64
	PromoBets, PromoBetRefunds, PromoWins, PromoWinReversals int64
	JackpotWins, JackpotWinReversals                         int64
	// Rounds is kept by the store, never set by a projection: how many
	// rounds start in the group (see RoundStart).
	Rounds int64
}

// Add adds d's amounts to g (not its rounds: a round is counted where it
// starts, see RoundStart).
func (g *GGRDelta) Add(d GGRDelta) {
	g.Bets += d.Bets
	g.BetRefunds += d.BetRefunds
	g.Wins += d.Wins
	g.WinReversals += d.WinReversals
	g.PromoBets += d.PromoBets
	g.PromoBetRefunds += d.PromoBetRefunds
	g.PromoWins += d.PromoWins
	g.PromoWinReversals += d.PromoWinReversals
	g.JackpotWins += d.JackpotWins
	g.JackpotWinReversals += d.JackpotWinReversals
}

// GGRMember is a member of a GGR group's set of players, or a round with a
// bet in the group.
type GGRMember struct {
	GGRKey
	Member string
}

// RoundKey names a round: its client, provider, currency and round key.
type RoundKey struct {
	ClientID, Provider, Currency, Round string
}

// RoundStart is the group a round is counted in: the earliest day of its
// bets and, on that day, the least game id in byte order. Being a minimum,
// it does not depend on the order the bets are applied in (a round's bets
// may be on several streams, applied by different partitions), so live
// projection and replay agree. A report's round count is then a sum.
type RoundStart struct {
	Day  time.Time
	Game string
}

// Before reports whether s starts before o.
func (s RoundStart) Before(o RoundStart) bool {
	if c := s.Day.Compare(o.Day); c != 0 {
		return c < 0
	}
	return s.Game < o.Game
}

// KeyOfRound returns the round of a Changes.Rounds member and the group it
// was bet in.
func KeyOfRound(r GGRMember) (RoundKey, RoundStart) {
	return RoundKey{ClientID: r.ClientID, Provider: r.Provider, Currency: r.Currency, Round: r.Member},
		RoundStart{Day: r.Day, Game: r.Game}
}

// PlayerMonth names a player's bet days in one month and currency: a
// bitmap whose bit d-1 is day d of the month (readmodels.ggr_player_months).
// A report grouped by currency or month counts distinct players from these
// (a row or two per player) instead of from the daily members of every
// game.
type PlayerMonth struct {
	ClientID string
	Month    time.Time // the first day, 00:00 UTC
	Currency string
	PlayerID string
}

// PlayerMonthOf is the month row of player member p and p's day as a bit of
// its bitmap.
func PlayerMonthOf(p GGRMember) (PlayerMonth, int64) {
	d := p.Day.UTC()
	return PlayerMonth{ClientID: p.ClientID, Month: time.Date(d.Year(), d.Month(), 1, 0, 0, 0, 0, time.UTC),
		Currency: p.Currency, PlayerID: p.Member}, 1 << (d.Day() - 1)
}

// Balance is one wallet's balance.
type Balance struct {
	Account  domain.AccountID
	Kind     string // "client" or "player"
	ClientID string
	PlayerID string // "" for a client wallet
	Currency string
	Scale    int
	Balance  int64 // minor units
	Position int64 // of the last event that changed it
}

// Changes are what one event does to the read models of one projection.
type Changes struct {
	Transactions []Transaction  // new rows
	RolledBack   []RollbackMark // bets and wins to mark rolled back
	GameResults  []Transaction  // game results to create or add to
	GGR          []GGRDelta
	Players      []GGRMember
	Rounds       []GGRMember // the round of a bet, in the bet's group
	Balances     []Balance   // Balance is the delta to add; Position the event's
}

// Projection turns events into Changes. Implementations are pure: the same
// event and lookups give the same Changes.
type Projection interface {
	Name() Name
	// Lookups names the transactions Apply will look up for e, so a store
	// can fetch them before it calls Apply.
	Lookups(e domain.Event) []GameTxKey
	// Apply returns what e changes. An *InvalidEventError means the event
	// can never be applied.
	Apply(e domain.Event, find Lookup) (Changes, error)
}

// ByName returns the projection called n.
func ByName(n Name) (Projection, error) {
	switch n {
	case History:
		return history{}, nil
	case Balances:
		return balances{}, nil
	}
	return nil, fmt.Errorf("projection %q: %w", n, domain.ErrNotFound)
}

// Checkpoint decides what to do with an event of a stream whose last
// applied version is applied: skip it (at or below: a redelivery), apply it
// (the next one), or refuse it with a *GapError (a version is missing: it
// is still to come, so applying this one now would reorder the stream).
func Checkpoint(p Name, e domain.Event, applied int64) (apply bool, err error) {
	switch {
	case e.Version <= applied:
		return false, nil
	case e.Version > applied+1:
		return false, &GapError{Projection: p, StreamID: string(e.StreamID), Applied: applied, Got: e.Version}
	}
	return true, nil
}

// ErrInvalidEvent is wrapped by every InvalidEventError.
var ErrInvalidEvent = errors.New("invalid event")

// InvalidEventError says an event cannot be applied: its content breaks a
// rule of the read models. Retrying does not help; the projector sends it
// to the dead-letter topic.
type InvalidEventError struct {
	EventID string
	Reason  string
}

func (e *InvalidEventError) Error() string {
	return fmt.Sprintf("event %s: %s", e.EventID, e.Reason)
}

// Unwrap lets errors.Is match ErrInvalidEvent.
func (e *InvalidEventError) Unwrap() error { return ErrInvalidEvent }

func invalid(e domain.Event, format string, args ...any) error {
	return &InvalidEventError{EventID: e.ID, Reason: fmt.Sprintf(format, args...)}
}

// GapError says a stream's event arrived before an earlier one.
type GapError struct {
	Projection Name
	StreamID   string
	Applied    int64
	Got        int64
}

func (e *GapError) Error() string {
	return fmt.Sprintf("projection %s: stream %s is at version %d, got version %d: versions %d..%d are missing",
		e.Projection, e.StreamID, e.Applied, e.Got, e.Applied+1, e.Got-1)
}

// DeadLetter is an event a projection gave up on: undecodable, invalid, or
// stuck behind a gap for too long. The projector publishes it to the
// dead-letter topic and the store moves the stream's checkpoint past it, so
// the stream's later events still apply. A rebuild repairs what it missed.
type DeadLetter struct {
	Projection Name
	EventID    string
	StreamID   string // "" when unknown
	Version    int64  // 0 when unknown
	Position   int64
	Reason     string
	Topic      string
	Partition  int32
	Offset     int64
}

// ApplyResult is what became of one event of a batch: applied, skipped (a
// redelivery: neither applied nor an error), or refused with a *GapError or
// an *InvalidEventError (the event was left out; the rest of the batch
// stands).
type ApplyResult struct {
	Applied bool
	Err     error
}
