package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/providersim"
)

// catalogState is every game of the database, one line each: id, name,
// category, code, enabled, blocked countries.
func catalogState(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(t.Context(), `SELECT id || '|' || name || '|' || category || '|' || provider_game_code || '|' ||
		enabled::text || '|' || array_to_string(blocked_countries, ',') FROM games ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// TestCatalogSyncCommand: `pitboss catalog sync` against the provider
// simulator's Caleta game list over loopback HTTP — the dry run reports
// and writes nothing; the sync adds, updates and disables; a changed list
// updates, disables and enables again; a provider without a game list, a
// provider that is down and bad command lines change nothing.
func TestCatalogSyncCommand(t *testing.T) {
	t.Parallel()
	cfg, pool := testConfig(t)
	dir := t.TempDir()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := writeFile(t, dir, "launch.pem", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})))
	secretFile := writeFile(t, dir, "secret", "a-provider-secret-of-32-characters")
	games := providersim.CaletaSampleGames()
	sim := providersim.NewCaletaGamesAPI("op-1", &key.PublicKey, games)
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)

	mustCLI := func(args ...string) string {
		t.Helper()
		out, err := cli(t, cfg, args...)
		if err != nil {
			t.Fatalf("pitboss %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	mustCLI("provider", "add", "--id", "caleta", "--name", "Caleta", "--secret-file", secretFile, "--kind", "caleta",
		"--endpoint", srv.URL)
	mustCLI("provider", "set", "--id", "caleta", "--launch-operator-id", "op-1", "--launch-country", "BR",
		"--launch-private-key-file", keyFile)
	mustCLI("game", "set", "--id", "bj", "--provider", "caleta", "--name", "BJ", "--category", "table", "--provider-code", "cg_blackjack")
	mustCLI("game", "set", "--id", "caleta-cg_gone", "--provider", "caleta", "--name", "Gone", "--category", "slots")
	before := catalogState(t, pool)

	// The dry run: the full report, nothing written.
	dry := cliJSON[catalogSyncReport](t, cfg, "catalog", "sync", "--provider", "caleta", "--dry-run")
	if !dry.DryRun || dry.Listed != 5 || dry.Counts != (catalogSyncCounts{Added: 4, Updated: 1, Disabled: 1}) {
		t.Fatalf("dry run %+v", dry)
	}
	if got := catalogState(t, pool); !reflect.DeepEqual(got, before) {
		t.Fatalf("the dry run wrote:\n%q\nwas\n%q", got, before)
	}

	// The sync: the same report, written.
	done := cliJSON[catalogSyncReport](t, cfg, "catalog", "sync", "--provider", "caleta")
	dry.DryRun = false
	if !reflect.DeepEqual(done, dry) {
		t.Fatalf("sync %+v\nwant the dry run's %+v", done, dry)
	}
	if u := done.Updated[0]; u.ID != "bj" || !reflect.DeepEqual(u.Changes, []cliFieldChange{{"name", "BJ", "Blackjack Classic"},
		{"blocked_countries", "", "BG,PL"}}) {
		t.Fatalf("update %+v", u)
	}
	if d := done.Disabled[0]; d.ID != "caleta-cg_gone" || d.Reason != "missing from the provider's list" {
		t.Fatalf("disable %+v", d)
	}
	want := []string{
		"bj|Blackjack Classic|table|cg_blackjack|true|BG,PL",
		"caleta-cg_gone|Gone|slots||false|",
		"caleta-cg_liveroulette|Live Roulette|live|cg_liveroulette|true|",
		"caleta-cg_magicforest|Magic Forest|slots|cg_magicforest|true|",
		"caleta-cg_oldbingo|Old Bingo|bingo|cg_oldbingo|false|",
		"caleta-cg_torchoffire|Torch of Fire|slots|cg_torchoffire|true|",
	}
	if got := catalogState(t, pool); !reflect.DeepEqual(got, want) {
		t.Fatalf("catalog after the sync\n got %q\nwant %q", got, want)
	}
	// Launches read what the sync wrote.
	if g, err := gatewaystore.NewGateway(pool).Game(t.Context(), "bj"); err != nil || !g.BlockedIn("PL") || g.BlockedIn("BR") {
		t.Fatalf("game bj %+v, %v", g, err)
	}

	// Caleta changes its list: a rename, a game withdrawn, a game enabled.
	games[0].Name = "Torch of Fire Deluxe"
	games[4].Enabled = true
	sim.SetGames(append(games[:1:1], games[2:]...))
	text := mustCLI("catalog", "sync", "--provider", "caleta")
	for _, line := range []string{
		"catalog of provider caleta (synced): 4 listed; 0 added, 2 updated, 1 disabled, 3 unchanged, 0 kept disabled, 0 skipped",
		`updated   caleta-cg_torchoffire  name "Torch of Fire" -> "Torch of Fire Deluxe"`,
		`updated   caleta-cg_oldbingo  enabled "false" -> "true"`,
		`disabled  caleta-cg_magicforest  missing from the provider's list: enabled "true" -> "false"`,
	} {
		if !strings.Contains(text, line) {
			t.Errorf("the report lacks %q:\n%s", line, text)
		}
	}
	again := cliJSON[catalogSyncReport](t, cfg, "catalog", "sync", "--provider", "caleta")
	if again.Counts != (catalogSyncCounts{Unchanged: 6}) {
		t.Fatalf("a sync of an unchanged list %+v", again.Counts)
	}
	if n, err := countGames(t, pool); err != nil || n != 6 {
		t.Fatalf("%d games, %v: the sync deletes nothing", n, err)
	}

	// What cannot sync changes nothing.
	after := catalogState(t, pool)
	mustCLI("provider", "add", "--id", "acme", "--name", "Acme", "--secret-file", secretFile, "--kind", "json",
		"--endpoint", srv.URL)
	for _, tc := range []struct {
		name string
		args []string
		want string
		code int
	}{
		{"a kind without a game list", []string{"catalog", "sync", "--provider", "acme"}, "no game list", 1},
		{"an unknown provider", []string{"catalog", "sync", "--provider", "nobody"}, "no provider", 1},
		{"no provider", []string{"catalog", "sync"}, "--provider", exitUsage},
		{"an unknown subcommand", []string{"catalog", "pull", "--provider", "caleta"}, "unknown subcommand", exitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := cli(t, cfg, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) || exitStatus(err) != tc.code {
				t.Fatalf("error %v (exit %d), want one naming %q, exit %d\n%s", err, exitStatus(err), tc.want, tc.code, out)
			}
		})
	}
	sim.FailWith(http.StatusBadGateway)
	if _, err := cli(t, cfg, "catalog", "sync", "--provider", "caleta"); err == nil ||
		!strings.Contains(err.Error(), "endpoint 1: status_502") || !strings.Contains(err.Error(), "nothing changed") {
		t.Fatalf("a provider that is down: %v", err)
	}
	sim.FailWith(0)
	sim.SetGames(nil)
	if _, err := cli(t, cfg, "catalog", "sync", "--provider", "caleta"); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("an empty list: %v", err)
	}
	if got := catalogState(t, pool); !reflect.DeepEqual(got, after) {
		t.Fatalf("a failed sync wrote:\n%q\nwas\n%q", got, after)
	}
}

func countGames(t *testing.T, pool *pgxpool.Pool) (int, error) {
	var n int
	err := pool.QueryRow(t.Context(), `SELECT count(*) FROM games`).Scan(&n)
	return n, err
}
