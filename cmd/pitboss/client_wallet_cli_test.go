package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
)

// TestClientWalletCommand: `pitboss client wallet` sets a client's wallet
// mode on the database, the credential sealed and never printed, and
// refuses what the admin API refuses.
func TestClientWalletCommand(t *testing.T) {
	t.Parallel()
	cfg, pool := testConfig(t)
	cliJSON[cliClient](t, cfg, "client", "create", "--id", "seam", "--name", "Seamless casino")
	secret := filepath.Join(t.TempDir(), "credential")
	const credential = "pam-token-0123456789abcdef0123456789"
	if err := os.WriteFile(secret, []byte(credential+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w := cliJSON[cliClientWallet](t, cfg, "client", "wallet", "--id", "seam", "--mode", "seamless",
		"--url", "https://pam.casino.example/pam", "--protocol", "valkyrie-pam", "--credential-file", secret)
	if w.Mode != "seamless" || w.Protocol != "valkyrie-pam" || !w.CredentialSet {
		t.Fatalf("wallet %+v", w)
	}
	box, err := cfg.secretBox(cfg.logger())
	if err != nil {
		t.Fatal(err)
	}
	stored, err := gatewaystore.NewGateway(pool).WithSecretBox(box).ClientWallet(t.Context(), "seam")
	if err != nil || stored.Credential != credential {
		t.Fatalf("stored credential %q (%v), want the file's without its newline", stored.Credential, err)
	}
	var raw []byte
	if err := pool.QueryRow(t.Context(), `SELECT operator_wallet_credential_sealed FROM clients WHERE id = 'seam'`).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), credential) {
		t.Fatal("the credential is stored in plain text")
	}
	out, err := cli(t, cfg, "client", "wallet", "--id", "seam", "--mode", "seamless", "--url", "https://pam.casino.example/pam",
		"--protocol", "soap")
	if err == nil || !strings.Contains(err.Error(), "soap") {
		t.Fatalf("an unknown protocol: %v\n%s", err, out)
	}
	if out, err := cli(t, cfg, "client", "wallet", "--id", "seam", "--mode", "ledger"); err != nil ||
		!strings.Contains(out, "ledger") || strings.Contains(out, credential) {
		t.Fatalf("back to ledger: %v\n%s", err, out)
	}
}
