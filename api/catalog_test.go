package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
)

type ctProviderView struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Kind       string `json:"kind"`
	Status     string `json:"status"`
	GamesCount int64  `json:"games_count"`
	Endpoints  struct {
		Total     int `json:"total"`
		Available int `json:"available"`
	} `json:"endpoints"`
	RetryAfterSeconds *json.Number `json:"retry_after_seconds"`
}

type ctGameView struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Category     string `json:"category"`
	Provider     string `json:"provider"`
	ProviderName string `json:"provider_name"`
}

type ctGamePage struct {
	Success    bool         `json:"success"`
	Data       []ctGameView `json:"data"`
	Pagination struct {
		Page    int   `json:"page"`
		PerPage int   `json:"per_page"`
		Total   int64 `json:"total"`
	} `json:"pagination"`
}

// catalogFixture: a demo provider with two games (one disabled), a json
// provider with four games, and a disabled provider with one game.
func catalogFixture(t *testing.T, h *apitest.Harness) {
	h.AddProvider("demo", "Pitboss Demo Games", gateway.ProviderKindDemo)
	h.AddGame("demo-slot", "demo", "Demo Slot", "slots", true)
	h.AddGame("demo-old", "demo", "Old Demo", "slots", false)
	h.AddProvider("acme", "Acme Gaming", gateway.ProviderKindJSON, "http://127.0.0.1:9/")
	h.AddGame("acme-roulette", "acme", "Lightning Roulette", "Live", true)
	h.AddGame("acme-fruit", "acme", "Fruit 50% Bonus", "slots", true)
	h.AddGame("acme-fruits", "acme", "fruit_party", "slots", true)
	h.AddGame("acme-hotpot", "acme", "Hot Pot 500", "slots", true) // what unescaped % and _ would also find
	h.AddProvider("gone", "Gone Games", gateway.ProviderKindDemo)
	h.AddGame("gone-slot", "gone", "Gone Slot", "slots", true)
	if err := h.Gateway.UpsertProvider(context.Background(), gateway.Provider{ID: "gone", Name: "Gone Games", Secret: "x", Enabled: false}); err != nil {
		t.Fatal(err)
	}
}

func TestListProviders(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{Loopback: true})
	catalogFixture(t, h)
	c := h.NewClient(gateway.ScopeLaunch)

	got := apitest.Data[[]ctProviderView](t, h.Call(http.MethodGet, "/api/v1/providers", c.Key, ""))
	if len(got) != 2 {
		t.Fatalf("providers %+v, want acme and demo (gone is disabled)", got)
	}
	acme, demo := got[0], got[1] // by name
	if acme.ID != "acme" || acme.Name != "Acme Gaming" || acme.Kind != gateway.ProviderKindJSON || acme.GamesCount != 4 ||
		acme.Status != gateway.ProviderAvailable || acme.Endpoints.Total != 1 || acme.Endpoints.Available != 1 ||
		acme.RetryAfterSeconds != nil {
		t.Fatalf("acme %+v", acme)
	}
	if demo.ID != "demo" || demo.Kind != gateway.ProviderKindDemo || demo.GamesCount != 1 || demo.Status != gateway.ProviderAvailable {
		t.Fatalf("demo %+v", demo)
	}

	t.Run("401 without a key", func(t *testing.T) {
		apitest.WantError(t, h.Call(http.MethodGet, "/api/v1/providers", "", ""), http.StatusUnauthorized, wire.CodeUnauthorized)
		apitest.WantError(t, h.Call(http.MethodGet, "/api/v1/providers", "pb_test_nope_nope", ""), http.StatusUnauthorized, wire.CodeUnauthorized)
	})
	t.Run("403 without the launch scope", func(t *testing.T) {
		other := h.NewClient(gateway.ScopeWalletRead)
		e := apitest.WantError(t, h.Call(http.MethodGet, "/api/v1/providers", other.Key, ""), http.StatusForbidden, wire.CodeForbidden)
		if e.Error.Details["scope"] != gateway.ScopeLaunch {
			t.Fatalf("details %v", e.Error.Details)
		}
	})
}

func TestCatalogRoutesWithoutACatalogAre503(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{Loopback: true, WithoutCatalog: true})
	c := h.NewClient(gateway.ScopeLaunch)
	for _, p := range []string{"/api/v1/providers", "/api/v1/games", "/api/v1/games/x"} {
		apitest.WantError(t, h.Call(http.MethodGet, p, c.Key, ""), http.StatusServiceUnavailable, wire.CodeUnavailable)
	}
}

func TestListGames(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{Loopback: true})
	catalogFixture(t, h)
	c := h.NewClient(gateway.ScopeLaunch)
	list := func(t *testing.T, q url.Values) ctGamePage {
		t.Helper()
		r := h.Call(http.MethodGet, "/api/v1/games?"+q.Encode(), c.Key, "")
		if r.Code != http.StatusOK {
			t.Fatalf("status %d: %s", r.Code, r.Body)
		}
		var p ctGamePage
		if err := json.Unmarshal(r.Body.Bytes(), &p); err != nil || !p.Success {
			t.Fatalf("page %s: %v", r.Body, err)
		}
		return p
	}
	ids := func(p ctGamePage) string {
		var out []string
		for _, g := range p.Data {
			out = append(out, g.ID)
		}
		return strings.Join(out, ",")
	}

	tests := []struct {
		name        string
		query       url.Values
		wantIDs     string
		wantTotal   int64
		wantPage    int
		wantPerPage int
	}{
		// Sorted by name, case-insensitively; disabled games and games of
		// disabled providers are not listed.
		{"everything", url.Values{}, "demo-slot,acme-fruit,acme-fruits,acme-hotpot,acme-roulette", 5, 1, 50},
		{"one provider", url.Values{"provider": {"acme"}}, "acme-fruit,acme-fruits,acme-hotpot,acme-roulette", 4, 1, 50},
		{"unknown provider is an empty list", url.Values{"provider": {"nobody"}}, "", 0, 1, 50},
		{"category ignores case", url.Values{"category": {"LIVE"}}, "acme-roulette", 1, 1, 50},
		{"search ignores case", url.Values{"search": {"FRUIT"}}, "acme-fruit,acme-fruits", 2, 1, 50},
		{"search % is literal", url.Values{"search": {"50%"}}, "acme-fruit", 1, 1, 50},
		{"search _ is literal", url.Values{"search": {"t_p"}}, "acme-fruits", 1, 1, 50},
		{"filters combine", url.Values{"provider": {"acme"}, "category": {"slots"}, "search": {"bonus"}}, "acme-fruit", 1, 1, 50},
		{"disabled provider's games are hidden", url.Values{"provider": {"gone"}}, "", 0, 1, 50},
		{"page 2 of 2 per page", url.Values{"per_page": {"2"}, "page": {"2"}}, "acme-fruits,acme-hotpot", 5, 2, 2},
		{"last page", url.Values{"per_page": {"2"}, "page": {"3"}}, "acme-roulette", 5, 3, 2},
		{"page past the end", url.Values{"per_page": {"2"}, "page": {"4"}}, "", 5, 4, 2},
		{"largest per_page", url.Values{"per_page": {"200"}}, "demo-slot,acme-fruit,acme-fruits,acme-hotpot,acme-roulette", 5, 1, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := list(t, tc.query)
			if got := ids(p); got != tc.wantIDs {
				t.Fatalf("ids %q, want %q", got, tc.wantIDs)
			}
			if p.Pagination.Total != tc.wantTotal || p.Pagination.Page != tc.wantPage || p.Pagination.PerPage != tc.wantPerPage {
				t.Fatalf("pagination %+v", p.Pagination)
			}
			if p.Data == nil {
				t.Fatal("data is null, want an array")
			}
		})
	}
	t.Run("records carry the provider", func(t *testing.T) {
		p := list(t, url.Values{"search": {"roulette"}})
		want := ctGameView{ID: "acme-roulette", Name: "Lightning Roulette", Category: "Live", Provider: "acme", ProviderName: "Acme Gaming"}
		if len(p.Data) != 1 || p.Data[0] != want {
			t.Fatalf("games %+v, want %+v", p.Data, want)
		}
	})

	bad := []struct {
		name  string
		query string
		field string
	}{
		{"per_page 0", "per_page=0", "per_page"},
		{"per_page above the maximum", "per_page=201", "per_page"},
		{"page 0", "page=0", "page"},
		{"page negative", "page=-1", "page"},
		{"page not a number", "page=two", "page"},
		{"page too large", "page=" + strconv.Itoa(1_000_001), "page"},
		{"search too long", "search=" + strings.Repeat("a", 101), "search"},
		{"search with a control character", "search=a%00b", "search"},
		{"provider not an id", "provider=a%3Ab", "provider"},
	}
	for _, tc := range bad {
		t.Run("400 "+tc.name, func(t *testing.T) {
			e := apitest.WantError(t, h.Call(http.MethodGet, "/api/v1/games?"+tc.query, c.Key, ""), http.StatusBadRequest, wire.CodeInvalidRequest)
			if e.Error.Details["field"] != tc.field {
				t.Fatalf("details %v, want field %s", e.Error.Details, tc.field)
			}
		})
	}
	t.Run("401 and 403", func(t *testing.T) {
		apitest.WantError(t, h.Call(http.MethodGet, "/api/v1/games", "", ""), http.StatusUnauthorized, wire.CodeUnauthorized)
		other := h.NewClient(gateway.ScopeTransactionsRead)
		apitest.WantError(t, h.Call(http.MethodGet, "/api/v1/games", other.Key, ""), http.StatusForbidden, wire.CodeForbidden)
	})
}

func TestGetGame(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{Loopback: true})
	catalogFixture(t, h)
	c := h.NewClient(gateway.ScopeLaunch)

	g := apitest.Data[ctGameView](t, h.Call(http.MethodGet, "/api/v1/games/demo-slot", c.Key, ""))
	if g != (ctGameView{ID: "demo-slot", Name: "Demo Slot", Category: "slots", Provider: "demo", ProviderName: "Pitboss Demo Games"}) {
		t.Fatalf("game %+v", g)
	}
	for _, id := range []string{"nope", "demo-old", "gone-slot", "a%3Ab", strings.Repeat("x", 129)} {
		t.Run("404 "+id[:min(len(id), 12)], func(t *testing.T) {
			apitest.WantError(t, h.Call(http.MethodGet, "/api/v1/games/"+id, c.Key, ""), http.StatusNotFound, wire.CodeNotFound)
		})
	}
	t.Run("401 and 403", func(t *testing.T) {
		apitest.WantError(t, h.Call(http.MethodGet, "/api/v1/games/demo-slot", "", ""), http.StatusUnauthorized, wire.CodeUnauthorized)
		other := h.NewClient(gateway.ScopeWalletRead)
		apitest.WantError(t, h.Call(http.MethodGet, "/api/v1/games/demo-slot", other.Key, ""), http.StatusForbidden, wire.CodeForbidden)
	})
}
