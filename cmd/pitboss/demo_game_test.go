package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// TestServeMountsTheDemoGame: serve mounts the demo game on its API
// server, and a spin goes through the provider wallet at
// PITBOSS_DEMO_WALLET_URL.
func TestServeMountsTheDemoGame(t *testing.T) {
	t.Parallel()
	cfg, pool := testConfig(t)
	cfg.DemoWalletURL = loopbackURL(cfg.HTTPAddr) // testConfig moved the listener after loadConfig
	srv := startServe(t, cfg, "api")
	_, key := newKey(t, pool)
	gw := gatewaystore.NewGateway(pool)
	if err := gw.UpsertProvider(t.Context(), gateway.Provider{ID: "demo", Name: "Demo", Secret: "s-" + randomHex(8), Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if err := gw.SetProviderRoute(t.Context(), gateway.ProviderRoute{ProviderID: "demo", Kind: gateway.ProviderKindDemo,
		Balancing: gateway.BalancingPriority, Timeout: 5 * time.Second, BreakerFailures: 2, BreakerCooldown: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if err := gw.UpsertGame(t.Context(), gateway.Game{ID: "demo-slot", ProviderID: "demo", Name: "Demo Slot", Category: "slots",
		Enabled: true}); err != nil {
		t.Fatal(err)
	}
	call := func(method, path, key, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, b := call(http.MethodPost, "/api/v1/transactions", key, depositBody("dep-demo", "p1")); st != http.StatusOK {
		t.Fatalf("deposit: %d %s", st, b)
	}
	st, b := call(http.MethodPost, "/api/v1/game/launch", key,
		`{"provider":"demo","game_id":"demo-slot","player_id":"p1","currency":"EUR"}`)
	var launch struct {
		Data struct {
			SessionID string `json:"session_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(b), &launch); err != nil || st != http.StatusOK {
		t.Fatalf("launch: %d %s", st, b)
	}
	if st, b := call(http.MethodGet, "/demo/assets/slot.js", "", ""); st != http.StatusOK || b == "" {
		t.Fatalf("demo asset: %d", st)
	}
	st, b = call(http.MethodPost, "/demo/spin", "", `{"session":"`+launch.Data.SessionID+`","stake":"0.10"}`)
	var spin struct {
		Success bool `json:"success"`
		Data    struct {
			Stake            string `json:"stake"`
			BetTransactionID string `json:"bet_transaction_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(b), &spin); err != nil || st != http.StatusOK || !spin.Success || spin.Data.Stake != "0.10" {
		t.Fatalf("spin: %d %s", st, b)
	}
	var bets int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM events WHERE event_type = $1
		AND body->'data'->>'external_tx_id' = $2`, string(domain.EventBetPlaced), spin.Data.BetTransactionID).Scan(&bets); err != nil || bets != 1 {
		t.Fatalf("%d bet events of %s (%v), want 1", bets, spin.Data.BetTransactionID, err)
	}
}
