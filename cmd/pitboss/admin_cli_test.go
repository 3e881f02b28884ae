package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/gateway"
)

// cli runs a client or key command and returns its output.
func cli(t *testing.T, cfg config, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	var err error
	switch args[0] {
	case "client":
		err = clientCommand(t.Context(), cfg, args[1:], &out)
	case "key":
		err = keyCommand(t.Context(), cfg, args[1:], &out)
	case "provider":
		if len(args) > 1 && args[1] == "add" {
			err = providerAdd(t.Context(), cfg, args[2:], &out)
			break
		}
		err = providerCommand(t.Context(), cfg, args[1:], &out)
	case "game":
		err = gameCommand(t.Context(), cfg, args[1:], &out)
	case "catalog":
		err = catalogCommand(t.Context(), cfg, args[1:], &out)
	case "deal":
		err = dealCommand(t.Context(), cfg, args[1:], &out)
	default:
		t.Fatalf("unknown command %s", args[0])
	}
	return out.String(), err
}

func cliJSON[T any](t *testing.T, cfg config, args ...string) T {
	t.Helper()
	out, err := cli(t, cfg, append(args, "--json")...)
	if err != nil {
		t.Fatalf("pitboss %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	var v T
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("pitboss %s: output %q: %v", strings.Join(args, " "), out, err)
	}
	return v
}

// TestClientAndKeyCommands: `pitboss client` and `pitboss key` on the
// database, and a key they issue authenticating against it.
func TestClientAndKeyCommands(t *testing.T) {
	t.Parallel()
	cfg, pool := testConfig(t)
	gw := gatewaystore.NewGateway(pool)

	c := cliJSON[cliClient](t, cfg, "client", "create", "--id", "acme", "--name", "Acme", "--environment", "production", "--plan", "enterprise")
	if c.ID != "acme" || c.Environment != "production" || c.Plan != "enterprise" || c.Created == nil || !*c.Created {
		t.Fatalf("created %+v", c)
	}
	if again := cliJSON[cliClient](t, cfg, "client", "create", "--id", "acme", "--name", "Acme", "--environment", "production",
		"--plan", "enterprise"); *again.Created {
		t.Fatal("creating the same client twice made it twice")
	}
	list := cliJSON[struct {
		Clients []cliClient `json:"clients"`
		Total   int         `json:"total"`
	}](t, cfg, "client", "list")
	if list.Total != 1 || list.Clients[0].ID != "acme" {
		t.Fatalf("list %+v", list)
	}
	set := cliJSON[cliClient](t, cfg, "client", "set", "--id", "acme", "--plan", "standard", "--name", "Acme Ltd",
		"--require-signature", "false", "--ip-allow-list", "203.0.113.0/24, 198.51.100.7", "--forward-callback-url",
		"https://acme.example.com/cb", "--default-currency", "usd")
	if set.Plan != "standard" || set.Name != "Acme Ltd" {
		t.Fatalf("set %+v", set)
	}
	var (
		requireSig *bool
		allow      []string
		callback   string
		currency   string
	)
	if err := pool.QueryRow(t.Context(), `SELECT require_signature, ip_allow_list::text[], forward_callback_url, default_currency
		FROM clients WHERE id = 'acme'`).Scan(&requireSig, &allow, &callback, &currency); err != nil {
		t.Fatal(err)
	}
	if requireSig == nil || *requireSig || strings.Join(allow, ",") != "203.0.113.0/24,198.51.100.7/32" ||
		callback != "https://acme.example.com/cb" || currency != "USD" {
		t.Fatalf("stored settings %v %v %q %q", requireSig, allow, callback, currency)
	}

	issued := cliJSON[cliKey](t, cfg, "key", "issue", "--client", "acme", "--scopes", "launch,wallet:read", "--label", "backend",
		"--expires-in", "720h")
	if !strings.HasPrefix(issued.Key, "pb_live_"+issued.ID+"_") || issued.Label != "backend" || issued.ExpiresAt == nil ||
		len(issued.Scopes) != 2 {
		t.Fatalf("issued %+v", issued)
	}
	if p, err := gw.AuthenticateKey(t.Context(), gateway.HashKey(issued.Key)); err != nil || p.ClientID != "acme" || p.Plan != "standard" {
		t.Fatalf("the issued key does not authenticate: %+v %v", p, err)
	}
	text, err := cli(t, cfg, "key", "issue", "--client", "acme", "--scopes", "all")
	if err != nil || !strings.Contains(text, "pb_live_") || !strings.Contains(text, "shown only now") {
		t.Fatalf("issue (text): %v\n%s", err, text)
	}

	rotated := cliJSON[cliKey](t, cfg, "key", "rotate", "--client", "acme", "--key", issued.ID, "--grace", "1h")
	if rotated.ID == issued.ID || rotated.Key == "" || rotated.Label != "backend" {
		t.Fatalf("rotated %+v", rotated)
	}
	keys := cliJSON[[]cliKey](t, cfg, "key", "list", "--client", "acme")
	if len(keys) != 3 {
		t.Fatalf("list %+v", keys)
	}
	for _, k := range keys {
		if k.Key != "" {
			t.Fatalf("list shows a key: %+v", k)
		}
		if k.ID == issued.ID {
			if k.ReplacedBy != rotated.ID || k.ExpiresAt == nil || time.Until(*k.ExpiresAt) > time.Hour+time.Minute {
				t.Fatalf("rotated-out key %+v", k)
			}
		}
	}
	revoked := cliJSON[cliKey](t, cfg, "key", "revoke", "--client", "acme", "--key", rotated.ID)
	if revoked.Status != "revoked" {
		t.Fatalf("revoked %+v", revoked)
	}
	if _, err := gw.AuthenticateKey(t.Context(), gateway.HashKey(rotated.Key)); err == nil {
		t.Fatal("a revoked key authenticates")
	}

	failures := []struct {
		args []string
		want string
	}{
		{[]string{"client", "create", "--id", "x", "--name", "X", "--plan", "gold"}, "not a configured tier"},
		{[]string{"client", "create", "--id", "x", "--name", "X", "--environment", "staging"}, "sandbox or production"},
		{[]string{"client", "create", "--id", "acme", "--name", "Other", "--environment", "production", "--plan", "standard"}, "already exists"},
		{[]string{"client", "set", "--id", "acme", "--environment", "sandbox"}, "cannot change"},
		{[]string{"client", "set", "--id", "acme", "--require-signature", "maybe"}, "true, false or default"},
		{[]string{"client", "set", "--id", "acme", "--ip-allow-list", "nope"}, "not a CIDR"},
		{[]string{"client", "set", "--id", "nobody", "--plan", "standard"}, "not found"},
		{[]string{"client", "bogus"}, "unknown subcommand"},
		{[]string{"key", "issue", "--client", "acme", "--scopes", "everything"}, "unknown scope"},
		{[]string{"key", "issue", "--client", "acme"}, "at least one scope"},
		{[]string{"key", "issue", "--client", "acme", "--scopes", "launch", "--expires-at", "2001-01-01T00:00:00Z"}, "in the future"},
		{[]string{"key", "issue", "--client", "nobody", "--scopes", "launch"}, "not found"},
		{[]string{"key", "rotate", "--client", "acme", "--key", issued.ID}, "already rotated"},
		{[]string{"key", "rotate", "--client", "acme", "--key", rotated.ID}, "revoked or expired"},
		{[]string{"key", "rotate", "--client", "acme", "--key", "000000000000", "--grace", "1000h"}, "--grace"},
		{[]string{"key", "revoke", "--client", "acme", "--key", "000000000000"}, "not found"},
		{[]string{"key", "list", "--client", "nobody"}, "not found"},
	}
	for _, f := range failures {
		t.Run(strings.Join(f.args, " "), func(t *testing.T) {
			out, err := cli(t, cfg, f.args...)
			if err == nil || !strings.Contains(err.Error(), f.want) {
				t.Fatalf("error %v, want one saying %q\n%s", err, f.want, out)
			}
		})
	}
}

// TestClientSetCallbackURLByEnvironment: `client set --forward-callback-url`
// checks the URL by the client's environment, as the admin API does: under
// PITBOSS_PRIVATE_CALLBACKS=sandbox a sandbox client may name a receiver on
// loopback, a production client may not, and no client the metadata
// address.
func TestClientSetCallbackURLByEnvironment(t *testing.T) {
	t.Parallel()
	cfg, pool := testConfig(t)
	cfg.Delivery.PrivateTargets = gateway.PrivateTargetsSandbox
	cliJSON[cliClient](t, cfg, "client", "create", "--id", "sbx", "--name", "Sandbox", "--environment", "sandbox")
	cliJSON[cliClient](t, cfg, "client", "create", "--id", "prod", "--name", "Production", "--environment", "production")
	const receiver = "http://127.0.0.1:9999/callback"

	cliJSON[cliClient](t, cfg, "client", "set", "--id", "sbx", "--forward-callback-url", receiver)
	for id, url := range map[string]string{"prod": receiver, "sbx": "http://169.254.169.254/latest"} {
		if out, err := cli(t, cfg, "client", "set", "--id", id, "--forward-callback-url", url); err == nil ||
			!strings.HasPrefix(err.Error(), "--forward-callback-url points at ") {
			t.Errorf("%s to %s: %v, want a refusal\n%s", id, url, err, out)
		}
	}
	urls := map[string]string{}
	rows, _ := pool.Query(t.Context(), `SELECT id, forward_callback_url FROM clients`)
	for rows.Next() {
		var id, url string
		if err := rows.Scan(&id, &url); err != nil {
			t.Fatal(err)
		}
		urls[id] = url
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if urls["sbx"] != receiver || urls["prod"] != "" {
		t.Fatalf("callback URLs %v, want only the sandbox client's set", urls)
	}
}

// TestClientNameRuleInTheCLI: the CLI holds a client's name to the admin
// API's rule (gateway.CheckClientName): one line, no control characters,
// at most 200 characters; nothing is stored when it is broken.
func TestClientNameRuleInTheCLI(t *testing.T) {
	t.Parallel()
	cfg, _ := testConfig(t)
	cliJSON[cliClient](t, cfg, "client", "create", "--id", "acme", "--name", "Acme")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"create with a line feed", []string{"client", "create", "--id", "beta", "--name", "Beta\nCasino"},
			"name must not contain control characters or line breaks (U+000A at character 5)"},
		{"create with an escape sequence", []string{"client", "create", "--id", "beta", "--name", "\x1b[2JBeta"},
			"name must not contain control characters or line breaks (U+001B at character 1)"},
		{"create with 201 characters", []string{"client", "create", "--id", "beta", "--name", strings.Repeat("b", 201)},
			"name must be at most 200 characters (it has 201)"},
		{"rename with a line separator", []string{"client", "set", "--id", "acme", "--name", "Acme\u2028Ltd"},
			"name must not contain control characters or line breaks (U+2028 at character 5)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := cli(t, cfg, tc.args...); err == nil || err.Error() != tc.want {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	list := cliJSON[struct {
		Clients []cliClient `json:"clients"`
	}](t, cfg, "client", "list")
	if len(list.Clients) != 1 || list.Clients[0].Name != "Acme" {
		t.Fatalf("clients %+v, want only acme named Acme", list.Clients)
	}
}
