// Package roundclose is the stale-round job of `pitboss serve` (the api
// role, beside the ledger writer): every Interval it finds the rounds open
// past their provider's limit (gateway.RoundAutoCloseAges: Caleta's 48
// hours) and closes each through the commands layer
// (commands.Handler.CloseRound), one wallet.round_closed.v1 per round. The
// store's advisory lock lets one instance of the cluster work at a time;
// the ledger's idempotency closes a round once even if two did.
package roundclose

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
)

// DefaultInterval is how often the job looks for stale rounds.
const DefaultInterval = time.Minute

// DefaultBatch is how many rounds one query of the job fetches.
const DefaultBatch = 100

// Store finds the stale rounds (adapters/postgres/eventstore.Rounds).
type Store interface {
	// Exclusive runs fn holding the job's cluster-wide lock, or returns
	// false when another instance holds it.
	Exclusive(ctx context.Context, fn func(context.Context) error) (bool, error)
	StaleRounds(ctx context.Context, ages map[string]time.Duration, now time.Time, limit int) ([]commands.StaleRound, error)
}

// Closer closes a round through the ledger (commands.Handler).
type Closer interface {
	CloseRound(ctx context.Context, s commands.StaleRound) (commands.Result, error)
}

// Config configures a Job.
type Config struct {
	// Ages is the limit per wallet protocol (gateway.RoundAutoCloseAges).
	Ages     map[string]time.Duration
	Interval time.Duration // default DefaultInterval
	Batch    int           // default DefaultBatch
	Now      func() time.Time
	Logger   *slog.Logger
}

// Job closes stale rounds.
type Job struct {
	store  Store
	closer Closer
	cfg    Config
}

// New returns the job.
func New(store Store, closer Closer, cfg Config) (*Job, error) {
	if store == nil || closer == nil {
		return nil, errors.New("round close job: no store or closer")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Job{store: store, closer: closer, cfg: cfg}, nil
}

// Result is what one tick did.
type Result struct {
	Ran    bool // false: another instance holds the lock
	Closed int  // rounds this tick closed
}

// Tick closes every round stale now. A round a call closed meanwhile (or
// another instance) is skipped, and so is one whose close the ledger
// refuses (logged); any other failure stops the tick, to be tried again at
// the next.
func (j *Job) Tick(ctx context.Context) (Result, error) {
	var res Result
	ran, err := j.store.Exclusive(ctx, func(ctx context.Context) error {
		now := j.cfg.Now()
		for {
			rounds, err := j.store.StaleRounds(ctx, j.cfg.Ages, now, j.cfg.Batch)
			if err != nil {
				return err
			}
			skipped := 0
			for _, r := range rounds {
				out, err := j.closer.CloseRound(ctx, r)
				switch {
				case errors.Is(err, domain.ErrRoundNotOpen), errors.Is(err, domain.ErrRoundNotStale):
					skipped++
					continue
				case refused(err):
					// The ledger will refuse it again: it must not hold
					// back the rounds behind it, tick after tick.
					skipped++
					j.cfg.Logger.Warn("stale round not closed: the ledger refuses its close", "client_id", r.Client,
						"provider", r.Provider, "round_id", r.Round, "err", err)
					continue
				case err != nil:
					return fmt.Errorf("close round %s of %s (client %s): %w", r.Round, r.Provider, r.Client, err)
				}
				if !out.Replayed {
					res.Closed++
					j.cfg.Logger.Info("stale round closed", "client_id", r.Client, "provider", r.Provider,
						"round_id", r.Round, "after", r.After, "event_id", out.EventID)
				}
			}
			// A full batch of rounds that all closed: there may be more. A
			// batch with skips (a round that will be found again) ends the
			// tick, so a round that cannot close does not spin it.
			if len(rounds) < j.cfg.Batch || skipped > 0 {
				return nil
			}
		}
	})
	res.Ran = ran
	return res, err
}

// refused reports whether err is the ledger's refusal of the close (an id
// it cannot hold, the close's id already used by another transaction):
// retrying will not change it. Anything else (the database, the writer) is
// worth trying again at the next tick.
func refused(err error) bool {
	var conflict *domain.IdempotencyConflictError
	return errors.Is(err, domain.ErrInvalidArgument) || errors.Is(err, domain.ErrDuplicateTransaction) ||
		errors.Is(err, domain.ErrUnknownCurrency) || errors.As(err, &conflict)
}

// Run ticks every Interval until ctx ends. A failed tick is logged and
// tried again at the next.
func (j *Job) Run(ctx context.Context) error {
	t := time.NewTicker(j.cfg.Interval)
	defer t.Stop()
	for {
		if _, err := j.Tick(ctx); err != nil && ctx.Err() == nil {
			j.cfg.Logger.Warn("stale rounds: the tick failed; retrying at the next", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
