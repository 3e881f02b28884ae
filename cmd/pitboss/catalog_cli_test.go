package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
)

// TestProviderAddAndGameSet: onboarding a provider without SQL —
// `pitboss provider add` creates it on its wallet protocol with its key,
// its secret sealed and its launch route; `pitboss game set` adds its game
// with the provider's own code; every bad input is refused before anything
// is written.
func TestProviderAddAndGameSet(t *testing.T) {
	t.Parallel()
	cfg, pool := testConfig(t)
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "secret")
	if err := os.WriteFile(secretFile, []byte("a-provider-secret-of-32-characters\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pubFile := filepath.Join(dir, "caleta-public.pem")
	if err := os.WriteFile(pubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}

	got := cliJSON[cliProvider](t, cfg, "provider", "add", "--id", "caleta-1", "--name", "Caleta Gaming", "--secret-file", secretFile,
		"--wallet-protocol", "caleta", "--wallet-public-key-file", pubFile, "--kind", "caleta", "--endpoint", "https://games.example/api")
	if got.ID != "caleta-1" || got.WalletProtocol != "caleta" || !got.Enabled || got.WalletPublicKeySHA256 != keyFingerprint(string(pemOf(t, pubFile))) {
		t.Fatalf("added %+v", got)
	}
	box, err := cfg.secretBox(cfg.logger())
	if err != nil {
		t.Fatal(err)
	}
	gw := gatewaystore.NewGateway(pool).WithSecretBox(box)
	p, err := gw.Provider(t.Context(), "caleta-1")
	if err != nil || p.Secret != "a-provider-secret-of-32-characters" || p.Protocol() != "caleta" || p.WalletPublicKey == "" {
		t.Fatalf("stored %+v, %v", p, err)
	}
	var plain string
	var sealed []byte
	if err := pool.QueryRow(t.Context(), `SELECT secret, secret_sealed FROM providers WHERE id = 'caleta-1'`).Scan(&plain, &sealed); err != nil {
		t.Fatal(err)
	}
	if plain != "" || len(sealed) == 0 {
		t.Fatalf("the secret is stored in the clear (%q) or not sealed (%d bytes)", plain, len(sealed))
	}
	r, err := gw.ProviderRoute(t.Context(), "caleta-1")
	if err != nil || r.Kind != "caleta" || len(r.Endpoints) != 1 || r.Endpoints[0] != "https://games.example/api" {
		t.Fatalf("route %+v, %v", r, err)
	}

	g := cliJSON[cliGame](t, cfg, "game", "set", "--id", "caleta-slot", "--provider", "caleta-1", "--name", "Lucky Slot",
		"--category", "slots", "--provider-code", "lucky_slot_96")
	if g != (cliGame{ID: "caleta-slot", Provider: "caleta-1", Name: "Lucky Slot", Category: "slots", ProviderCode: "lucky_slot_96", Enabled: true}) {
		t.Fatalf("game %+v", g)
	}
	if g := cliJSON[cliGame](t, cfg, "game", "set", "--id", "caleta-slot", "--provider", "caleta-1", "--name", "Lucky Slot",
		"--category", "slots", "--disabled"); g.Enabled || g.ProviderCode != "caleta-slot" {
		t.Fatalf("game changed %+v: want disabled, the code back to our id", g)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"an existing id", []string{"provider", "add", "--id", "caleta-1", "--name", "X", "--secret-file", secretFile}, "exists"},
		{"no name", []string{"provider", "add", "--id", "p2", "--secret-file", secretFile}, "--name and --secret-file are required"},
		{"no secret", []string{"provider", "add", "--id", "p2", "--name", "P"}, "--name and --secret-file are required"},
		{"a short secret", []string{"provider", "add", "--id", "p2", "--name", "P", "--secret-file", writeFile(t, dir, "short", "abc")}, "at least 16"},
		{"an unknown protocol", []string{"provider", "add", "--id", "p2", "--name", "P", "--secret-file", secretFile, "--wallet-protocol", "hub99"}, "hub99"},
		{"caleta without its key", []string{"provider", "add", "--id", "p2", "--name", "P", "--secret-file", secretFile, "--wallet-protocol", "caleta"}, "public key"},
		{"an unknown kind", []string{"provider", "add", "--id", "p2", "--name", "P", "--secret-file", secretFile, "--kind", "soap"}, "soap"},
		{"json without an endpoint", []string{"provider", "add", "--id", "p2", "--name", "P", "--secret-file", secretFile, "--kind", "json"}, "endpoint"},
		{"a bad id", []string{"provider", "add", "--id", "a b", "--name", "P", "--secret-file", secretFile}, "--id"},
		{"a game of no provider", []string{"game", "set", "--id", "g9", "--provider", "nobody", "--name", "G", "--category", "slots"}, "no provider"},
		{"a game without a category", []string{"game", "set", "--id", "g9", "--provider", "caleta-1", "--name", "G"}, "--name and --category are required"},
		{"an unknown game subcommand", []string{"game", "delete", "--id", "g9"}, "unknown subcommand"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := cli(t, cfg, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one naming %q\n%s", err, tc.want, out)
			}
		})
	}
	if _, err := gw.Provider(t.Context(), "p2"); err == nil {
		t.Fatal("a refused provider add wrote the provider")
	}
	if _, err := gw.Game(t.Context(), "g9"); err == nil {
		t.Fatal("a refused game set wrote the game")
	}
}

func pemOf(t *testing.T, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	f := filepath.Join(dir, name)
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}
