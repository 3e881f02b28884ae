package demogame_test

import (
	"net/http"
	"testing"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// The demo game's tests run on the api tests' harness (api/apitest) with
// the game mounted as cmd/pitboss mounts it: the real server on a fresh
// database, on a loopback port the game calls the provider wallet over
// (through the harness's recording proxy, Harness.WalletCalls). What is
// here is the demo game's own: its provider and game in the catalog and a
// funded, launched session.

var eur = domain.MustCurrency("EUR")

// demoFixture is the server with the demo game mounted (o with Loopback
// and DemoGame set), the demo provider ("demo", its wallet secret
// apitest.ProviderSecret("demo")) and its game "demo-slot", a client
// whose key holds launch, transactions:write and scopes, and a launched
// session for player p1 whose EUR wallet holds funds.
func demoFixture(t *testing.T, o apitest.Options, funds string, scopes ...string) (*apitest.Harness, apitest.Client, apitest.Launch) {
	t.Helper()
	o.Loopback, o.DemoGame = true, true
	h := apitest.New(t, o)
	h.AddProvider("demo", "Pitboss Demo Games", gateway.ProviderKindDemo)
	h.AddGame("demo-slot", "demo", "Demo Slot", "slots", true)
	c := h.NewClient(append([]string{gateway.ScopeLaunch, gateway.ScopeTransactionsWrite}, scopes...)...)
	h.Deposit(c, "p1", funds, "EUR")
	l := apitest.Data[apitest.Launch](t, h.Call(http.MethodPost, "/api/v1/game/launch", c.Key,
		apitest.LaunchBody("demo", "demo-slot", "p1", "EUR")))
	return h, c, l
}
