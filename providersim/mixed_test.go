package providersim_test

import (
	"context"
	"crypto/rsa"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/internal/eventually"
	"github.com/pitboss/pitboss/providersim"
)

// TestMixedRunVerifiesAndForwards is issue 16's "done when" on one
// server: a session of each of the four protocols, one client, then the
// client's forwarded callbacks hold every call each session booked — the
// dialects' calls exactly like our own protocol's, the same payload with
// the same kinds — and `pitboss verify` (the hash chain, double entry, the
// account folds and the read models rebuilt from the events) holds over
// the mixed ledger.
func TestMixedRunVerifiesAndForwards(t *testing.T) {
	t.Parallel()
	var (
		mu       sync.Mutex
		received []callback
	)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var c callback
		if err := json.Unmarshal(b, &c); err != nil {
			t.Errorf("a callback that is not JSON: %s", b)
		}
		mu.Lock()
		received = append(received, c)
		mu.Unlock()
	}))
	t.Cleanup(rcv.Close)

	h := apitest.New(t, apitest.Options{DeliveryWorker: true, AllowPrivateCallbacks: true})
	c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch, gateway.ScopeTransactionsRead, gateway.ScopeWalletRead},
		gateway.LaunchSettings{DefaultCurrency: "EUR"})
	if err := h.Deliveries.SetForwardCallbackURL(t.Context(), c.ID, rcv.URL+"/cb"); err != nil {
		t.Fatal(err)
	}

	booked := map[string][]string{} // by protocol
	for _, protocol := range providersim.Protocols {
		provider, game := apitest.UID(protocol), apitest.UID("game")
		p := gateway.Provider{ID: provider, Name: protocol, Secret: "secret-" + apitest.UID("s"), Enabled: true, WalletProtocol: protocol}
		var key *rsa.PrivateKey
		if protocol == gateway.WalletProtocolCaleta {
			key, p.WalletPublicKey = rsaKey(t)
		}
		if err := h.Gateway.UpsertProvider(t.Context(), p); err != nil {
			t.Fatal(err)
		}
		h.AddGame(game, provider, protocol+" slot", "slots", true)
		rep, err := providersim.Run(t.Context(), providersim.Config{Protocol: protocol, BaseURL: h.URL, Provider: provider,
			Game: game, APIKey: c.Key, ClientSecret: c.Secret, Player: apitest.UID("player"), Currency: "EUR", Balance: "100.00",
			Spins: 5, Seed: 7, Secret: p.Secret, PrivateKey: key})
		if err != nil {
			t.Fatalf("%s: %v", protocol, err)
		}
		if len(rep.Deviations) != 0 {
			t.Fatalf("%s: %d deviations: %v", protocol, len(rep.Deviations), rep.Deviations)
		}
		booked[protocol] = rep.Booked
	}

	h.Pump() // the read models and the forwarder's enqueueing, as the projectors and the forwarder would
	head := h.Head()
	// Wait until every booked call's callback has arrived (each is
	// delivered on its own; the count alone could be reached by callbacks
	// of other events while a booked one is still on its way).
	byExternal := map[string]callback{}
	eventually.True(t, time.Minute, "a forwarded callback of every booked call", func() bool {
		mu.Lock()
		for _, c := range received {
			byExternal[c.ExternalTxID] = c
		}
		mu.Unlock()
		for _, ids := range booked {
			for _, id := range ids {
				if _, ok := byExternal[id]; !ok {
					return false
				}
			}
		}
		return true
	})
	kinds := map[string][]string{}
	for protocol, ids := range booked {
		for _, id := range ids {
			cb, ok := byExternal[id]
			if !ok {
				t.Errorf("%s: booked %s has no forwarded callback", protocol, id)
				continue
			}
			if cb.TransactionID == "" || cb.EventID != cb.TransactionID || cb.MemberAccount == "" || cb.Provider == "" {
				t.Errorf("%s: callback of %s lacks what a native one carries: %+v", protocol, id, cb)
			}
			if !slices.Contains(kinds[protocol], cb.Kind) {
				kinds[protocol] = append(kinds[protocol], cb.Kind)
			}
		}
		slices.Sort(kinds[protocol])
	}
	for _, protocol := range providersim.Protocols {
		for _, k := range []string{"bet", "win"} {
			if !slices.Contains(kinds[protocol], k) {
				t.Errorf("%s: no %s callback among kinds %v", protocol, k, kinds[protocol])
			}
		}
	}

	rep, err := h.Audit.Verify(context.Background(), auditstore.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK {
		t.Fatalf("verify after the mixed run (head %d): %+v", head, rep)
	}
}

// callback is the forwarded callback's fields the test reads.
type callback struct {
	MemberAccount string `json:"member_account"`
	TransactionID string `json:"transaction_id"`
	ExternalTxID  string `json:"external_transaction_id"`
	Provider      string `json:"provider"`
	EventID       string `json:"event_id"`
	Kind          string `json:"kind"`
}
