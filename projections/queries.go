package projections

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"time"
)

// TransactionFilter selects rows of one client's transaction history. Empty
// fields do not filter.
type TransactionFilter struct {
	ClientID string
	PlayerID string
	Type     TxType
	Status   Status
	Currency string
	Provider string
	Game     string
	// From and To bound created_at: From <= created_at < To. Zero is open.
	From, To time.Time
}

// Filtered reports whether anything but the client narrows the rows.
func (f TransactionFilter) Filtered() bool {
	return f.PlayerID != "" || f.Type != "" || f.Status != "" || f.Currency != "" || f.Provider != "" ||
		f.Game != "" || !f.From.IsZero() || !f.To.IsZero()
}

// Page is a 1-based page of Size rows.
type Page struct {
	Number int
	Size   int
}

// Offset is the number of rows before the page.
func (p Page) Offset() int64 { return int64(p.Number-1) * int64(p.Size) }

// MaxExactTotal caps the count of a filtered history: counting every match
// of a filter on a large history costs a scan of all of them, so beyond
// this many the total is reported as MaxExactTotal and not exact. The
// unfiltered total is a maintained counter and always exact.
const MaxExactTotal = 10_000

// TransactionPage is one page of history, newest first.
type TransactionPage struct {
	Rows       []Transaction
	Total      int64
	TotalExact bool
}

// TransactionReader reads the transaction history.
type TransactionReader interface {
	Transactions(ctx context.Context, f TransactionFilter, p Page) (TransactionPage, error)
}

// Dimension is a report grouping.
type Dimension string

// Report dimensions. Currency is always part of a row: amounts of different
// currencies are never added up.
const (
	DimDay      Dimension = "day"
	DimMonth    Dimension = "month"
	DimProvider Dimension = "provider"
	DimGame     Dimension = "game"
	DimCurrency Dimension = "currency"
)

// Dimensions lists every dimension.
var Dimensions = []Dimension{DimDay, DimMonth, DimProvider, DimGame, DimCurrency}

// ReportQuery selects a client's report over UTC days From..To (both
// included), grouped by GroupBy.
type ReportQuery struct {
	ClientID string
	From, To time.Time
	GroupBy  []Dimension
}

// Has reports whether q groups by d.
func (q ReportQuery) Has(d Dimension) bool { return slices.Contains(q.GroupBy, d) }

// GGRRow is one group of a GGR report. Amounts are minor units in Currency.
type GGRRow struct {
	// Period is the day, or the first day of the month, of the group when
	// the report is grouped by day or month.
	Period   time.Time
	Provider string // when grouped by provider or game
	Game     string // when grouped by game
	Currency string
	Scale    int
	// Gross bets and wins, and the rollbacks booked in the period.
	Bets, BetRefunds, Wins, WinReversals                     int64
	PromoBets, PromoBetRefunds, PromoWins, PromoWinReversals int64
	// Jackpot parts of wins, and of the wins reversed in the period.
	JackpotWins, JackpotWinReversals int64
	// Rounds with a bet and players who bet, each counted once per group.
	Rounds, Players int64
}

// NetBets are the bets less the refunds.
func (r GGRRow) NetBets() int64 { return r.Bets - r.BetRefunds }

// NetWins are the wins less the reversals.
func (r GGRRow) NetWins() int64 { return r.Wins - r.WinReversals }

// GGR is net bets less net wins, real money only.
func (r GGRRow) GGR() int64 { return r.NetBets() - r.NetWins() }

// PromoGGR is the same for promo money (usually negative: the cost of free
// spins).
func (r GGRRow) PromoGGR() int64 {
	return (r.PromoBets - r.PromoBetRefunds) - (r.PromoWins - r.PromoWinReversals)
}

// JackpotGGR is what jackpots paid, net of reversals, as GGR: zero or
// negative (a jackpot has no stake of its own; contributions are part of
// the bets). GGR does not include it (docs/finance.md).
func (r GGRRow) JackpotGGR() int64 { return -(r.JackpotWins - r.JackpotWinReversals) }

// CommissionRow is the commission of one provider on one currency's GGR in
// one period.
type CommissionRow struct {
	Period   time.Time // first day of the period (a day or a month)
	Provider string
	Currency string
	Scale    int
	GGR      int64 // real-money GGR of the period, minor units
	// Commission is max(0, Owed) rounded half away from zero to minor
	// units: a negative period owes nothing (CommissionReport says how
	// deals work out Owed, and what a carry-forward deal carries).
	Commission int64
	// Owed is the exact sum of the period's days' commission, in minor
	// units (rate x GGR per day for a flat deal; a tiered or carry-forward
	// month's commission on its last day with GGR).
	Owed *big.Rat
	// Rate is the rate applied on the period's last day (decimal text; a
	// tiered deal's is the rate of the band its month reached), "" when no
	// deal applied. When the rate changed within the period, RateChanged
	// is set and Rate is the last one.
	Rate        string
	RateChanged bool
	// DealID and DealKind are the deal version applied on the period's
	// last day (0 and "" when none).
	DealID   int64
	DealKind string
}

// ReportReader reads the GGR read model and the commission deals.
type ReportReader interface {
	GGR(ctx context.Context, q ReportQuery) ([]GGRRow, error)
	Commission(ctx context.Context, q ReportQuery) ([]CommissionRow, error)
}

// PositionReader reads a projection's watermark: every event at or below it
// is reflected in the projection's read models.
type PositionReader interface {
	Position(ctx context.Context, p Name) (int64, error)
}

// LedgerHead reads the position of the last committed event.
type LedgerHead interface {
	Head(ctx context.Context) (position int64, hash []byte, err error)
}

// ClientHeads reads a client's own positions
// (adapters/postgres/eventstore.Accounts): what a client is shown instead of
// the platform's positions, which would reveal every other client's volume.
type ClientHeads interface {
	// ClientHead is the position of clientID's last event at or below
	// atMost; 0 when it has none there.
	ClientHead(ctx context.Context, clientID string, atMost int64) (int64, error)
}

// BehindError says a read model had not reached the position a caller
// asked for within the wait.
type BehindError struct {
	Source     string // a projection name, or "ledger"
	Want, Have int64
	RetryAfter time.Duration
}

func (e *BehindError) Error() string {
	return fmt.Sprintf("the %s read model is at position %d, not yet at %d", e.Source, e.Have, e.Want)
}

// BeyondHeadError says a caller asked for a position past the event store's
// head: no event has it yet, so waiting cannot help (a position from a
// write's answer is always at or below the head).
type BeyondHeadError struct {
	Want, Head int64
}

func (e *BeyondHeadError) Error() string {
	return fmt.Sprintf("position %d is beyond the ledger's head %d: no event has it yet", e.Want, e.Head)
}

// Defaults of Queries.
const (
	DefaultMaxWait      = 5 * time.Second
	DefaultPollInterval = 20 * time.Millisecond
)

// Queries answers reads from the read models. Each answer comes with the
// position it reflects at least; a caller that passes a minimum position
// (one it got from a write) waits until the read model has reached it, up
// to MaxWait, and otherwise gets a *BehindError; a minimum beyond the
// ledger's head (when Ledger is set) is a *BeyondHeadError at once.
//
// With Clients set, every position a query returns or reports in an error
// is the asking client's own (docs/read-models.md): its last event at or
// below the platform's position, so a client never learns the platform's
// head. Read-your-writes holds unchanged: a minimum position from the
// client's write is one of its own events, so the client's position of an
// answer that reached it is at least it. A minimum beyond the client's own
// head is a *BeyondHeadError (a position from its own answers never is).
type Queries struct {
	Transactions TransactionReader
	Reports      ReportReader
	// Rounds reads one round's rows (GET /api/v1/rounds/{round_id});
	// without it Round is ErrNotConfigured.
	Rounds    RoundReader
	Positions PositionReader
	Ledger    LedgerHead
	Clients   ClientHeads
	// MaxWait bounds the wait for a minimum position. Default 5s.
	MaxWait time.Duration
	// Poll is how often the position is read while waiting. Default 20ms.
	Poll time.Duration
}

// ErrNotConfigured is returned by a query whose reader is missing.
var ErrNotConfigured = errors.New("read model not configured")

// History returns a page of history and the position it reflects.
func (q *Queries) History(ctx context.Context, f TransactionFilter, p Page, minPosition int64) (TransactionPage, int64, error) {
	if q.Transactions == nil {
		return TransactionPage{}, 0, ErrNotConfigured
	}
	pos, err := q.await(ctx, History, f.ClientID, minPosition)
	if err != nil {
		return TransactionPage{}, 0, err
	}
	page, err := q.Transactions.Transactions(ctx, f, p)
	return page, pos, err
}

// GGR returns a GGR report and the position it reflects.
func (q *Queries) GGR(ctx context.Context, r ReportQuery, minPosition int64) ([]GGRRow, int64, error) {
	if q.Reports == nil {
		return nil, 0, ErrNotConfigured
	}
	pos, err := q.await(ctx, History, r.ClientID, minPosition)
	if err != nil {
		return nil, 0, err
	}
	rows, err := q.Reports.GGR(ctx, r)
	return rows, pos, err
}

// Commission returns a commission report and the position it reflects.
func (q *Queries) Commission(ctx context.Context, r ReportQuery, minPosition int64) ([]CommissionRow, int64, error) {
	if q.Reports == nil {
		return nil, 0, ErrNotConfigured
	}
	pos, err := q.await(ctx, History, r.ClientID, minPosition)
	if err != nil {
		return nil, 0, err
	}
	rows, err := q.Reports.Commission(ctx, r)
	return rows, pos, err
}

// LedgerPosition is the position of committed state (the accounts table):
// the chain head (with Clients, clientID's own head), waited for up to
// MaxWait when it is below minPosition. Read it before the state it
// describes, so the state reflects at least it.
func (q *Queries) LedgerPosition(ctx context.Context, clientID string, minPosition int64) (int64, error) {
	if q.scoped(clientID) {
		return q.wait(ctx, "ledger", clientID, minPosition, func(ctx context.Context) (int64, bool, error) {
			pos, err := q.Clients.ClientHead(ctx, clientID, math.MaxInt64)
			return pos, true, err
		})
	}
	if q.Ledger == nil {
		return 0, ErrNotConfigured
	}
	return q.wait(ctx, "ledger", clientID, minPosition, func(ctx context.Context) (int64, bool, error) {
		pos, _, err := q.Ledger.Head(ctx)
		return pos, false, err
	})
}

// scoped reports whether positions are shown as clientID's own.
func (q *Queries) scoped(clientID string) bool { return q.Clients != nil && clientID != "" }

func (q *Queries) await(ctx context.Context, p Name, clientID string, minPosition int64) (int64, error) {
	if q.Positions == nil {
		return 0, ErrNotConfigured
	}
	return q.wait(ctx, string(p), clientID, minPosition, func(ctx context.Context) (int64, bool, error) {
		pos, err := q.Positions.Position(ctx, p)
		return pos, false, err
	})
}

// wait reads a position until it reaches minPosition. read says whether
// the position it read is already the client's own; if not (and Clients is
// set) the answer is the client's last event at or below it.
func (q *Queries) wait(ctx context.Context, source, clientID string, minPosition int64,
	read func(context.Context) (pos int64, own bool, err error)) (int64, error) {
	maxWait, poll := q.MaxWait, q.Poll
	if maxWait <= 0 {
		maxWait = DefaultMaxWait
	}
	if poll <= 0 {
		poll = DefaultPollInterval
	}
	own := func(pos int64, isOwn bool) (int64, error) {
		if isOwn || !q.scoped(clientID) {
			return pos, nil
		}
		p, err := q.Clients.ClientHead(ctx, clientID, pos)
		if err != nil {
			return 0, fmt.Errorf("read the position of %s: %w", clientID, err)
		}
		return p, nil
	}
	// reached answers a position at or past minPosition. For a client,
	// a minimum that is none of its events and beyond its own head is
	// refused whether or not the read model is past it, so the answer does
	// not depend on timing; a minimum between two of its events is
	// reflected, and reported, as asked.
	reached := func(pos int64, isOwn bool) (int64, error) {
		p, err := own(pos, isOwn)
		if err != nil || p >= minPosition {
			return p, err
		}
		head, err := q.Clients.ClientHead(ctx, clientID, math.MaxInt64)
		if err != nil {
			return 0, fmt.Errorf("read the head of %s: %w", clientID, err)
		}
		if minPosition > head {
			return 0, &BeyondHeadError{Want: minPosition, Head: head}
		}
		return minPosition, nil
	}
	pos, isOwn, err := read(ctx)
	if err != nil {
		return 0, err
	}
	if pos >= minPosition {
		return reached(pos, isOwn)
	}
	// Behind: worth waiting only for a position the event store has (for a
	// client: one of its own events). The head is read after the read
	// model's position, so a position just committed (and not yet applied)
	// is at or below it.
	var head int64
	switch {
	case q.scoped(clientID):
		if head, err = q.Clients.ClientHead(ctx, clientID, math.MaxInt64); err != nil {
			return 0, fmt.Errorf("read the head of %s: %w", clientID, err)
		}
	case q.Ledger != nil:
		if head, _, err = q.Ledger.Head(ctx); err != nil {
			return 0, fmt.Errorf("read the ledger head: %w", err)
		}
	default:
		head = math.MaxInt64
	}
	if minPosition > head {
		return 0, &BeyondHeadError{Want: minPosition, Head: head}
	}
	deadline := time.NewTimer(maxWait)
	defer deadline.Stop()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-deadline.C:
			have, err := own(pos, isOwn)
			if err != nil {
				return 0, err
			}
			return 0, &BehindError{Source: source, Want: minPosition, Have: have, RetryAfter: time.Second}
		case <-tick.C:
		}
		if pos, isOwn, err = read(ctx); err != nil {
			return 0, err
		}
		if pos >= minPosition {
			return reached(pos, isOwn)
		}
	}
}
