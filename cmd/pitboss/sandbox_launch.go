package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/secretbox"
	"github.com/pitboss/pitboss/gateway"
)

// sandboxLaunch gives the sandbox client what the signed launch needs: a
// client secret (kept sealed in the database; printed on every run, as the
// sandbox key is) and launch settings: return_url may point at localhost,
// EUR is the default currency, and the signature stays optional (the
// sandbox default).
func sandboxLaunch(ctx context.Context, box *secretbox.Box, pool *pgxpool.Pool) (string, error) {
	lc, err := gatewaystore.NewLaunchClients(pool, box)
	if err != nil {
		return "", err
	}
	secret, _, err := lc.EnsureClientSecret(ctx, sandboxClient)
	if errors.Is(err, secretbox.ErrWrongKey) || errors.Is(err, secretbox.ErrMalformed) {
		// The master key changed (key file deleted, database kept): the
		// old secret cannot be opened, so the sandbox gets a new one.
		secret, err = lc.IssueClientSecret(ctx, sandboxClient)
	}
	if err != nil {
		return "", err
	}
	err = lc.SetLaunchSettings(ctx, sandboxClient, gateway.LaunchSettings{
		AllowedReturnHosts: []string{"localhost", "127.0.0.1"}, DefaultCurrency: "EUR"})
	return secret, err
}

func printSandboxLaunch(out io.Writer, clientSecret string) {
	fmt.Fprintf(out, `
  # signed launch (GET /v1/launch): sig = HMAC-SHA256 of api_key|user_id|game_uid|balance|ts with the client secret
  export CLIENT_SECRET=%s
  TS=$(date +%%s)
  SIG=$(printf '%%s' "$KEY|player-1|demo-slot|100.00|$TS" | openssl dgst -sha256 -hmac "$CLIENT_SECRET" | sed 's/^.* //')
  curl -s "$PB/v1/launch?api_key=$KEY&user_id=player-1&game_uid=demo-slot&balance=100.00&ts=$TS&sig=$SIG&currency_code=EUR&return_url=http://localhost/"
  # the same URL with &redirect=1 answers 302 to the game; the game sends the player to $PB/v1/return?session=<id>
`, clientSecret)
}
