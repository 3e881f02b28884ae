package gatewaystore_test

import (
	"errors"
	"testing"

	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// A provider's signature scheme (migration 00012): a new provider is on
// v2 unless created on v1; rewriting a provider without naming a scheme
// keeps its scheme; SetProviderSignatureScheme moves it.
func TestProviderSignatureScheme(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool, _ := pgtest.NewDatabase(t)
	gw := gatewaystore.NewGateway(pool)
	scheme := func(id string) string {
		t.Helper()
		p, err := gw.Provider(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return p.SignatureScheme
	}
	for _, p := range []gateway.Provider{{ID: "fresh", Name: "Fresh", Secret: "s", Enabled: true},
		{ID: "legacy", Name: "Legacy", Secret: "s", Enabled: true, SignatureScheme: gateway.SignatureV1}} {
		if err := gw.UpsertProvider(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if got := scheme("fresh"); got != gateway.SignatureV2 {
		t.Fatalf("a new provider is on %q, want v2", got)
	}
	if got := scheme("legacy"); got != gateway.SignatureV1 {
		t.Fatalf("a provider created on v1 is on %q", got)
	}
	// A rotated secret does not move it.
	if err := gw.UpsertProvider(ctx, gateway.Provider{ID: "legacy", Name: "Legacy", Secret: "s2", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if got := scheme("legacy"); got != gateway.SignatureV1 {
		t.Fatalf("after an upsert without a scheme: %q, want v1", got)
	}
	if err := gw.SetProviderSignatureScheme(ctx, "legacy", gateway.SignatureV2); err != nil {
		t.Fatal(err)
	}
	if got := scheme("legacy"); got != gateway.SignatureV2 {
		t.Fatalf("moved: %q, want v2", got)
	}
	if err := gw.UpsertProvider(ctx, gateway.Provider{ID: "fresh", Name: "Fresh", Secret: "s", SignatureScheme: gateway.SignatureV1}); err != nil {
		t.Fatal(err)
	}
	if got := scheme("fresh"); got != gateway.SignatureV1 {
		t.Fatalf("upserted with v1: %q", got)
	}

	all, err := gw.AllProviders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].ID != "fresh" || all[0].SignatureScheme != "v1" || all[0].Enabled || all[0].Secret != "" ||
		all[1].ID != "legacy" || all[1].SignatureScheme != "v2" || !all[1].Enabled {
		t.Fatalf("AllProviders = %+v", all)
	}

	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"set an unknown scheme", gw.SetProviderSignatureScheme(ctx, "legacy", "v3"), domain.ErrInvalidArgument},
		{"set on an unknown provider", gw.SetProviderSignatureScheme(ctx, "nobody", gateway.SignatureV2), domain.ErrNotFound},
		{"upsert an unknown scheme", gw.UpsertProvider(ctx, gateway.Provider{ID: "x", Name: "X", Secret: "s", SignatureScheme: "V2"}),
			domain.ErrInvalidArgument},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	var fe *gateway.FieldError
	if err := gw.SetProviderSignatureScheme(ctx, "legacy", "v3"); !errors.As(err, &fe) || fe.Field != "signature_scheme" {
		t.Errorf("an unknown scheme: %v, want a FieldError on signature_scheme", err)
	}
	if got := scheme("legacy"); got != gateway.SignatureV2 {
		t.Fatalf("after the refusals: %q, want v2", got)
	}
}
