package main

import (
	"strings"
	"testing"

	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/gateway"
)

// TestProviderCommand: `pitboss provider` lists each provider's signature
// scheme and moves a provider from v1 to v2 (docs/provider-wallet.md).
func TestProviderCommand(t *testing.T) {
	t.Parallel()
	cfg, pool := testConfig(t)
	gw := gatewaystore.NewGateway(pool)
	ctx := t.Context()
	if err := gw.UpsertProvider(ctx, gateway.Provider{ID: "legacy", Name: "Legacy Games", Secret: "s", Enabled: true,
		SignatureScheme: gateway.SignatureV1}); err != nil {
		t.Fatal(err)
	}
	if err := gw.UpsertProvider(ctx, gateway.Provider{ID: "fresh", Name: "Fresh Games", Secret: "s"}); err != nil {
		t.Fatal(err)
	}
	type list struct {
		Providers []cliProvider `json:"providers"`
	}
	got := cliJSON[list](t, cfg, "provider", "list")
	want := []cliProvider{{"fresh", "Fresh Games", false, "v2"}, {"legacy", "Legacy Games", true, "v1"}}
	if len(got.Providers) != 2 || got.Providers[0] != want[0] || got.Providers[1] != want[1] {
		t.Fatalf("list %+v, want %+v", got.Providers, want)
	}
	if moved := cliJSON[cliProvider](t, cfg, "provider", "set", "--id", "legacy", "--signature-scheme", "v2"); moved !=
		(cliProvider{"legacy", "Legacy Games", true, "v2"}) {
		t.Fatalf("set %+v", moved)
	}
	if p, err := gw.Provider(ctx, "legacy"); err != nil || p.SignatureScheme != gateway.SignatureV2 {
		t.Fatalf("stored %+v, %v", p, err)
	}
	text, err := cli(t, cfg, "provider", "list")
	if err != nil || !strings.Contains(text, "SIGNATURE") || !strings.Contains(text, "legacy") {
		t.Fatalf("list as text: %v\n%s", err, text)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"an unknown scheme", []string{"provider", "set", "--id", "legacy", "--signature-scheme", "v3"}, `"v3" is not one of v1, v2`},
		{"no scheme", []string{"provider", "set", "--id", "legacy"}, `"" is not one of`},
		{"an unknown provider", []string{"provider", "set", "--id", "nobody", "--signature-scheme", "v2"}, `no provider "nobody"`},
		{"no id", []string{"provider", "set", "--signature-scheme", "v2"}, "--id"},
		{"an unknown subcommand", []string{"provider", "delete", "--id", "legacy"}, "unknown subcommand"},
	} {
		if _, err := cli(t, cfg, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}
