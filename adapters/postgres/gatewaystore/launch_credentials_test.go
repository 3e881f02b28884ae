package gatewaystore_test

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"testing"

	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// Launch credentials (migration 00025): the secret is sealed at rest (the
// row holds no clear text of it), opens through Provider, is listed only
// by fingerprint, and a partial update keeps what it does not name.
func TestProviderLaunchCredentials(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool, _ := pgtest.NewDatabase(t)
	gw := gatewaystore.NewGateway(pool).WithSecretBox(slBox(t, 7))
	if err := gw.UpsertProvider(ctx, gateway.Provider{ID: "cg", Name: "Caleta", Secret: "wallet-s", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))

	if err := gw.SetProviderLaunchCredentials(ctx, "cg", gateway.LaunchCredentials{OperatorID: "op-1", Country: "BR",
		Secret: keyPEM}); err != nil {
		t.Fatal(err)
	}
	var sealed []byte
	if err := pool.QueryRow(ctx, `SELECT launch_secret_sealed FROM providers WHERE id = 'cg'`).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if len(sealed) == 0 || bytes.Contains(sealed, []byte("PRIVATE KEY")) || bytes.Contains(sealed, der[:64]) {
		t.Fatalf("launch secret not sealed at rest (%d bytes)", len(sealed))
	}
	p, err := gw.Provider(ctx, "cg")
	if err != nil {
		t.Fatal(err)
	}
	wantFP := gateway.PublicKeyFingerprint(&key.PublicKey)
	if p.LaunchSecret != keyPEM || p.LaunchKeyFingerprint != wantFP || p.Secret != "wallet-s" {
		t.Fatalf("provider: secret %t, fingerprint %q (want %q)", p.LaunchSecret == keyPEM, p.LaunchKeyFingerprint, wantFP)
	}
	all, err := gw.AllProviders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].LaunchSecret != "" || all[0].LaunchKeyFingerprint != wantFP {
		t.Fatalf("listed %+v", all)
	}
	rt, err := gw.ProviderRoute(ctx, "cg")
	if err != nil {
		t.Fatal(err)
	}
	if rt.LaunchOperatorID != "op-1" || rt.LaunchCountry != "BR" || rt.LaunchSecret != "" {
		t.Fatalf("route %+v", rt)
	}

	// A partial update keeps the rest.
	if err := gw.SetProviderLaunchCredentials(ctx, "cg", gateway.LaunchCredentials{Country: "PT"}); err != nil {
		t.Fatal(err)
	}
	if p, _ := gw.Provider(ctx, "cg"); p.LaunchSecret != keyPEM || p.LaunchKeyFingerprint != wantFP {
		t.Fatal("a country change lost the launch key")
	}
	if rt, _ := gw.ProviderRoute(ctx, "cg"); rt.LaunchOperatorID != "op-1" || rt.LaunchCountry != "PT" {
		t.Fatalf("route %+v", rt)
	}
	// The sealed secret is bound to its provider: moved to another row it
	// does not open.
	if err := gw.UpsertProvider(ctx, gateway.Provider{ID: "other", Name: "Other", Secret: "s", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE providers SET launch_secret_sealed = $1 WHERE id = 'other'`, sealed); err != nil {
		t.Fatal(err)
	}
	if _, err := gw.Provider(ctx, "other"); err == nil {
		t.Fatal("a launch secret moved to another provider opened")
	}

	for name, c := range map[string]gateway.LaunchCredentials{
		"lowercase country":        {Country: "br"},
		"operator id with a space": {OperatorID: "op 1"},
		"short key":                {Secret: shortKeyPEM(t)},
		"broken PEM":               {Secret: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"},
		"token on two lines":       {Secret: "tok\nen"},
	} {
		if err := gw.SetProviderLaunchCredentials(ctx, "cg", c); !errors.Is(err, domain.ErrInvalidArgument) {
			t.Fatalf("%s: error %v, want invalid argument", name, err)
		}
	}
	if err := gw.SetProviderLaunchCredentials(ctx, "nobody", gateway.LaunchCredentials{Country: "BR"}); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("unknown provider: %v", err)
	}
	// Without the master key a secret is refused, never stored in clear.
	plain := gatewaystore.NewGateway(pool)
	if err := plain.SetProviderLaunchCredentials(ctx, "cg", gateway.LaunchCredentials{Secret: "evo-token"}); !errors.Is(err, gatewaystore.ErrNoSecretBox) {
		t.Fatalf("without a box: %v", err)
	}
	if p, _ := gw.Provider(ctx, "cg"); p.LaunchSecret != keyPEM {
		t.Fatal("a refused secret changed the stored one")
	}
}

func shortKeyPEM(t *testing.T) string {
	k, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
}
