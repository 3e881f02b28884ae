package wallet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/pitboss/pitboss/domain"
)

// FollowUpQueue is the follow-up store as its runner works it.
type FollowUpQueue interface {
	FollowUps
	// Claim takes up to limit follow-ups due at now, each leased for
	// lease (another runner skips it meanwhile).
	Claim(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]FollowUp, error)
	// Finish marks f settled with its outcome.
	Finish(ctx context.Context, id int64, outcome string, at time.Time) error
	// Retry counts a failed attempt and sets the next.
	Retry(ctx context.Context, id int64, next time.Time, lastErr string) error
}

// FollowUpRecord is a follow-up as listed: pending, or settled with its
// outcome.
type FollowUpRecord struct {
	FollowUp
	Outcome string
	DoneAt  *time.Time
}

// Follow-up outcomes.
const (
	OutcomeCancelled    = "cancelled"
	OutcomeNeverApplied = "not applied at the operator"
	OutcomeBooked       = "acknowledged and booked"
	// OutcomeBookedInLedger: a voided debit the ledger booked after all
	// (its booking was answered with an error, e.g. a connection lost
	// during COMMIT, yet applied): the debit stands at the operator.
	OutcomeBookedInLedger = "booked in the ledger: the debit stands"
)

// VoidPrefix makes the id of the cancel of a voided debit from the
// debit's id: one cancel per debit, whatever retries send it.
const VoidPrefix = "void@"

// Settle makes one attempt at f: done reports whether f is settled
// (outcome says how); an error means try again later.
func (c *Core) Settle(ctx context.Context, f FollowUp) (outcome string, done bool, err error) {
	sess, err := c.deps.Sessions.Session(ctx, f.Call.Session)
	if err != nil {
		return "", false, fmt.Errorf("session %s: %w", f.Call.Session, err)
	}
	cur, err := domain.ParseCurrency(sess.Currency)
	if err != nil {
		return "", false, fmt.Errorf("currency of session %s: %w", sess.ID, err)
	}
	s := Session{GameSession: sess, Cur: cur}
	op, err := c.operator(ctx, s)
	switch {
	case err != nil:
		return "", false, err
	case op == nil:
		return "", false, fmt.Errorf("client %s is no longer in seamless mode: its wallet cannot be reached", s.ClientID)
	}
	t, amount, err := f.Call.tx(cur)
	if err != nil {
		return "", false, err
	}
	kind, _ := ParseMoveKind(f.Call.Move)
	m := s.move(kind, t, amount, f.Call.MoveRef, c.now())
	m.ID = f.Call.MoveID
	if f.Action == ActionCancel {
		// The ledger may hold the bet after all: its booking was applied
		// but answered with an error (a connection lost during COMMIT),
		// and a retry of it has been answered from the ledger since. Its
		// debit then stands: a cancel would give the stake back at the
		// operator while the ledger and the provider hold the bet.
		rec, found, err := c.Record(ctx, s, m.ID)
		switch {
		case err != nil:
			return "", false, err
		case found && rec.Kind == domain.TxBet && rec.PlayerID == s.PlayerID:
			return OutcomeBookedInLedger, true, nil
		}
		return c.cancelVoided(ctx, op, s, m)
	}
	ans, err := op.Move(ctx, m)
	if unknown(err) {
		return "", false, err
	} else if err != nil {
		return refusedOutcome(err), true, nil
	}
	g := s.gameTx(t)
	g.Reported = &domain.Reported{TxID: ans.TxID, Balance: ans.Balance}
	switch f.Call.Kind {
	case domain.TxWin:
		_, err = c.deps.Ledger.CreditWin(ctx, g, amount, f.Call.Ref)
	default:
		_, err = c.deps.Ledger.Rollback(ctx, g, f.Call.Ref)
	}
	if v, known := VerdictOf(err); err != nil && known && v != Fault {
		return "acknowledged by the operator, refused by the ledger: " + err.Error(), true, nil
	} else if err != nil {
		return "", false, fmt.Errorf("book %s %s: %w", f.Call.Kind, t.ID, err)
	}
	return OutcomeBooked, true, nil
}

// cancelVoided cancels at the operator the debit m whose outcome was
// unknown: looked up first where the protocol can (not there: nothing to
// cancel), then cancelled under VoidPrefix and its id.
func (c *Core) cancelVoided(ctx context.Context, op OperatorWallet, s Session, debit OperatorMove) (string, bool, error) {
	debit.Kind = Debit
	_, found, err := op.Lookup(ctx, debit)
	switch {
	case errors.Is(err, ErrNoLookup):
	case err != nil && unknown(err):
		return "", false, fmt.Errorf("look up debit %s: %w", debit.ID, err)
	case err == nil && !found:
		return OutcomeNeverApplied, true, nil
	}
	cancel := debit
	cancel.Kind, cancel.ID, cancel.Ref = Cancel, VoidPrefix+debit.ID, debit.ID
	_, err = op.Move(ctx, cancel)
	var r *OperatorRefusal
	switch {
	case err == nil:
		return OutcomeCancelled, true, nil
	case unknown(err):
		return "", false, err
	case errors.As(err, &r) && r.Verdict == UnknownTransaction:
		return OutcomeNeverApplied, true, nil
	case errors.As(err, &r) && r.Verdict == AlreadyRolledBack:
		return OutcomeCancelled, true, nil
	}
	return refusedOutcome(err), true, nil
}

func refusedOutcome(err error) string {
	var r *OperatorRefusal
	if errors.As(err, &r) {
		return "refused by the operator: " + r.Code
	}
	return "refused: " + err.Error()
}

// tx is the call's Tx and amount.
func (fc FollowUpCall) tx(cur domain.Currency) (Tx, domain.Money, error) {
	amount, err := domain.ParseMoney(fc.Amount, cur)
	if err != nil {
		return Tx{}, domain.Money{}, fmt.Errorf("follow-up amount %q: %w", fc.Amount, err)
	}
	t := Tx{ID: fc.Tx.ID, Game: fc.Tx.Game, Round: fc.Tx.Round, RoundClosed: fc.Tx.RoundClosed, Promo: fc.Tx.Promo,
		Campaign: fc.Tx.Campaign, Reward: fc.Tx.Reward}
	if fc.Tx.Jackpot != "" {
		if t.Jackpot, err = domain.ParseMoney(fc.Tx.Jackpot, cur); err != nil {
			return Tx{}, domain.Money{}, fmt.Errorf("follow-up jackpot %q: %w", fc.Tx.Jackpot, err)
		}
	}
	return t, amount, nil
}

// FollowUpRunner works the follow-up queue: every Interval it claims the
// due follow-ups and settles each, retrying a failed one after a backoff
// that doubles from MinBackoff to MaxBackoff.
type FollowUpRunner struct {
	Core                   *Core
	Queue                  FollowUpQueue
	Interval               time.Duration
	MinBackoff, MaxBackoff time.Duration
	Batch                  int
	// Lease is how long a claimed follow-up is another runner's to skip
	// (default a minute: longer than an attempt takes).
	Lease  time.Duration
	Logger *slog.Logger
}

// Run works the queue until ctx ends.
func (r FollowUpRunner) Run(ctx context.Context) error {
	tick := time.NewTicker(r.interval())
	defer tick.Stop()
	for {
		if _, err := r.Once(ctx); err != nil && ctx.Err() == nil {
			r.log().Warn("seamless follow-ups: a pass failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// Once makes one pass: the follow-ups settled, or the first error of the
// queue itself.
func (r FollowUpRunner) Once(ctx context.Context) (int, error) {
	now := r.Core.now()
	due, err := r.Queue.Claim(ctx, now, orDefault(r.Lease, time.Minute), r.batch())
	if err != nil {
		return 0, err
	}
	settled := 0
	for _, f := range due {
		outcome, done, err := r.Core.Settle(ctx, f)
		if done {
			settled++
			r.log().Info("seamless follow-up settled", "client_id", f.ClientID, "action", f.Action,
				"move_id", f.Call.MoveID, "outcome", outcome, "attempts", f.Attempts+1)
			if err := r.Queue.Finish(ctx, f.ID, outcome, r.Core.now()); err != nil {
				return settled, err
			}
			continue
		}
		next := r.Core.now().Add(r.backoff(f.Attempts + 1))
		if err := r.Queue.Retry(ctx, f.ID, next, err.Error()); err != nil {
			return settled, err
		}
	}
	return settled, nil
}

func (r FollowUpRunner) backoff(attempts int) time.Duration {
	d := r.minBackoff()
	for i := 1; i < attempts && d < r.maxBackoff(); i++ {
		d *= 2
	}
	return min(d, r.maxBackoff())
}

func (r FollowUpRunner) interval() time.Duration   { return orDefault(r.Interval, time.Second) }
func (r FollowUpRunner) minBackoff() time.Duration { return orDefault(r.MinBackoff, 2*time.Second) }
func (r FollowUpRunner) maxBackoff() time.Duration { return orDefault(r.MaxBackoff, 5*time.Minute) }

func (r FollowUpRunner) batch() int {
	if r.Batch > 0 {
		return r.Batch
	}
	return 100
}

func (r FollowUpRunner) log() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.Default()
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
