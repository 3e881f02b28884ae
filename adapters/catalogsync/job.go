// Package catalogsync is the periodic catalog sync of `pitboss serve` (the
// api role, beside the provider registry whose endpoints and breakers it
// shares with launches): every Interval it syncs the catalog of each
// enabled provider whose kind has a game list (gateway.GameListKinds:
// caleta) from that list, as `pitboss catalog sync` does
// (docs/providers-and-games.md#catalog-sync). Off unless
// PITBOSS_CATALOG_SYNC_INTERVAL is set. The store's advisory lock lets one
// instance of the cluster work at a time; a provider that fails is logged
// and tried again at the next tick without holding back the others.
package catalogsync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"time"

	"github.com/pitboss/pitboss/gateway"
)

// MinInterval and MaxInterval bound Config.Interval: a catalog changes
// over days, and a provider's game list is no call to make every minute.
const (
	MinInterval = 5 * time.Minute
	MaxInterval = 7 * 24 * time.Hour
)

// Store lists the providers and holds the job's cluster-wide lock
// (adapters/postgres/gatewaystore.Gateway).
type Store interface {
	// ExclusiveCatalogSync runs fn holding the job's lock, or returns
	// false when another instance holds it.
	ExclusiveCatalogSync(ctx context.Context, fn func(context.Context) error) (bool, error)
	AllProviders(ctx context.Context) ([]gateway.Provider, error)
	ProviderRoute(ctx context.Context, id string) (gateway.ProviderRoute, error)
}

// Syncer syncs one provider's catalog (gateway.CatalogSyncer).
type Syncer interface {
	Sync(ctx context.Context, providerID string, dryRun bool) (gateway.CatalogSyncPlan, error)
}

// Config configures a Job.
type Config struct {
	// Interval is the time between two syncs, MinInterval..MaxInterval.
	Interval time.Duration
	Logger   *slog.Logger
}

// Validate reports every problem of the configuration.
func (c Config) Validate() error {
	if c.Interval < MinInterval || c.Interval > MaxInterval {
		return fmt.Errorf("catalog sync interval %s is outside %s..%s", c.Interval, MinInterval, MaxInterval)
	}
	return nil
}

// Job syncs the catalogs.
type Job struct {
	store  Store
	syncer Syncer
	cfg    Config
}

// NewWithConfig returns the job.
func NewWithConfig(store Store, syncer Syncer, cfg Config) (*Job, error) {
	if store == nil || syncer == nil {
		return nil, errors.New("catalog sync job: no store or syncer")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Job{store: store, syncer: syncer, cfg: cfg}, nil
}

// Result is what one tick did.
type Result struct {
	Ran bool // false: another instance holds the lock
	// Synced are the providers synced; Failed those whose sync failed.
	Synced, Failed []string
}

// Tick syncs every enabled provider with a game list once. One provider
// failing (unreachable, refusing, an empty list) is logged and does not
// stop the others; only failing to list the providers fails the tick.
func (j *Job) Tick(ctx context.Context) (Result, error) {
	var res Result
	ran, err := j.store.ExclusiveCatalogSync(ctx, func(ctx context.Context) error {
		provs, err := j.store.AllProviders(ctx)
		if err != nil {
			return err
		}
		for _, p := range provs {
			if !p.Enabled {
				continue
			}
			route, err := j.store.ProviderRoute(ctx, p.ID)
			if err != nil {
				return err
			}
			if !slices.Contains(gateway.GameListKinds, route.Kind) {
				continue
			}
			plan, err := j.syncer.Sync(ctx, p.ID, false)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				res.Failed = append(res.Failed, p.ID)
				j.cfg.Logger.Warn("catalog sync failed; nothing changed, tried again at the next tick",
					"provider", p.ID, "err", err)
				continue
			}
			res.Synced = append(res.Synced, p.ID)
			log := j.cfg.Logger.Debug
			if plan.Changed() || len(plan.Skipped) > 0 {
				log = j.cfg.Logger.Info
			}
			log("catalog synced", "provider", p.ID, "listed", plan.Listed, "added", len(plan.Added),
				"updated", len(plan.Updated), "disabled", len(plan.Disabled), "unchanged", plan.Unchanged,
				"kept_disabled", len(plan.KeptDisabled), "skipped", len(plan.Skipped))
		}
		return nil
	})
	res.Ran = ran
	return res, err
}

// Run ticks at once, then every Interval until ctx ends. A failed tick is
// logged and tried again at the next.
func (j *Job) Run(ctx context.Context) error {
	t := time.NewTicker(j.cfg.Interval)
	defer t.Stop()
	for {
		if _, err := j.Tick(ctx); err != nil && ctx.Err() == nil {
			j.cfg.Logger.Warn("catalog sync: the tick failed; retrying at the next", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
