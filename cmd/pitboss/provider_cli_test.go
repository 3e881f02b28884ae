package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"os"
	"path/filepath"
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
	want := []cliProvider{{ID: "fresh", Name: "Fresh Games", SignatureScheme: "v2", WalletProtocol: "pitboss"},
		{ID: "legacy", Name: "Legacy Games", Enabled: true, SignatureScheme: "v1", WalletProtocol: "pitboss"}}
	if len(got.Providers) != 2 || got.Providers[0] != want[0] || got.Providers[1] != want[1] {
		t.Fatalf("list %+v, want %+v", got.Providers, want)
	}
	if moved := cliJSON[cliProvider](t, cfg, "provider", "set", "--id", "legacy", "--signature-scheme", "v2"); moved !=
		(cliProvider{ID: "legacy", Name: "Legacy Games", Enabled: true, SignatureScheme: "v2", WalletProtocol: "pitboss"}) {
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
		{"nothing to set", []string{"provider", "set", "--id", "legacy"}, "give --signature-scheme, --wallet-protocol or a --launch-* flag"},
		{"an unknown provider", []string{"provider", "set", "--id", "nobody", "--signature-scheme", "v2"}, `no provider "nobody"`},
		{"no id", []string{"provider", "set", "--signature-scheme", "v2"}, "--id"},
		{"an unknown subcommand", []string{"provider", "delete", "--id", "legacy"}, "unknown subcommand"},
	} {
		if _, err := cli(t, cfg, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}

// writePublicKey writes a fresh RSA key's public half as PEM ("PUBLIC
// KEY") into dir and returns the file and the hex SHA-256 of its DER.
func writePublicKey(t *testing.T, dir string, bits int) (file, sum string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(dir, "key.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(der)
	return file, hex.EncodeToString(h[:])
}

// TestProviderWalletProtocolCommand: `pitboss provider set
// --wallet-protocol caleta` moves a provider to the Caleta wallet with its
// RSA public key (migration 00016), shows the key's fingerprint, and
// refuses a caleta provider without a usable key.
func TestProviderWalletProtocolCommand(t *testing.T) {
	t.Parallel()
	cfg, pool := testConfig(t)
	gw := gatewaystore.NewGateway(pool)
	ctx := t.Context()
	if err := gw.UpsertProvider(ctx, gateway.Provider{ID: "caleta", Name: "Caleta", Secret: "s", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	weak, _ := writePublicKey(t, t.TempDir(), 1024)
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"caleta without a key", []string{"provider", "set", "--id", "caleta", "--wallet-protocol", "caleta"}, "needs its RSA public key"},
		{"an unknown protocol", []string{"provider", "set", "--id", "caleta", "--wallet-protocol", "hub99"}, `"hub99" is not one of pitboss, caleta`},
		{"not a PEM", []string{"provider", "set", "--id", "caleta", "--wallet-protocol", "caleta", "--wallet-public-key-file", notPEM}, "no PEM block"},
		{"a short key", []string{"provider", "set", "--id", "caleta", "--wallet-protocol", "caleta", "--wallet-public-key-file", weak}, "at least 2048"},
		{"a key alone", []string{"provider", "set", "--id", "caleta", "--wallet-public-key-file", weak}, "goes with --wallet-protocol"},
	} {
		if _, err := cli(t, cfg, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	if p, err := gw.Provider(ctx, "caleta"); err != nil || p.Protocol() != gateway.WalletProtocolPitboss || p.WalletPublicKey != "" {
		t.Fatalf("a refused set changed the provider: %+v, %v", p, err)
	}

	file, sum := writePublicKey(t, dir, 2048)
	got := cliJSON[cliProvider](t, cfg, "provider", "set", "--id", "caleta", "--wallet-protocol", "caleta", "--wallet-public-key-file", file)
	if got.WalletProtocol != "caleta" || got.WalletPublicKeySHA256 != sum {
		t.Fatalf("set %+v, want caleta with key %s", got, sum)
	}
	p, err := gw.Provider(ctx, "caleta")
	if err != nil || p.Protocol() != gateway.WalletProtocolCaleta {
		t.Fatalf("stored %+v, %v", p, err)
	}
	if _, err := gateway.ParseRSAPublicKey(p.WalletPublicKey); err != nil {
		t.Fatalf("stored key: %v", err)
	}
	// Moving the signature scheme alone keeps the protocol and the key;
	// moving back to pitboss keeps the key for a later return.
	cliJSON[cliProvider](t, cfg, "provider", "set", "--id", "caleta", "--signature-scheme", "v1")
	back := cliJSON[cliProvider](t, cfg, "provider", "set", "--id", "caleta", "--wallet-protocol", "pitboss")
	if back.WalletProtocol != "pitboss" || back.SignatureScheme != "v1" || back.WalletPublicKeySHA256 != sum {
		t.Fatalf("after moving back %+v", back)
	}
	if again := cliJSON[cliProvider](t, cfg, "provider", "set", "--id", "caleta", "--wallet-protocol", "caleta"); again.WalletProtocol != "caleta" {
		t.Fatalf("back to caleta with the kept key: %+v", again)
	}
	text, err := cli(t, cfg, "provider", "list")
	if err != nil || !strings.Contains(text, "PROTOCOL") || !strings.Contains(text, sum) {
		t.Fatalf("list as text: %v\n%s", err, text)
	}
}

// `pitboss provider set --wallet-protocol redtiger` moves a provider to the
// Red Tiger wallet (docs/protocols/redtiger.md): no key file, its secret
// is the API key; the database takes the protocol (migration 00019).
func TestProviderWalletProtocolRedTiger(t *testing.T) {
	t.Parallel()
	cfg, pool := testConfig(t)
	gw := gatewaystore.NewGateway(pool)
	ctx := t.Context()
	if err := gw.UpsertProvider(ctx, gateway.Provider{ID: "rt", Name: "Red Tiger", Secret: "s", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	got := cliJSON[cliProvider](t, cfg, "provider", "set", "--id", "rt", "--wallet-protocol", "redtiger")
	if got.WalletProtocol != "redtiger" || got.WalletPublicKeySHA256 != "" {
		t.Fatalf("set %+v, want redtiger without a key", got)
	}
	if p, err := gw.Provider(ctx, "rt"); err != nil || p.Protocol() != gateway.WalletProtocolRedTiger || p.Secret != "s" {
		t.Fatalf("stored %+v, %v", p, err)
	}
	text, err := cli(t, cfg, "provider", "list")
	if err != nil || !strings.Contains(text, "redtiger") {
		t.Fatalf("list as text: %v\n%s", err, text)
	}
	back := cliJSON[cliProvider](t, cfg, "provider", "set", "--id", "rt", "--wallet-protocol", "pitboss")
	if back.WalletProtocol != "pitboss" {
		t.Fatalf("back to pitboss: %+v", back)
	}
}

// TestProviderEvolutionProtocolCommand: `pitboss provider set
// --wallet-protocol evolution` moves a provider to Evolution's One Wallet
// (migration 00021): no key is needed, its secret is the authToken; the
// provider keeps its secret and can move back.
func TestProviderEvolutionProtocolCommand(t *testing.T) {
	t.Parallel()
	cfg, pool := testConfig(t)
	gw := gatewaystore.NewGateway(pool)
	ctx := t.Context()
	if err := gw.UpsertProvider(ctx, gateway.Provider{ID: "evo", Name: "Evolution", Secret: "evo-secret", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	got := cliJSON[cliProvider](t, cfg, "provider", "set", "--id", "evo", "--wallet-protocol", "evolution")
	if got.WalletProtocol != "evolution" || got.WalletPublicKeySHA256 != "" {
		t.Fatalf("set %+v, want evolution without a key", got)
	}
	p, err := gw.Provider(ctx, "evo")
	if err != nil || p.Protocol() != gateway.WalletProtocolEvolution || p.Secret != "evo-secret" {
		t.Fatalf("stored %+v, %v", p, err)
	}
	text, err := cli(t, cfg, "provider", "list")
	if err != nil || !strings.Contains(text, "evolution") {
		t.Fatalf("list as text: %v\n%s", err, text)
	}
	if back := cliJSON[cliProvider](t, cfg, "provider", "set", "--id", "evo", "--wallet-protocol", "pitboss"); back.WalletProtocol != "pitboss" {
		t.Fatalf("after moving back %+v", back)
	}
}

// `pitboss provider set --launch-*` stores a provider's launch credentials
// (migration 00025): our private key sealed with the master key, listed by
// its public half's fingerprint only; an evolution token listed as "set".
func TestProviderLaunchCredentialsCommand(t *testing.T) {
	t.Parallel()
	cfg, pool := testConfig(t)
	gw := gatewaystore.NewGateway(pool)
	ctx := t.Context()
	for _, id := range []string{"caleta", "evo"} {
		if err := gw.UpsertProvider(ctx, gateway.Provider{ID: id, Name: id, Secret: "s", Enabled: true}); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "launch.pem")
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	pubFile, _ := writePublicKey(t, t.TempDir(), 2048)
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("evo-casino-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a public key for a private one", []string{"provider", "set", "--id", "caleta", "--launch-private-key-file", pubFile}, "not an RSA private key"},
		{"a key as token", []string{"provider", "set", "--id", "caleta", "--launch-token-file", keyFile}, "goes in --launch-private-key-file"},
		{"both secrets", []string{"provider", "set", "--id", "caleta", "--launch-token-file", tokenFile, "--launch-private-key-file", keyFile}, "not both"},
		{"a bad country", []string{"provider", "set", "--id", "caleta", "--launch-country", "Brazil"}, "ISO 3166-1"},
		{"an unknown provider", []string{"provider", "set", "--id", "nobody", "--launch-country", "BR"}, `no provider "nobody"`},
	} {
		if _, err := cli(t, cfg, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}

	got := cliJSON[cliProvider](t, cfg, "provider", "set", "--id", "caleta", "--launch-private-key-file", keyFile,
		"--launch-operator-id", "op-1", "--launch-country", "BR")
	if want := gateway.PublicKeyFingerprint(&k.PublicKey); got.LaunchKey != want {
		t.Fatalf("set %+v, want launch key %s", got, want)
	}
	box, err := cfg.secretBox(cfg.logger())
	if err != nil {
		t.Fatal(err)
	}
	p, err := gatewaystore.NewGateway(pool).WithSecretBox(box).Provider(ctx, "caleta")
	if err != nil || p.LaunchSecret != strings.TrimSpace(string(keyPEM)) {
		t.Fatalf("stored launch key opens: %v (equal %t)", err, p.LaunchSecret == strings.TrimSpace(string(keyPEM)))
	}
	if rt, err := gw.ProviderRoute(ctx, "caleta"); err != nil || rt.LaunchOperatorID != "op-1" || rt.LaunchCountry != "BR" {
		t.Fatalf("route %+v, %v", rt, err)
	}
	if evo := cliJSON[cliProvider](t, cfg, "provider", "set", "--id", "evo", "--launch-token-file", tokenFile); evo.LaunchKey != "set" {
		t.Fatalf("evolution token listed as %q", evo.LaunchKey)
	}
	text, err := cli(t, cfg, "provider", "list")
	if err != nil || !strings.Contains(text, "LAUNCH KEY") || !strings.Contains(text, got.LaunchKey) {
		t.Fatalf("list as text: %v\n%s", err, text)
	}
	if strings.Contains(text, "evo-casino-token") || strings.Contains(text, "PRIVATE KEY") {
		t.Fatalf("list reveals a launch secret:\n%s", text)
	}
}
