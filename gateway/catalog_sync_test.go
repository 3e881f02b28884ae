package gateway_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// stored is a game of provider "cal" as the catalog holds it.
func stored(id, code, name, category string, enabled, syncDisabled bool, blocked ...string) gateway.CatalogGame {
	return gateway.CatalogGame{Game: gateway.Game{ID: id, ProviderID: "cal", Name: name, Category: category, Enabled: enabled,
		Code: code, BlockedCountries: blocked}, SyncDisabled: syncDisabled}
}

func listed(code, name, category string, enabled bool, blocked ...string) gateway.ProviderGame {
	return gateway.ProviderGame{Code: code, Name: name, Category: category, Enabled: enabled, BlockedCountries: blocked}
}

// summary is a plan in one comparable line per kind of change.
type summary struct {
	added, updated, disabled, kept, skipped []string
	unchanged                               int
}

func summarize(p gateway.CatalogSyncPlan) summary {
	var s summary
	change := func(c gateway.GameChange) string {
		parts := []string{c.Game.ID}
		for _, f := range c.Changes {
			parts = append(parts, f.Field+":"+f.From+">"+f.To)
		}
		if c.Reason != "" {
			parts = append(parts, "("+c.Reason+")")
		}
		return strings.Join(parts, " ")
	}
	for _, c := range p.Added {
		s.added = append(s.added, c.Game.ID+" "+c.Game.Name+" "+c.Game.Category+" "+c.Game.Code+" "+
			map[bool]string{true: "on", false: "off"}[c.Game.Enabled]+" "+strings.Join(c.Game.BlockedCountries, ","))
	}
	for _, c := range p.Updated {
		s.updated = append(s.updated, change(c))
	}
	for _, c := range p.Disabled {
		s.disabled = append(s.disabled, change(c))
	}
	s.kept = p.KeptDisabled
	for _, k := range p.Skipped {
		s.skipped = append(s.skipped, k.Code)
	}
	s.unchanged = p.Unchanged
	return s
}

// TestPlanCatalogSync: what a provider's list does to our games of it —
// add, update each synced field, disable what left the list or the list
// disabled, enable again only what a sync disabled, never delete.
func TestPlanCatalogSync(t *testing.T) {
	t.Parallel()
	slot := stored("cal-slot", "slot", "Slot", "slots", true, false, "BG", "PL")
	for _, tc := range []struct {
		name string
		have []gateway.CatalogGame
		list []gateway.ProviderGame
		want summary
	}{
		{name: "a new game is added as {provider}-{code}, its countries normalized",
			list: []gateway.ProviderGame{listed("cg_torch", " Torch of Fire ", "slots", true, "pl", "BG", "PL", "bad", "")},
			want: summary{added: []string{"cal-cg_torch Torch of Fire slots cg_torch on BG,PL"}}},
		{name: "a new game the list disables is added disabled",
			list: []gateway.ProviderGame{listed("cg_off", "Off", "table", false)},
			want: summary{added: []string{"cal-cg_off Off table cg_off off "}}},
		{name: "an equal game is unchanged",
			have: []gateway.CatalogGame{slot},
			list: []gateway.ProviderGame{listed("slot", "Slot", "slots", true, "PL", "BG")},
			want: summary{unchanged: 1}},
		{name: "name",
			have: []gateway.CatalogGame{slot},
			list: []gateway.ProviderGame{listed("slot", "Slot Deluxe", "slots", true, "BG", "PL")},
			want: summary{updated: []string{"cal-slot name:Slot>Slot Deluxe"}}},
		{name: "category",
			have: []gateway.CatalogGame{slot},
			list: []gateway.ProviderGame{listed("slot", "Slot", "jackpot", true, "BG", "PL")},
			want: summary{updated: []string{"cal-slot category:slots>jackpot"}}},
		{name: "blocked countries",
			have: []gateway.CatalogGame{slot},
			list: []gateway.ProviderGame{listed("slot", "Slot", "slots", true, "BR")},
			want: summary{updated: []string{"cal-slot blocked_countries:BG,PL>BR"}}},
		{name: "blocked countries cleared",
			have: []gateway.CatalogGame{slot},
			list: []gateway.ProviderGame{listed("slot", "Slot", "slots", true)},
			want: summary{updated: []string{"cal-slot blocked_countries:BG,PL>"}}},
		{name: "the list disables a game: disabled, with its other changes",
			have: []gateway.CatalogGame{slot},
			list: []gateway.ProviderGame{listed("slot", "Slot 2", "slots", false, "BG", "PL")},
			want: summary{disabled: []string{"cal-slot name:Slot>Slot 2 enabled:true>false (" + gateway.DisabledByProvider + ")"}}},
		{name: "a game missing from the list is disabled, not deleted",
			have: []gateway.CatalogGame{slot, stored("cal-gone", "gone", "Gone", "slots", true, false)},
			list: []gateway.ProviderGame{listed("slot", "Slot", "slots", true, "BG", "PL")},
			want: summary{unchanged: 1, disabled: []string{"cal-gone enabled:true>false (" + gateway.DisabledMissing + ")"}}},
		{name: "a missing game already disabled is unchanged",
			have: []gateway.CatalogGame{slot, stored("cal-gone", "gone", "Gone", "slots", false, true)},
			list: []gateway.ProviderGame{listed("slot", "Slot", "slots", true, "BG", "PL")},
			want: summary{unchanged: 2}},
		{name: "a game the sync disabled is enabled again when listed enabled",
			have: []gateway.CatalogGame{stored("cal-back", "back", "Back", "slots", false, true)},
			list: []gateway.ProviderGame{listed("back", "Back", "slots", true)},
			want: summary{updated: []string{"cal-back enabled:false>true"}}},
		{name: "a game an operator disabled stays disabled, its other fields synced",
			have: []gateway.CatalogGame{stored("cal-pulled", "pulled", "Pulled", "slots", false, false)},
			list: []gateway.ProviderGame{listed("pulled", "Pulled II", "slots", true)},
			want: summary{updated: []string{"cal-pulled name:Pulled>Pulled II"}, kept: []string{"cal-pulled"}}},
		{name: "a game set by hand is matched by its provider code, whatever its id",
			have: []gateway.CatalogGame{stored("lucky", "lucky_96", "Lucky", "slots", true, false)},
			list: []gateway.ProviderGame{listed("lucky_96", "Lucky 96", "slots", true)},
			want: summary{updated: []string{"lucky name:Lucky>Lucky 96"}}},
		{name: "an empty category is other",
			list: []gateway.ProviderGame{listed("x", "X", "", true)},
			want: summary{added: []string{"cal-x X other x on "}}},
		{name: "bad entries are skipped; a listed game that is skipped is not disabled as missing",
			have: []gateway.CatalogGame{slot},
			list: []gateway.ProviderGame{listed("bad code", "A", "slots", true), listed("", "B", "slots", true),
				listed("slot", "", "slots", true), listed("ok", "Ok", "slots", true), listed("ok", "Ok again", "slots", true),
				listed("ctl", "Bad\x01name", "slots", true), listed(strings.Repeat("c", 125), "Long", "slots", true)},
			want: summary{added: []string{"cal-ok Ok slots ok on "},
				skipped: []string{"bad code", "", "slot", "ok", "ctl", strings.Repeat("c", 125)}}},
		{name: "a new game whose id another game holds is skipped",
			have: []gateway.CatalogGame{stored("cal-dup", "other_code", "Other", "slots", true, false)},
			list: []gateway.ProviderGame{listed("dup", "Dup", "slots", true), listed("other_code", "Other", "slots", true),
				listed("theirs", "Theirs", "slots", true)},
			want: summary{unchanged: 1, skipped: []string{"dup", "theirs"}}},
		{name: "two of our games sharing a listed code are left alone",
			have: []gateway.CatalogGame{stored("a", "same", "A", "slots", true, false), stored("b", "same", "B", "slots", true, false)},
			list: []gateway.ProviderGame{listed("same", "Same", "slots", true)},
			want: summary{skipped: []string{"same"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			plan := gateway.PlanCatalogSync("cal", gateway.CatalogSnapshot{Games: tc.have, TakenIDs: []string{"cal-theirs"}}, tc.list)
			if got := summarize(plan); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("plan\n got %+v\nwant %+v", got, tc.want)
			}
			if plan.Listed != len(tc.list) || plan.Provider != "cal" {
				t.Fatalf("listed %d of %s", plan.Listed, plan.Provider)
			}
			// Never a delete: every game we have is accounted for as
			// unchanged, updated, disabled or skipped (left as it is).
			accounted := plan.Unchanged + len(plan.Updated) + len(plan.Disabled)
			for _, k := range plan.Skipped {
				for _, g := range tc.have {
					if g.Code == k.Code {
						accounted++
					}
				}
			}
			if accounted != len(tc.have) {
				t.Fatalf("%d of our %d games accounted for: %+v", accounted, len(tc.have), plan)
			}
		})
	}
}

// TestPlanCatalogSyncStates: the SyncDisabled a change leaves, which
// decides whether a later sync may enable the game again.
func TestPlanCatalogSyncStates(t *testing.T) {
	t.Parallel()
	have := []gateway.CatalogGame{stored("cal-a", "a", "A", "slots", true, false), stored("cal-b", "b", "B", "slots", true, false),
		stored("cal-c", "c", "C", "slots", false, true)}
	plan := gateway.PlanCatalogSync("cal", gateway.CatalogSnapshot{Games: have},
		[]gateway.ProviderGame{listed("b", "B", "slots", false), listed("c", "C", "slots", true), listed("n", "N", "slots", false)})
	got := map[string]bool{}
	for _, c := range append(append(plan.Added, plan.Updated...), plan.Disabled...) {
		got[c.Game.ID] = c.SyncDisabled
	}
	want := map[string]bool{"cal-a": true, "cal-b": true, "cal-c": false, "cal-n": true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("sync_disabled %v, want %v", got, want)
	}
}

func TestNormalizeCountriesAndBlockedIn(t *testing.T) {
	t.Parallel()
	if got := gateway.NormalizeCountries([]string{"pl", " BG", "PL", "XXX", "b1", ""}); !reflect.DeepEqual(got, []string{"BG", "PL"}) {
		t.Fatalf("normalized %q", got)
	}
	g := gateway.Game{BlockedCountries: []string{"BG", "PL"}}
	for country, want := range map[string]bool{"PL": true, "BG": true, "BR": false, "": false, "pl": false} {
		if g.BlockedIn(country) != want {
			t.Errorf("BlockedIn(%q) = %v", country, !want)
		}
	}
}

// fakeSyncStore records which of its catalog reads a sync used.
type fakeSyncStore struct {
	prov     gateway.Provider
	route    gateway.ProviderRoute
	snap     gateway.CatalogSnapshot
	snapshot int
	synced   int
	wrote    *gateway.CatalogSyncPlan
}

func (f *fakeSyncStore) Provider(_ context.Context, id string) (gateway.Provider, error) {
	if id != f.prov.ID {
		return gateway.Provider{}, domain.ErrNotFound
	}
	return f.prov, nil
}

func (f *fakeSyncStore) ProviderRoute(context.Context, string) (gateway.ProviderRoute, error) {
	return f.route, nil
}

func (f *fakeSyncStore) CatalogSnapshot(context.Context, string) (gateway.CatalogSnapshot, error) {
	f.snapshot++
	return f.snap, nil
}

func (f *fakeSyncStore) SyncCatalog(_ context.Context, _ string, plan func(gateway.CatalogSnapshot) (gateway.CatalogSyncPlan, error)) (gateway.CatalogSyncPlan, error) {
	f.synced++
	p, err := plan(f.snap)
	if err == nil {
		f.wrote = &p
	}
	return p, err
}

type fakeLister struct {
	games []gateway.ProviderGame
	route gateway.ProviderRoute
}

func (f *fakeLister) ProviderGames(_ context.Context, route gateway.ProviderRoute) ([]gateway.ProviderGame, error) {
	f.route = route
	if route.Kind != gateway.ProviderKindCaleta {
		return nil, &gateway.NoGameListError{Provider: route.ProviderID, Kind: route.Kind}
	}
	return f.games, nil
}

// TestCatalogSyncer: the dry run plans from a plain read and writes
// nothing; the sync plans inside the store's write; the game list call
// gets the provider's launch secret; an empty list does not disable every
// game; a kind without a list is said plainly.
func TestCatalogSyncer(t *testing.T) {
	t.Parallel()
	newStore := func() *fakeSyncStore {
		return &fakeSyncStore{prov: gateway.Provider{ID: "cal", LaunchSecret: "PEM"},
			route: gateway.ProviderRoute{ProviderID: "cal", Kind: gateway.ProviderKindCaleta},
			snap:  gateway.CatalogSnapshot{Games: []gateway.CatalogGame{stored("cal-a", "a", "A", "slots", true, false)}}}
	}
	lister := &fakeLister{games: []gateway.ProviderGame{listed("b", "B", "slots", true)}}

	store := newStore()
	dry, err := gateway.CatalogSyncer{Store: store, Lister: lister}.Sync(t.Context(), "cal", true)
	if err != nil || len(dry.Added) != 1 || len(dry.Disabled) != 1 || store.snapshot != 1 || store.synced != 0 || store.wrote != nil {
		t.Fatalf("dry run %+v, %v; reads %d, syncs %d", dry, err, store.snapshot, store.synced)
	}
	if lister.route.LaunchSecret != "PEM" {
		t.Fatal("the game list call did not get the launch secret")
	}
	real, err := gateway.CatalogSyncer{Store: store, Lister: lister}.Sync(t.Context(), "cal", false)
	if err != nil || store.synced != 1 || store.wrote == nil || !reflect.DeepEqual(real, dry) {
		t.Fatalf("sync %+v, %v; want the dry run's plan %+v", real, err, dry)
	}

	store = newStore()
	_, err = gateway.CatalogSyncer{Store: store, Lister: &fakeLister{}}.Sync(t.Context(), "cal", false)
	if !errors.Is(err, gateway.ErrEmptyGameList) || store.wrote != nil {
		t.Fatalf("an empty list: %v, wrote %v", err, store.wrote)
	}
	store.snap.Games = nil // nothing to lose: an empty list is an empty catalog
	if p, err := (gateway.CatalogSyncer{Store: store, Lister: &fakeLister{}}).Sync(t.Context(), "cal", false); err != nil || p.Changed() {
		t.Fatalf("an empty list of an empty catalog: %+v, %v", p, err)
	}

	store = newStore()
	store.route.Kind = gateway.ProviderKindJSON
	var none *gateway.NoGameListError
	if _, err := (gateway.CatalogSyncer{Store: store, Lister: lister}).Sync(t.Context(), "cal", false); !errors.As(err, &none) ||
		store.synced+store.snapshot != 0 || !strings.Contains(err.Error(), "no game list") {
		t.Fatalf("a json provider: %v", err)
	}
	if _, err := (gateway.CatalogSyncer{Store: store, Lister: lister}).Sync(t.Context(), "nobody", true); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("an unknown provider: %v", err)
	}
}
