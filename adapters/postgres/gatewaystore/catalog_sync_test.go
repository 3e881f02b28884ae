package gatewaystore_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/gateway"
)

// TestSyncCatalog: the store's side of a catalog sync on real
// PostgreSQL — the snapshot it plans from, the plan written in one
// transaction, a game with history disabled and never deleted, blocked
// countries read back by Game, an operator's write taking a game back from
// the sync, a refused plan writing nothing.
func TestSyncCatalog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDatabase(t)
	gw := gatewaystore.NewGateway(pool)
	for _, p := range []string{"cal", "other"} {
		if err := gw.UpsertProvider(ctx, gateway.Provider{ID: p, Name: p, Secret: "s", Enabled: true}); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range []gateway.Game{
		{ID: "cal-old", ProviderID: "cal", Name: "Old", Category: "slots", Enabled: true},
		{ID: "pulled", ProviderID: "cal", Name: "Pulled", Category: "slots", Enabled: false},
		{ID: "cal-theirs", ProviderID: "other", Name: "Theirs", Category: "slots", Enabled: true},
	} {
		if err := gw.UpsertGame(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	if err := gw.SetProviderGameCode(ctx, "cal-old", "old"); err != nil {
		t.Fatal(err)
	}
	// cal-old has history: a session and a transaction name it.
	if _, err := gw.CreateClient(ctx, "acme", "Acme", "sandbox"); err != nil {
		t.Fatal(err)
	}
	if err := gw.CreateSession(ctx, gateway.GameSession{ID: "gs-1", ClientID: "acme", PlayerID: "p1", ProviderID: "cal",
		GameID: "cal-old", Currency: "EUR", LaunchTxID: "ln-1", ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO readmodels.transactions (id, client_id, type, amount, currency, scale, base_status,
		created_at, provider, game, player_id, external_id, seq, sub, position)
		VALUES (gen_random_uuid(), 'acme', 'bet', -100, 'EUR', 2, 'settled', now(), 'cal', 'cal-old', 'p1', 'b-1', 1, 0, 1)`); err != nil {
		t.Fatal(err)
	}

	snap, err := gw.CatalogSnapshot(ctx, "cal")
	if err != nil {
		t.Fatal(err)
	}
	codes := []string{}
	for _, g := range snap.Games {
		codes = append(codes, g.ID+"="+g.Code)
	}
	if !reflect.DeepEqual(codes, []string{"cal-old=old", "pulled=pulled"}) || !reflect.DeepEqual(snap.TakenIDs, []string{"cal-theirs"}) {
		t.Fatalf("snapshot %v, taken %v", codes, snap.TakenIDs)
	}

	list := []gateway.ProviderGame{
		{Code: "torch", Name: "Torch of Fire", Category: "slots", Enabled: true, BlockedCountries: []string{"pl", "BG"}},
		{Code: "pulled", Name: "Pulled II", Category: "slots", Enabled: true},
		{Code: "theirs", Name: "Theirs", Category: "slots", Enabled: true},
	}
	planned := func(list []gateway.ProviderGame) func(gateway.CatalogSnapshot) (gateway.CatalogSyncPlan, error) {
		return func(s gateway.CatalogSnapshot) (gateway.CatalogSyncPlan, error) {
			return gateway.PlanCatalogSync("cal", s, list), nil
		}
	}
	plan, err := gw.SyncCatalog(ctx, "cal", planned(list))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Added) != 1 || len(plan.Updated) != 1 || len(plan.Disabled) != 1 || len(plan.Skipped) != 1 ||
		!slices.Equal(plan.KeptDisabled, []string{"pulled"}) {
		t.Fatalf("plan %+v", plan)
	}
	torch, err := gw.Game(ctx, "cal-torch")
	if err != nil || !torch.Enabled || torch.Code != "torch" || !slices.Equal(torch.BlockedCountries, []string{"BG", "PL"}) ||
		!torch.BlockedIn("PL") || torch.BlockedIn("BR") {
		t.Fatalf("added game %+v, %v", torch, err)
	}
	if g, err := gw.ProviderGame(ctx, "cal", "torch"); err != nil || g.ID != "cal-torch" || len(g.BlockedCountries) != 2 {
		t.Fatalf("by code %+v, %v", g, err)
	}
	old, err := gw.Game(ctx, "cal-old")
	if err != nil || old.Enabled {
		t.Fatalf("the game with history: %+v, %v; want it kept, disabled", old, err)
	}
	if p, _ := gw.Game(ctx, "pulled"); p.Enabled || p.Name != "Pulled II" {
		t.Fatalf("the operator's disabled game %+v: want renamed and still disabled", p)
	}
	var synced int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM games WHERE synced_at IS NOT NULL`).Scan(&synced); err != nil || synced != 3 {
		t.Fatalf("%d games synced, %v", synced, err)
	}

	// The game with history comes back: the sync enables what it disabled.
	list = append(list, gateway.ProviderGame{Code: "old", Name: "Old", Category: "slots", Enabled: true})
	plan, err = gw.SyncCatalog(ctx, "cal", planned(list))
	if err != nil || len(plan.Updated) != 1 || plan.Updated[0].Game.ID != "cal-old" || len(plan.Added) != 0 {
		t.Fatalf("second sync %+v, %v", plan, err)
	}
	if old, _ := gw.Game(ctx, "cal-old"); !old.Enabled {
		t.Fatal("the game the sync disabled was not enabled again")
	}
	// Once more: nothing changes.
	if plan, err = gw.SyncCatalog(ctx, "cal", planned(list)); err != nil || plan.Changed() || plan.Unchanged != 3 {
		t.Fatalf("third sync %+v, %v", plan, err)
	}

	// An operator's write takes a sync-disabled game back: the sync then
	// leaves it disabled.
	if _, err := gw.SyncCatalog(ctx, "cal", planned(list[:3])); err != nil { // old missing: disabled by the sync
		t.Fatal(err)
	}
	if err := gw.UpsertGame(ctx, gateway.Game{ID: "cal-old", ProviderID: "cal", Name: "Old", Category: "slots", Enabled: false}); err != nil {
		t.Fatal(err)
	}
	if plan, err = gw.SyncCatalog(ctx, "cal", planned(list)); err != nil || !slices.Contains(plan.KeptDisabled, "cal-old") {
		t.Fatalf("after the operator's write %+v, %v", plan, err)
	}
	if old, _ := gw.Game(ctx, "cal-old"); old.Enabled {
		t.Fatal("the sync enabled a game an operator disabled")
	}

	// A plan that fails writes nothing.
	boom := errors.New("boom")
	if _, err := gw.SyncCatalog(ctx, "cal", func(gateway.CatalogSnapshot) (gateway.CatalogSyncPlan, error) {
		return gateway.CatalogSyncPlan{}, boom
	}); !errors.Is(err, boom) {
		t.Fatalf("failed plan: %v", err)
	}
	// Nothing is ever deleted.
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM games`).Scan(&n); err != nil || n != 4 {
		t.Fatalf("%d games, %v", n, err)
	}
	// The column holds canonical codes only.
	if _, err := pool.Exec(ctx, `UPDATE games SET blocked_countries = '{pl}' WHERE id = 'cal-torch'`); err == nil {
		t.Fatal("a lower-case country was stored")
	}
}

// TestExclusiveCatalogSync: one periodic sync of the cluster at a time.
func TestExclusiveCatalogSync(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	gw := gatewaystore.NewGateway(pool)
	ran, err := gw.ExclusiveCatalogSync(t.Context(), func(ctx context.Context) error {
		inner, err := gw.ExclusiveCatalogSync(ctx, func(context.Context) error { return nil })
		if err != nil || inner {
			t.Errorf("a second holder ran (%v, %v)", inner, err)
		}
		return nil
	})
	if err != nil || !ran {
		t.Fatalf("ran %v, %v", ran, err)
	}
	if again, err := gw.ExclusiveCatalogSync(t.Context(), func(context.Context) error { return nil }); !again || err != nil {
		t.Fatalf("the lock was not released: %v, %v", again, err)
	}
}
