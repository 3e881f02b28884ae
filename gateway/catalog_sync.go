package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pitboss/pitboss/domain"
)

// Catalog sync (migration 00032, docs/providers-and-games.md#catalog-sync):
// `pitboss catalog sync` and the periodic job read a provider's own game
// list, where its protocol has one (Caleta's /api/game/list), and bring our
// games of that provider in line with it. A game is matched by the
// provider's code of it (games.provider_game_code, our id when empty); a
// listed game we lack is added as {provider}-{code}; a game we have gets
// the list's name, category, enabled flag and blocked countries; a game the
// list lacks is disabled. Nothing is ever deleted: deals, campaigns,
// reports and the ledger may name any game that ever existed.

// GameListKinds are the provider kinds whose protocol has a game list.
var GameListKinds = []string{ProviderKindCaleta}

// MaxGameName bounds a synced game's name, in characters.
const MaxGameName = 200

// ProviderGame is one game of a provider's own list, in our terms: the
// adapter of the provider's kind maps its fields (its category names to
// ours, for one).
type ProviderGame struct {
	// Code is the provider's code of the game (Caleta's game_code).
	Code     string
	Name     string
	Category string
	Enabled  bool
	// BlockedCountries are ISO 3166-1 alpha-2 codes as the provider lists
	// them; the plan keeps the valid ones, upper case, sorted, once each.
	BlockedCountries []string
}

// GameLister reads providers' game lists (adapters/providers.Registry).
type GameLister interface {
	// ProviderGames returns the provider's game list. A kind without one
	// is a *NoGameListError; an unreachable provider a
	// *ProviderUnavailableError, a refusal a *ProviderRejectedError.
	ProviderGames(ctx context.Context, route ProviderRoute) ([]ProviderGame, error)
}

// NoGameListError is a sync of a provider whose protocol has no game list.
type NoGameListError struct {
	Provider string
	Kind     string
}

func (e *NoGameListError) Error() string {
	return fmt.Sprintf("provider %s cannot be synced: its kind %s has no game list (kinds with one: %s); set its games with `pitboss game set`",
		e.Provider, e.Kind, strings.Join(GameListKinds, ", "))
}

// ErrEmptyGameList: the provider listed no game while we have enabled
// games of it. A sync would disable them all; an empty answer is far more
// likely a fault at the provider than a catalog withdrawn overnight, so the
// sync refuses and changes nothing.
var ErrEmptyGameList = errors.New("the provider's game list is empty")

// CatalogGame is a stored game as a sync sees it.
type CatalogGame struct {
	Game
	// SyncDisabled is true when a sync disabled the game: only such a
	// game is enabled again by a later sync. A game an operator disabled
	// stays disabled.
	SyncDisabled bool
}

// CatalogSnapshot is what a sync plans from.
type CatalogSnapshot struct {
	// Games are the provider's games (Code filled in: our id when the
	// game has no code of its own).
	Games []CatalogGame
	// TakenIDs are ids of other providers' games that a new game of this
	// provider could be given ({provider}-...): such a game is skipped.
	TakenIDs []string
}

// FieldChange is one field a sync changes, its values as text.
type FieldChange struct {
	Field string
	From  string
	To    string
}

// GameChange is one game a sync adds, updates or disables.
type GameChange struct {
	// Game is the game as the sync leaves it.
	Game Game
	// SyncDisabled is the game's SyncDisabled as the sync leaves it.
	SyncDisabled bool
	// Changes are the fields that change (none for an added game).
	Changes []FieldChange
	// Reason says why a game is disabled.
	Reason string
}

// SkippedGame is a listed game the sync cannot take, and why.
type SkippedGame struct {
	Code   string
	Reason string
}

// Reasons a sync disables a game.
const (
	DisabledMissing    = "missing from the provider's list"
	DisabledByProvider = "disabled in the provider's list"
)

// CatalogSyncPlan is what a sync changes (or, dry, would change).
type CatalogSyncPlan struct {
	Provider string
	// Listed is how many games the provider's list holds.
	Listed   int
	Added    []GameChange
	Updated  []GameChange
	Disabled []GameChange
	// Unchanged counts our games of the provider the sync leaves as they
	// are (listed and equal, or unlisted and already disabled).
	Unchanged int
	// KeptDisabled are games the list has enabled that an operator
	// disabled: the sync leaves them disabled.
	KeptDisabled []string
	Skipped      []SkippedGame
}

// Changed reports whether the plan writes anything.
func (p CatalogSyncPlan) Changed() bool {
	return len(p.Added)+len(p.Updated)+len(p.Disabled) > 0
}

// PlanCatalogSync compares the provider's list with our games of it. It is
// pure: the dry run and the sync plan the same way.
func PlanCatalogSync(provider string, snap CatalogSnapshot, list []ProviderGame) CatalogSyncPlan {
	plan := CatalogSyncPlan{Provider: provider, Listed: len(list)}
	byCode := make(map[string][]int, len(snap.Games))
	ids := make(map[string]bool, len(snap.Games)+len(snap.TakenIDs))
	for i, g := range snap.Games {
		byCode[g.Code] = append(byCode[g.Code], i)
		ids[g.ID] = true
	}
	for _, id := range snap.TakenIDs {
		ids[id] = true
	}
	matched := make([]bool, len(snap.Games))
	seen := make(map[string]bool, len(list))
	for _, pg := range list {
		code := strings.TrimSpace(pg.Code)
		if err := domain.ValidateID("game_code", code); err != nil {
			plan.Skipped = append(plan.Skipped, SkippedGame{Code: ClipValue(code),
				Reason: fmt.Sprintf("the game code is not 1..%d characters of A-Z a-z 0-9 . _ - @", domain.MaxIDLength)})
			continue
		}
		if seen[code] {
			plan.Skipped = append(plan.Skipped, SkippedGame{Code: code, Reason: "listed more than once; the first entry is used"})
			continue
		}
		seen[code] = true
		have := byCode[code]
		for _, i := range have {
			matched[i] = true // listed: never disabled as missing, even when skipped below
		}
		if len(have) > 1 {
			names := make([]string, len(have))
			for j, i := range have {
				names[j] = snap.Games[i].ID
			}
			plan.Skipped = append(plan.Skipped, SkippedGame{Code: code,
				Reason: "our games " + strings.Join(names, ", ") + " share this code; give each its own with `pitboss game set`"})
			continue
		}
		listed, refusal := listedGame(provider, code, pg)
		if refusal != "" {
			plan.Skipped = append(plan.Skipped, SkippedGame{Code: code, Reason: refusal})
			continue
		}
		if len(have) == 0 {
			switch id := listed.ID; {
			case len(id) > domain.MaxIDLength:
				plan.Skipped = append(plan.Skipped, SkippedGame{Code: code,
					Reason: fmt.Sprintf("its id %s… would be longer than %d characters", id[:40], domain.MaxIDLength)})
			case ids[id]:
				plan.Skipped = append(plan.Skipped, SkippedGame{Code: code,
					Reason: "its id " + id + " is another game's; give that game its code with `pitboss game set --provider-code`"})
			default:
				ids[id] = true
				plan.Added = append(plan.Added, GameChange{Game: listed, SyncDisabled: !pg.Enabled})
			}
			continue
		}
		old := snap.Games[have[0]]
		next := GameChange{Game: old.Game, SyncDisabled: old.SyncDisabled}
		next.Game.Name, next.Game.Category, next.Game.BlockedCountries = listed.Name, listed.Category, listed.BlockedCountries
		switch {
		case !pg.Enabled && old.Enabled:
			next.Game.Enabled, next.SyncDisabled, next.Reason = false, true, DisabledByProvider
		case pg.Enabled && !old.Enabled && old.SyncDisabled:
			next.Game.Enabled, next.SyncDisabled = true, false
		case pg.Enabled && !old.Enabled:
			plan.KeptDisabled = append(plan.KeptDisabled, old.ID)
		}
		next.Changes = gameChanges(old.Game, next.Game)
		switch {
		case len(next.Changes) == 0:
			plan.Unchanged++
		case next.Reason != "":
			plan.Disabled = append(plan.Disabled, next)
		default:
			plan.Updated = append(plan.Updated, next)
		}
	}
	for i, old := range snap.Games {
		if matched[i] {
			continue
		}
		if !old.Enabled {
			plan.Unchanged++
			continue
		}
		next := GameChange{Game: old.Game, SyncDisabled: true, Reason: DisabledMissing}
		next.Game.Enabled = false
		next.Changes = gameChanges(old.Game, next.Game)
		plan.Disabled = append(plan.Disabled, next)
	}
	return plan
}

// listedGame is a listed game as a sync would add it (our id
// {provider}-{code}), or why it cannot be taken.
func listedGame(provider, code string, pg ProviderGame) (Game, string) {
	name := strings.TrimSpace(pg.Name)
	if name == "" || utf8.RuneCountInString(name) > MaxGameName || !utf8.ValidString(name) ||
		strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return Game{}, fmt.Sprintf("the name is empty, longer than %d characters or holds control characters", MaxGameName)
	}
	category := strings.TrimSpace(pg.Category)
	if category == "" {
		category = "other"
	}
	return Game{ID: provider + "-" + code, ProviderID: provider, Name: name, Category: category, Enabled: pg.Enabled,
		Code: code, BlockedCountries: NormalizeCountries(pg.BlockedCountries)}, ""
}

// gameChanges lists the synced fields that differ between a and b.
func gameChanges(a, b Game) []FieldChange {
	var out []FieldChange
	add := func(field, from, to string) {
		if from != to {
			out = append(out, FieldChange{Field: field, From: from, To: to})
		}
	}
	add("name", a.Name, b.Name)
	add("category", a.Category, b.Category)
	add("enabled", strconv.FormatBool(a.Enabled), strconv.FormatBool(b.Enabled))
	add("blocked_countries", strings.Join(a.BlockedCountries, ","), strings.Join(b.BlockedCountries, ","))
	return out
}

// NormalizeCountries keeps the ISO 3166-1 alpha-2 codes of list, in upper
// case, sorted, each once; anything else is dropped (no player's country
// can match it: a launch's country is validated).
func NormalizeCountries(list []string) []string {
	out := make([]string, 0, len(list))
	for _, c := range list {
		c = strings.ToUpper(strings.TrimSpace(c))
		if IsCountry(c) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// BlockedIn reports whether the game may not be launched for a player of
// country (an ISO 3166-1 alpha-2 code; empty: never blocked).
func (g Game) BlockedIn(country string) bool {
	return country != "" && slices.Contains(g.BlockedCountries, country)
}

// CatalogSyncStore is the catalog a sync reads and writes
// (adapters/postgres/gatewaystore.Gateway).
type CatalogSyncStore interface {
	// Provider returns the provider with its launch secret, which signs
	// the game list call. An unknown id is domain.ErrNotFound.
	Provider(ctx context.Context, id string) (Provider, error)
	ProviderRoute(ctx context.Context, id string) (ProviderRoute, error)
	// CatalogSnapshot reads the provider's catalog (the dry run).
	CatalogSnapshot(ctx context.Context, providerID string) (CatalogSnapshot, error)
	// SyncCatalog reads the provider's catalog, holding it against other
	// syncs of the provider, and writes what plan makes of it, all in one
	// transaction. plan's error writes nothing.
	SyncCatalog(ctx context.Context, providerID string, plan func(CatalogSnapshot) (CatalogSyncPlan, error)) (CatalogSyncPlan, error)
}

// CatalogSyncer syncs providers' catalogs from their game lists.
type CatalogSyncer struct {
	Store  CatalogSyncStore
	Lister GameLister
}

// Sync reads the provider's game list and brings our games of it in line;
// dryRun plans the same and writes nothing. An unknown provider is
// domain.ErrNotFound, one whose kind has no list a *NoGameListError.
func (s CatalogSyncer) Sync(ctx context.Context, providerID string, dryRun bool) (CatalogSyncPlan, error) {
	prov, err := s.Store.Provider(ctx, providerID)
	if err != nil {
		return CatalogSyncPlan{}, err
	}
	route, err := s.Store.ProviderRoute(ctx, providerID)
	if err != nil {
		return CatalogSyncPlan{}, err
	}
	route.Secret, route.LaunchSecret = prov.Secret, prov.LaunchSecret
	list, err := s.Lister.ProviderGames(ctx, route)
	if err != nil {
		return CatalogSyncPlan{}, err
	}
	plan := func(snap CatalogSnapshot) (CatalogSyncPlan, error) {
		if len(list) == 0 && slices.ContainsFunc(snap.Games, func(g CatalogGame) bool { return g.Enabled }) {
			return CatalogSyncPlan{}, fmt.Errorf("provider %s: %w; refusing to disable all its games", providerID, ErrEmptyGameList)
		}
		return PlanCatalogSync(providerID, snap, list), nil
	}
	if dryRun {
		snap, err := s.Store.CatalogSnapshot(ctx, providerID)
		if err != nil {
			return CatalogSyncPlan{}, err
		}
		return plan(snap)
	}
	return s.Store.SyncCatalog(ctx, providerID, plan)
}
