package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/pitboss/pitboss/adapters/providers"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// `pitboss catalog sync`: a provider's games from its own game list
// (docs/providers-and-games.md#catalog-sync). Straight on the database, as
// `pitboss game set` is; the call to the provider goes through the same
// provider registry as launches (endpoints in order, breakers, timeout).

const catalogUsage = `usage:
  pitboss catalog sync --provider ID [--dry-run] [--json]
  reads the provider's game list (caleta: POST /api/game/list, signed with
  its launch key) and brings our games of it in line: listed games we lack
  are added as {provider}-{game_code}; name, category, enabled and blocked
  countries of the others follow the list; a game the list lacks or
  disables is disabled, never deleted; a game an operator disabled stays
  disabled. Prints what was added, updated (which fields), disabled, left
  unchanged and skipped. --dry-run prints the same and writes nothing.
  A provider whose kind has no game list is refused (exit 1).
`

// catalogSyncReport is the report `pitboss catalog sync --json` prints.
type catalogSyncReport struct {
	Provider     string              `json:"provider"`
	DryRun       bool                `json:"dry_run"`
	Listed       int                 `json:"listed"`
	Counts       catalogSyncCounts   `json:"counts"`
	Added        []cliSyncedGame     `json:"added"`
	Updated      []cliGameChange     `json:"updated"`
	Disabled     []cliGameChange     `json:"disabled"`
	KeptDisabled []string            `json:"kept_disabled"`
	Skipped      []cliSkippedListing `json:"skipped"`
}

type catalogSyncCounts struct {
	Added        int `json:"added"`
	Updated      int `json:"updated"`
	Disabled     int `json:"disabled"`
	Unchanged    int `json:"unchanged"`
	KeptDisabled int `json:"kept_disabled"`
	Skipped      int `json:"skipped"`
}

type cliSyncedGame struct {
	cliGame
	BlockedCountries []string `json:"blocked_countries"`
}

type cliGameChange struct {
	ID           string           `json:"id"`
	ProviderCode string           `json:"provider_code"`
	Reason       string           `json:"reason,omitempty"`
	Changes      []cliFieldChange `json:"changes"`
}

type cliFieldChange struct {
	Field string `json:"field"`
	From  string `json:"from"`
	To    string `json:"to"`
}

type cliSkippedListing struct {
	ProviderCode string `json:"provider_code"`
	Reason       string `json:"reason"`
}

func reportOf(p gateway.CatalogSyncPlan, dryRun bool) catalogSyncReport {
	r := catalogSyncReport{Provider: p.Provider, DryRun: dryRun, Listed: p.Listed,
		Counts: catalogSyncCounts{Added: len(p.Added), Updated: len(p.Updated), Disabled: len(p.Disabled),
			Unchanged: p.Unchanged, KeptDisabled: len(p.KeptDisabled), Skipped: len(p.Skipped)},
		Added: []cliSyncedGame{}, Updated: []cliGameChange{}, Disabled: []cliGameChange{},
		KeptDisabled: append([]string{}, p.KeptDisabled...), Skipped: []cliSkippedListing{}}
	for _, c := range p.Added {
		g := c.Game
		r.Added = append(r.Added, cliSyncedGame{cliGame: cliGame{ID: g.ID, Provider: g.ProviderID, Name: g.Name,
			Category: g.Category, ProviderCode: g.Code, Enabled: g.Enabled}, BlockedCountries: append([]string{}, g.BlockedCountries...)})
	}
	change := func(c gateway.GameChange) cliGameChange {
		v := cliGameChange{ID: c.Game.ID, ProviderCode: c.Game.Code, Reason: c.Reason, Changes: []cliFieldChange{}}
		for _, f := range c.Changes {
			v.Changes = append(v.Changes, cliFieldChange(f))
		}
		return v
	}
	for _, c := range p.Updated {
		r.Updated = append(r.Updated, change(c))
	}
	for _, c := range p.Disabled {
		r.Disabled = append(r.Disabled, change(c))
	}
	for _, s := range p.Skipped {
		r.Skipped = append(r.Skipped, cliSkippedListing{ProviderCode: s.Code, Reason: s.Reason})
	}
	return r
}

// printCatalogSync writes the report for people: a summary line, then one
// line per game added, updated, disabled, kept disabled or skipped.
func printCatalogSync(out io.Writer, r catalogSyncReport) {
	mode := "synced"
	if r.DryRun {
		mode = "dry run, nothing written"
	}
	fmt.Fprintf(out, "catalog of provider %s (%s): %d listed; %d added, %d updated, %d disabled, %d unchanged, %d kept disabled, %d skipped\n",
		r.Provider, mode, r.Listed, r.Counts.Added, r.Counts.Updated, r.Counts.Disabled, r.Counts.Unchanged,
		r.Counts.KeptDisabled, r.Counts.Skipped)
	for _, g := range r.Added {
		state := ""
		if !g.Enabled {
			state = ", disabled"
		}
		blocked := ""
		if len(g.BlockedCountries) > 0 {
			blocked = ", blocked in " + strings.Join(g.BlockedCountries, ",")
		}
		fmt.Fprintf(out, "  added     %s  %q (%s), provider code %s%s%s\n", g.ID, g.Name, g.Category, g.ProviderCode, state, blocked)
	}
	changes := func(c cliGameChange) string {
		parts := make([]string, len(c.Changes))
		for i, f := range c.Changes {
			parts[i] = fmt.Sprintf("%s %q -> %q", f.Field, f.From, f.To)
		}
		return strings.Join(parts, "; ")
	}
	for _, c := range r.Updated {
		fmt.Fprintf(out, "  updated   %s  %s\n", c.ID, changes(c))
	}
	for _, c := range r.Disabled {
		fmt.Fprintf(out, "  disabled  %s  %s: %s\n", c.ID, c.Reason, changes(c))
	}
	for _, id := range r.KeptDisabled {
		fmt.Fprintf(out, "  kept disabled  %s  listed enabled, but an operator disabled it (pitboss game set enables it)\n", id)
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(out, "  skipped   %q  %s\n", s.ProviderCode, s.Reason)
	}
}

// catalogCommand is `pitboss catalog`.
func catalogCommand(ctx context.Context, cfg config, args []string, out io.Writer) error {
	fs, err := subcommandFlags("catalog", catalogUsage, args, out)
	if err != nil {
		return err
	}
	asJSON := fs.Bool("json", false, "print JSON")
	provider := fs.String("provider", "", "the provider's id")
	dryRun := fs.Bool("dry-run", false, "print what the sync would change and write nothing")
	if err := parseFlags(fs, args[1:], out, out); err != nil {
		return err
	}
	if args[0] != "sync" {
		fmt.Fprint(out, catalogUsage)
		return &exitError{exitUsage, fmt.Errorf("catalog: unknown subcommand %q", args[0])}
	}
	if err := domain.ValidateID("--provider", *provider); err != nil {
		return &exitError{exitUsage, err}
	}
	pool, gw, err := sealingAdminStores(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	reg, err := providers.NewRegistryWithConfig(providers.Config{PublicURL: cfg.PublicURL, Logger: cfg.logger()})
	if err != nil {
		return err
	}
	plan, err := gateway.CatalogSyncer{Store: gw, Lister: reg}.Sync(ctx, *provider, *dryRun)
	if err != nil {
		return catalogSyncError(*provider, err)
	}
	r := reportOf(plan, *dryRun)
	if *asJSON {
		return writeJSON(out, r)
	}
	printCatalogSync(out, r)
	return nil
}

// catalogSyncError says why a sync changed nothing, in an operator's
// terms.
func catalogSyncError(provider string, err error) error {
	var (
		unavailable *gateway.ProviderUnavailableError
		rejected    *gateway.ProviderRejectedError
	)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return fmt.Errorf("no provider %q (add it with `pitboss provider add`)", provider)
	case errors.As(err, &unavailable) && unavailable.Reason != "":
		return fmt.Errorf("provider %s is not configured for calls (%s): see `pitboss provider set --launch-*`; nothing changed",
			provider, unavailable.Reason)
	case errors.As(err, &unavailable):
		reasons := make([]string, len(unavailable.Endpoints))
		for i, f := range unavailable.Endpoints {
			reasons[i] = fmt.Sprintf("endpoint %d: %s", f.Endpoint, f.Reason)
		}
		return fmt.Errorf("provider %s is unavailable: no endpoint served its game list (%s); nothing changed",
			provider, strings.Join(reasons, ", "))
	case errors.As(err, &rejected):
		return fmt.Errorf("provider %s refused the game list call (HTTP %d): %s; nothing changed", provider, rejected.Status,
			rejected.Message)
	}
	return fmt.Errorf("%w; nothing changed", err)
}
