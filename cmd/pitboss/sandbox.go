package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/gateway"
)

const (
	sandboxClient = "sandbox"
	demoProvider  = "demo"
	demoGame      = "demo-slot"
)

// sandbox makes sure the sandbox client, an API key for it and the built-in
// demo provider exist, then prints how to call the service. The key is kept
// in the data folder (mode 0600) so a second `make run` can print it again:
// the database only holds its hash.
func sandbox(ctx context.Context, cfg config, args []string, out, stderr io.Writer) error {
	if err := parseFlags(flag.NewFlagSet("sandbox", flag.ContinueOnError), args, out, stderr); err != nil {
		return err
	}
	pool, err := openDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	box, err := cfg.secretBox(cfg.logger())
	if err != nil {
		return err
	}
	gw := gatewaystore.NewGateway(pool).WithSecretBox(box)
	if _, err := gw.CreateClient(ctx, sandboxClient, "Sandbox operator", "sandbox"); err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("data folder: %w", err)
	}
	keyFile := filepath.Join(cfg.DataDir, "sandbox.key")
	key, err := readSecret(keyFile)
	if err == nil {
		if _, aerr := gw.AuthenticateKey(ctx, gateway.HashKey(key)); aerr != nil {
			err = aerr // the file is stale (database was reset): issue a new key
		}
	}
	if err != nil {
		if key, _, err = gw.IssueKey(ctx, sandboxClient, gateway.AllScopes, nil); err != nil {
			return err
		}
		if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o600); err != nil {
			return fmt.Errorf("save sandbox key: %w", err)
		}
	}
	secretFile := filepath.Join(cfg.DataDir, "demo-provider.secret")
	secret, err := readSecret(secretFile)
	if err != nil {
		b := make([]byte, 24)
		_, _ = rand.Read(b)
		secret = hex.EncodeToString(b)
		if err := os.WriteFile(secretFile, []byte(secret+"\n"), 0o600); err != nil {
			return fmt.Errorf("save demo provider secret: %w", err)
		}
	}
	// The demo provider is the built-in game, which signs v2: it is put on
	// v2 even where it was created on v1 before migration 00012.
	if err := gw.UpsertProvider(ctx, gateway.Provider{ID: demoProvider, Name: "Pitboss Demo Games", Secret: secret, Enabled: true,
		SignatureScheme: gateway.SignatureV2}); err != nil {
		return err
	}
	if err := gw.UpsertGame(ctx, gateway.Game{ID: demoGame, ProviderID: demoProvider, Name: "Demo Slot", Category: "slots", Enabled: true}); err != nil {
		return err
	}
	// The demo provider is the built-in game: its game_url is our own
	// /demo/play page (docs/providers-and-games.md).
	if err := gw.SetProviderRoute(ctx, gateway.ProviderRoute{ProviderID: demoProvider, Kind: gateway.ProviderKindDemo,
		Balancing: gateway.BalancingPriority, Timeout: gateway.DefaultProviderTimeout, BreakerFailures: gateway.DefaultBreakerFailures,
		BreakerCooldown: gateway.DefaultBreakerCooldown}); err != nil {
		return err
	}
	clientSecret, err := sandboxLaunch(ctx, box, pool)
	if err != nil {
		return err
	}
	base := cfg.PublicURL
	fmt.Fprintf(out, `
Pitboss sandbox is ready.

  API key (client %q, all scopes):  %s
  demo provider secret:              %s   (saved in %s and %s)

Try it (copy and paste):

  export PB=%s KEY=%s SECRET=%s
  # fund a player's wallet
  curl -s -X POST $PB/api/v1/transactions -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
    -d '{"type":"deposit","transaction_id":"dep-1","player_id":"player-1","amount":"100.00","currency":"EUR"}'
  # launch the demo game; note session_id
  SESSION=$(curl -s -X POST $PB/api/v1/game/launch -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
    -d '{"provider":"demo","game_id":"demo-slot","player_id":"player-1","currency":"EUR"}' | sed 's/.*"session_id":"\([^"]*\)".*/\1/')
  # place a bet as the provider would (HMAC-SHA256 of "<t>.POST.<path>.<body>", t within 120 s)
  BODY='{"session_id":"'$SESSION'","transaction_id":"bet-1","round_id":"round-1","amount":"2.50"}' TS=$(date +%%s)
  curl -s -X POST $PB/provider/v1/wallet/bet -H 'X-Provider-Id: demo' -H 'Content-Type: application/json' \
    -H "X-Signature: t=$TS,v2=$(printf '%%s' "$TS.POST./provider/v1/wallet/bet.$BODY" | openssl dgst -sha256 -hmac "$SECRET" | sed 's/^.* //')" -d "$BODY"
  # or play the demo slot in a browser: open the game_url this prints
  curl -s "$PB/api/v1/game/launch?provider=demo&game_id=demo-slot&player_id=player-1&currency=EUR" -H "Authorization: Bearer $KEY"
  # the balance, and the events on Kafka
  curl -s "$PB/api/v1/wallet/balance?player_id=player-1" -H "Authorization: Bearer $KEY"
  kcat -b %s -t %s -C -e -f 'key=%%k  %%s\n'
`, sandboxClient, key, secret, keyFile, secretFile, base, key, secret, strings.Join(cfg.KafkaBrokers, ","), cfg.Topic)
	printSandboxLaunch(out, clientSecret)
	if err := printSandboxAdmin(out, cfg); err != nil {
		return err
	}
	printSandboxReceiver(out, os.Args[0], cfg.Delivery.PrivateTargets)
	return nil
}

func readSecret(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fs.ErrNotExist
	}
	return s, nil
}
