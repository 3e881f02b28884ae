package providersim_test

import (
	"bytes"
	"context"
	"crypto/rsa"
	"net/http/httptest"
	"testing"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/operatorsim"
	"github.com/pitboss/pitboss/providersim"
)

// TestSimulatorAgainstASeamlessClient runs the provider simulator, in
// every provider protocol, against a seamless client whose own wallet is
// the operator simulator (valkyrie-pam): zero deviations, and the
// operator's balance, the ledger's mirror of it and the simulator's
// expectation are one amount.
func TestSimulatorAgainstASeamlessClient(t *testing.T) {
	for _, opProtocol := range gateway.OperatorProtocols {
		for _, protocol := range providersim.Protocols {
			t.Run(opProtocol+"/"+protocol, func(t *testing.T) {
				t.Parallel()
				seamlessRun(t, opProtocol, protocol)
			})
		}
	}
}

// seamlessRun is one provider simulator run in protocol against a
// seamless client whose wallet speaks opProtocol.
func seamlessRun(t *testing.T, opProtocol, protocol string) {
	h := apitest.New(t, apitest.Options{AllowPrivateCallbacks: true})
	const credential = "credential-for-the-provider-simulator"
	sim, err := operatorsim.New(operatorsim.Config{Protocol: opProtocol, APIToken: credential, Secret: credential,
		StatePath: t.TempDir() + "/sim.json"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	walletURL := srv.URL
	if opProtocol == gateway.OperatorProtocolTBB {
		walletURL += "/operator/wallet" // its one endpoint
	}

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
	c := h.NewClient(gateway.ScopeLaunch, gateway.ScopeTransactionsRead)
	if err := h.Operators.SetClientWallet(context.Background(), c.ID, gateway.ClientWallet{Mode: gateway.WalletModeSeamless,
		URL: walletURL, Protocol: opProtocol, Credential: credential}); err != nil {
		t.Fatal(err)
	}
	token, err := sim.AddPlayer(player, "EUR", "100.00")
	if err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	rep, err := providersim.Run(context.Background(), providersim.Config{Protocol: protocol, BaseURL: h.URL,
		Provider: provider, Game: game, APIKey: c.Key, SessionToken: token, Player: player, Currency: "EUR",
		Balance: "100.00", Spins: 8, Seed: 42, Secret: p.Secret, PrivateKey: key, Out: &out})
	t.Logf("simulator output:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Deviations) != 0 {
		for _, x := range sim.Transactions() {
			t.Logf("the operator booked %s %s: moved %+v", x.Type, x.ProviderTxID, x.Moved)
		}
		t.Fatalf("%d deviations: %v", len(rep.Deviations), rep.Deviations)
	}
	if rep.Final.String() == rep.Start.String() {
		t.Fatalf("the balance did not move from %s", rep.Start)
	}
	op, err := sim.Balance(player, "EUR")
	if err != nil {
		t.Fatal(err)
	}
	mirror := domain.FromMinor(h.Balance(domain.PlayerWallet(c.ID, player, domain.MustCurrency("EUR"))),
		domain.MustCurrency("EUR"))
	if op.String() != rep.Final.String() || mirror.String() != rep.Final.String() {
		t.Fatalf("the operator holds %s, the ledger's mirror %s, the simulator expects %s", op, mirror, rep.Final)
	}
}
