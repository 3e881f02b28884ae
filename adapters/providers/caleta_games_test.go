package providers_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/providersim"
)

// gamesAPI is the simulator's Caleta game list on loopback, serving
// operator op-77 whose launch key is testLaunchKey.
func gamesAPI(t *testing.T, games []providersim.CaletaGame) (*providersim.CaletaGamesAPI, *httptest.Server) {
	t.Helper()
	api := providersim.NewCaletaGamesAPI("op-77", &testLaunchKey().PublicKey, games)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return api, srv
}

// TestCaletaGameList: the registry reads Caleta's game list from a real
// server that verifies our signature, mapping each game to ours (code,
// name, category, enabled, blocked countries).
func TestCaletaGameList(t *testing.T) {
	t.Parallel()
	sample := providersim.CaletaSampleGames()
	sample = append(sample, providersim.CaletaGame{Name: "Crash X", GameCode: "cg_crash", Enabled: true, Category: "Crash Games!",
		BlockedCountries: []string{"US"}})
	api, srv := gamesAPI(t, sample)
	games, err := newRegistry(t).ProviderGames(context.Background(), kindRoute("caleta", gateway.ProviderKindCaleta, srv.URL+"/"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range games {
		got = append(got, fmt.Sprintf("%s|%s|%s|%v|%s", g.Code, g.Name, g.Category, g.Enabled, strings.Join(g.BlockedCountries, ",")))
	}
	want := []string{
		"cg_torchoffire|Torch of Fire|slots|true|",
		"cg_magicforest|Magic Forest|slots|true|",
		"cg_liveroulette|Live Roulette|live|true|",
		"cg_blackjack|Blackjack Classic|table|true|PL,BG",
		"cg_oldbingo|Old Bingo|bingo|false|",
		"cg_crash|Crash X|crash-games|true|US",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("games\n got %q\nwant %q", got, want)
	}
	if calls, refused := api.Calls(); calls != 1 || refused != 0 {
		t.Fatalf("%d calls, %d refused: the signature or operator was not what Caleta checks", calls, refused)
	}
}

// TestCaletaGameListFailures: a refusal is the provider's answer (no
// failover); a failing endpoint is skipped for the next, and opens its
// breaker, which launches then skip too; a kind without a list is said
// without a call.
func TestCaletaGameListFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// Another operator: Caleta's 404 {"error"} is a refusal.
	api, srv := gamesAPI(t, providersim.CaletaSampleGames())
	rt := kindRoute("caleta-r", gateway.ProviderKindCaleta, srv.URL)
	rt.LaunchOperatorID = "op-other"
	_, err := newRegistry(t).ProviderGames(ctx, rt)
	var rejected *gateway.ProviderRejectedError
	if !errors.As(err, &rejected) || rejected.Status != http.StatusNotFound || !strings.Contains(rejected.Message, "operator_id") {
		t.Fatalf("another operator: %v", err)
	}
	if _, refused := api.Calls(); refused != 1 {
		t.Fatalf("refused %d", refused)
	}

	// Failover: endpoint 1 answers 503, endpoint 2 serves.
	down, downSrv := gamesAPI(t, nil)
	down.FailWith(http.StatusServiceUnavailable)
	_, upSrv := gamesAPI(t, providersim.CaletaSampleGames())
	clock := newStoppedClock()
	reg := newRegistryOn(t, clock.Now)
	rt = kindRoute("caleta-f", gateway.ProviderKindCaleta, downSrv.URL, upSrv.URL)
	for i := range 2 { // breaker_failures is 2
		games, err := reg.ProviderGames(ctx, rt)
		if err != nil || len(games) != 5 {
			t.Fatalf("sync %d through the second endpoint: %d games, %v", i+1, len(games), err)
		}
	}
	if calls, _ := down.Calls(); calls != 2 {
		t.Fatalf("the failing endpoint was called %d times", calls)
	}
	// Its breaker is open now: the list skips it without a call, and so
	// does the provider's health that launches read.
	if _, err := reg.ProviderGames(ctx, rt); err != nil {
		t.Fatal(err)
	}
	if calls, _ := down.Calls(); calls != 2 {
		t.Fatalf("an open breaker let %d calls through", calls-2)
	}
	if h := reg.Health(rt); h.Status != gateway.ProviderDegraded || h.Available != 1 {
		t.Fatalf("health after the list's failures %+v", h)
	}

	// Every endpoint failing: unavailable, each endpoint's reason named.
	_, err = newRegistry(t).ProviderGames(ctx, kindRoute("caleta-u", gateway.ProviderKindCaleta, downSrv.URL))
	var unavailable *gateway.ProviderUnavailableError
	if !errors.As(err, &unavailable) || len(unavailable.Endpoints) != 1 || unavailable.Endpoints[0].Reason != "status_503" {
		t.Fatalf("all down: %v", err)
	}

	// Not a JSON array: the endpoint's failure.
	bad := newProvider(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"games":[]}`)) })
	_, err = newRegistry(t).ProviderGames(ctx, kindRoute("caleta-b", gateway.ProviderKindCaleta, bad.URL))
	if !errors.As(err, &unavailable) || unavailable.Endpoints[0].Reason != "bad_response" {
		t.Fatalf("a bad answer: %v", err)
	}

	// Other kinds have no list: no call.
	for _, kind := range []string{gateway.ProviderKindDemo, gateway.ProviderKindJSON, gateway.ProviderKindEvolution,
		gateway.ProviderKindRedTiger, gateway.ProviderKindFormXML} {
		var none *gateway.NoGameListError
		if _, err := newRegistry(t).ProviderGames(ctx, kindRoute("p", kind, bad.URL)); !errors.As(err, &none) || none.Kind != kind {
			t.Errorf("kind %s: %v", kind, err)
		}
	}
	if bad.hits.Load() != 1 {
		t.Fatalf("kinds without a list made %d calls", bad.hits.Load()-1)
	}
}
