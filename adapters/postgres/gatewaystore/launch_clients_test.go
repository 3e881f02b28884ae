package gatewaystore_test

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/secretbox"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

func slBox(t *testing.T, fill byte) *secretbox.Box {
	t.Helper()
	b, err := secretbox.New(bytes.Repeat([]byte{fill}, secretbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLaunchClients: client secrets are stored sealed, open only for
// their own client and key, and launch settings round-trip.
func TestLaunchClients(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.NewDatabase(t)
	gw := gatewaystore.NewGateway(pool)
	lc, err := gatewaystore.NewLaunchClients(pool, slBox(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ id, env string }{{"acme", "production"}, {"beta", "sandbox"}} {
		if _, err := gw.CreateClient(ctx, c.id, c.id, c.env); err != nil {
			t.Fatal(err)
		}
	}

	got, err := lc.LaunchClient(ctx, "acme")
	if err != nil || got.Secret != nil || !got.SignatureRequired() || got.Environment != "production" {
		t.Fatalf("fresh production client: %+v, %v", got, err)
	}
	secret, err := lc.IssueClientSecret(ctx, "acme")
	if err != nil || !strings.HasPrefix(secret, "pbcs_") || len(secret) != 5+64 {
		t.Fatalf("issue: %q, %v", secret, err)
	}
	var stored []byte
	if err := pool.QueryRow(ctx, `SELECT client_secret FROM clients WHERE id = 'acme'`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(stored, []byte(secret)) || bytes.Contains(stored, []byte(secret[5:])) {
		t.Fatal("client secret is stored in plain text")
	}
	if got, err = lc.LaunchClient(ctx, "acme"); err != nil || string(got.Secret) != secret {
		t.Fatalf("launch client: %+v, %v", got, err)
	}

	// A sealed secret copied onto another client's row does not open there.
	if _, err := pool.Exec(ctx, `UPDATE clients SET client_secret = $1 WHERE id = 'beta'`, stored); err != nil {
		t.Fatal(err)
	}
	if _, err := lc.LaunchClient(ctx, "beta"); !errors.Is(err, secretbox.ErrMalformed) {
		t.Fatalf("copied secret: %v", err)
	}
	// Another master key cannot open it either.
	other, _ := gatewaystore.NewLaunchClients(pool, slBox(t, 2))
	if _, err := other.LaunchClient(ctx, "acme"); !errors.Is(err, secretbox.ErrWrongKey) {
		t.Fatalf("other key: %v", err)
	}

	// EnsureClientSecret keeps an issued secret and issues a missing one.
	if s, created, err := lc.EnsureClientSecret(ctx, "acme"); err != nil || created || s != secret {
		t.Fatalf("ensure existing: %q %v %v", s, created, err)
	}
	rotated, err := lc.IssueClientSecret(ctx, "acme")
	if err != nil || rotated == secret {
		t.Fatalf("rotate: %q, %v", rotated, err)
	}
	if _, err := pool.Exec(ctx, `UPDATE clients SET client_secret = NULL WHERE id = 'beta'`); err != nil {
		t.Fatal(err)
	}
	s, created, err := lc.EnsureClientSecret(ctx, "beta")
	if err != nil || !created || s == "" {
		t.Fatalf("ensure new: %q %v %v", s, created, err)
	}

	settings := gateway.LaunchSettings{RequireSignature: func() *bool { b := false; return &b }(),
		IPAllowList:        []netip.Prefix{netip.MustParsePrefix("203.0.113.7/24"), netip.MustParsePrefix("2001:db8::/48")},
		AllowedReturnHosts: []string{"Casino.Example", "lobby.example:8443"}, DefaultCurrency: "EUR"}
	if err := lc.SetLaunchSettings(ctx, "acme", settings); err != nil {
		t.Fatal(err)
	}
	got, err = lc.LaunchClient(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if got.SignatureRequired() || got.DefaultCurrency != "EUR" ||
		len(got.IPAllowList) != 2 || got.IPAllowList[0] != netip.MustParsePrefix("203.0.113.0/24") ||
		len(got.AllowedReturnHosts) != 2 || got.AllowedReturnHosts[0] != "casino.example" {
		t.Fatalf("settings %+v", got.LaunchSettings)
	}

	for name, bad := range map[string]gateway.LaunchSettings{
		"unknown currency": {DefaultCurrency: "XXQ"},
		"host with a path": {AllowedReturnHosts: []string{"casino.example/lobby"}},
		"invalid prefix":   {IPAllowList: []netip.Prefix{{}}},
	} {
		if err := lc.SetLaunchSettings(ctx, "acme", bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := lc.SetLaunchSettings(ctx, "nobody", gateway.LaunchSettings{}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("unknown client: %v", err)
	}
	if _, err := lc.IssueClientSecret(ctx, "nobody"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("unknown client: %v", err)
	}
	if _, err := lc.LaunchClient(ctx, "nobody"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("unknown client: %v", err)
	}
}

// TestProviderSecretsSealed: a gateway with a master key stores provider
// secrets sealed, still reads plain-text rows and seals them on request.
func TestProviderSecretsSealed(t *testing.T) {
	ctx := context.Background()
	pool, _ := pgtest.NewDatabase(t)
	plain := gatewaystore.NewGateway(pool)
	sealed := gatewaystore.NewGateway(pool).WithSecretBox(slBox(t, 3))

	if err := plain.UpsertProvider(ctx, gateway.Provider{ID: "old", Name: "Old", Secret: "old-secret", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if err := sealed.UpsertProvider(ctx, gateway.Provider{ID: "new", Name: "New", Secret: "new-secret", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	columns := func(id string) (string, []byte) {
		var s string
		var b []byte
		if err := pool.QueryRow(ctx, `SELECT secret, secret_sealed FROM providers WHERE id = $1`, id).Scan(&s, &b); err != nil {
			t.Fatal(err)
		}
		return s, b
	}
	if s, b := columns("new"); s != "" || b == nil || bytes.Contains(b, []byte("new-secret")) {
		t.Fatalf("new provider stored secret=%q sealed=%x", s, b)
	}
	for _, tc := range []struct{ id, want string }{{"old", "old-secret"}, {"new", "new-secret"}} {
		p, err := sealed.Provider(ctx, tc.id)
		if err != nil || p.Secret != tc.want {
			t.Fatalf("provider %s: %+v, %v", tc.id, p, err)
		}
	}
	if _, err := plain.Provider(ctx, "new"); err == nil {
		t.Fatal("a gateway without a key read a sealed secret")
	}

	n, err := sealed.SealProviderSecrets(ctx)
	if err != nil || n != 1 {
		t.Fatalf("seal: %d, %v", n, err)
	}
	if s, b := columns("old"); s != "" || b == nil {
		t.Fatalf("old provider after sealing: secret=%q sealed=%x", s, b)
	}
	if p, err := sealed.Provider(ctx, "old"); err != nil || p.Secret != "old-secret" {
		t.Fatalf("old provider after sealing: %+v, %v", p, err)
	}
	if n, err := sealed.SealProviderSecrets(ctx); err != nil || n != 0 {
		t.Fatalf("second seal: %d, %v", n, err)
	}
}
