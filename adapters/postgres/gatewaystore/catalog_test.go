package gatewaystore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

func TestProviderRoutes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDatabase(t)
	gw := gatewaystore.NewGateway(pool)
	if err := gw.UpsertProvider(ctx, gateway.Provider{ID: "acme", Name: "Acme", Secret: "s", Enabled: true}); err != nil {
		t.Fatal(err)
	}

	// A provider stored before migration 00007 was given a route is the
	// demo kind with the defaults.
	r, err := gw.ProviderRoute(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	want := gateway.ProviderRoute{ProviderID: "acme", Kind: gateway.ProviderKindDemo, Endpoints: []string{},
		Balancing: gateway.BalancingPriority, Timeout: gateway.DefaultProviderTimeout, BreakerFailures: gateway.DefaultBreakerFailures,
		BreakerCooldown: gateway.DefaultBreakerCooldown}
	if r.Kind != want.Kind || len(r.Endpoints) != 0 || r.Balancing != want.Balancing || r.Timeout != want.Timeout ||
		r.BreakerFailures != want.BreakerFailures || r.BreakerCooldown != want.BreakerCooldown {
		t.Fatalf("default route %+v, want %+v", r, want)
	}

	set := gateway.ProviderRoute{ProviderID: "acme", Kind: gateway.ProviderKindFormXML,
		Endpoints: []string{"https://a.example/api", "https://b.example/api"}, Balancing: gateway.BalancingRoundRobin,
		Timeout: 1500 * time.Millisecond, BreakerFailures: 5, BreakerCooldown: 45 * time.Second, Secret: "not stored here"}
	if err := gw.SetProviderRoute(ctx, set); err != nil {
		t.Fatal(err)
	}
	got, err := gw.ProviderRoute(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != set.Kind || len(got.Endpoints) != 2 || got.Endpoints[1] != "https://b.example/api" ||
		got.Balancing != set.Balancing || got.Timeout != set.Timeout || got.BreakerFailures != 5 ||
		got.BreakerCooldown != set.BreakerCooldown || got.Secret != "" {
		t.Fatalf("route %+v after setting %+v", got, set)
	}
	// The provider's own columns are untouched.
	if p, err := gw.Provider(ctx, "acme"); err != nil || p.Secret != "s" || p.Name != "Acme" || !p.Enabled {
		t.Fatalf("provider %+v, %v", p, err)
	}

	bad := map[string]gateway.ProviderRoute{
		"json without endpoints": {ProviderID: "acme", Kind: gateway.ProviderKindJSON, Balancing: gateway.BalancingPriority,
			Timeout: time.Second, BreakerFailures: 1, BreakerCooldown: time.Second},
		"unknown kind": {ProviderID: "acme", Kind: "soap", Endpoints: []string{"https://a.example"}, Balancing: gateway.BalancingPriority,
			Timeout: time.Second, BreakerFailures: 1, BreakerCooldown: time.Second},
		"timeout too long": {ProviderID: "acme", Kind: gateway.ProviderKindDemo, Balancing: gateway.BalancingPriority,
			Timeout: time.Minute, BreakerFailures: 1, BreakerCooldown: time.Second},
		"endpoint with a user": {ProviderID: "acme", Kind: gateway.ProviderKindJSON, Endpoints: []string{"https://u:p@a.example"},
			Balancing: gateway.BalancingPriority, Timeout: time.Second, BreakerFailures: 1, BreakerCooldown: time.Second},
	}
	for name, r := range bad {
		if err := gw.SetProviderRoute(ctx, r); !errors.Is(err, domain.ErrInvalidArgument) {
			t.Fatalf("%s: error %v, want ErrInvalidArgument", name, err)
		}
	}
	missing := want
	missing.ProviderID = "nobody"
	if err := gw.SetProviderRoute(ctx, missing); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("unknown provider: %v", err)
	}
	if _, err := gw.ProviderRoute(ctx, "nobody"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("unknown provider route: %v", err)
	}

	// Game codes: empty means our id.
	if err := gw.UpsertGame(ctx, gateway.Game{ID: "g1", ProviderID: "acme", Name: "G", Category: "slots", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if g, err := gw.Game(ctx, "g1"); err != nil || g.Code != "g1" {
		t.Fatalf("game %+v, %v", g, err)
	}
	if err := gw.SetProviderGameCode(ctx, "g1", "ACME-77"); err != nil {
		t.Fatal(err)
	}
	if g, err := gw.Game(ctx, "g1"); err != nil || g.Code != "ACME-77" {
		t.Fatalf("game %+v, %v", g, err)
	}
	if err := gw.SetProviderGameCode(ctx, "nope", "x"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("unknown game: %v", err)
	}
}
