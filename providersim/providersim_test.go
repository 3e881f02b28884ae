package providersim_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"slices"
	"testing"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/providersim"
)

// TestSimulatorConforms runs the simulator, as the provider, against the
// real API server on loopback (real Postgres, the relay and projectors on
// real Kafka) with a provider on each protocol: zero deviations, and what
// it booked is in the client's transaction history and balance.
func TestSimulatorConforms(t *testing.T) {
	for _, protocol := range providersim.Protocols {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			h := apitest.New(t, apitest.Options{ReadModels: true})
			provider, game, player := apitest.UID("prov"), apitest.UID("game"), apitest.UID("player")
			p := gateway.Provider{ID: provider, Name: "Simulated " + protocol, Secret: "secret-" + apitest.UID("s"), Enabled: true,
				WalletProtocol: protocol}
			var key *rsa.PrivateKey
			if protocol == gateway.WalletProtocolCaleta {
				key, p.WalletPublicKey = rsaKey(t)
			}
			if err := h.Gateway.UpsertProvider(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			h.AddGame(game, provider, "Simulated slot", "slots", true)
			c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch, gateway.ScopeTransactionsRead, gateway.ScopeWalletRead},
				gateway.LaunchSettings{DefaultCurrency: "EUR"})

			var out bytes.Buffer
			rep, err := providersim.Run(context.Background(), providersim.Config{Protocol: protocol, BaseURL: h.URL,
				Provider: provider, Game: game, APIKey: c.Key, ClientSecret: c.Secret, Player: player, Currency: "EUR",
				Balance: "100.00", Spins: 8, Seed: 42, Secret: p.Secret, PrivateKey: key, Out: &out})
			t.Logf("simulator output:\n%s", out.String())
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Deviations) != 0 {
				t.Fatalf("%d deviations: %v", len(rep.Deviations), rep.Deviations)
			}
			if len(rep.Booked) < 2*8 {
				t.Fatalf("booked %d calls, want at least the 8 spins' bets and wins: %v", len(rep.Booked), rep.Booked)
			}

			h.WaitHistory(c.Key, h.Head())
			rec := h.Get("/api/v1/transactions?per_page=500&player_id="+player, c.Key)
			if rec.Code != http.StatusOK {
				t.Fatalf("history: %d %s", rec.Code, rec.Body)
			}
			var list struct {
				Data []struct {
					ExternalID *string `json:"external_id"`
					Provider   *string `json:"provider"`
					Game       *string `json:"game"`
				} `json:"data"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
				t.Fatal(err)
			}
			var seen []string
			for _, x := range list.Data {
				if x.ExternalID == nil {
					continue
				}
				seen = append(seen, *x.ExternalID)
				if x.Provider == nil || *x.Provider != provider || x.Game == nil || *x.Game != game {
					t.Errorf("history entry %s: provider %v game %v, want %s %s", *x.ExternalID, x.Provider, x.Game, provider, game)
				}
			}
			for _, id := range rep.Booked {
				if !slices.Contains(seen, id) {
					t.Errorf("booked %s is not in the client's history %v", id, seen)
				}
			}
			rec = h.Get("/api/v1/wallet/balance?player_id="+player, c.Key)
			var bal struct {
				Data struct {
					Balances []struct {
						Currency string      `json:"currency"`
						Balance  json.Number `json:"balance"`
					} `json:"balances"`
				} `json:"data"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &bal); err != nil || len(bal.Data.Balances) != 1 {
				t.Fatalf("balance: %d %s", rec.Code, rec.Body)
			}
			if got := bal.Data.Balances[0]; got.Currency != "EUR" || got.Balance.String() != rep.Final.String() {
				t.Fatalf("balance %s %s, the simulator expects %s EUR (started at %s)", got.Balance, got.Currency, rep.Final, rep.Start)
			}
			if rep.Final.String() == rep.Start.String() {
				t.Fatalf("the balance did not move from %s: the run booked nothing that counts", rep.Start)
			}
		})
	}
}

func rsaKey(t *testing.T) (*rsa.PrivateKey, string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return k, string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}
