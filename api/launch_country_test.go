package api_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// blockIn sets the countries a game is blocked in, as `pitboss catalog
// sync` writes them from the provider's game list.
func blockIn(t *testing.T, h *apitest.Harness, game string, countries ...string) {
	t.Helper()
	if _, err := h.Pool.Exec(context.Background(), `UPDATE games SET blocked_countries = $2 WHERE id = $1`, game, countries); err != nil {
		t.Fatal(err)
	}
}

func launchEvents(t *testing.T, h *apitest.Harness) int {
	t.Helper()
	var n int
	if err := h.Pool.QueryRow(context.Background(), `SELECT count(*) FROM events WHERE event_type = $1`,
		string(domain.EventGameLaunched)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLaunchCountry: a launch that names the player's country is refused
// for a game the provider's list blocks there (403 GAME_BLOCKED_IN_COUNTRY,
// nothing opened or moved), in every launch variant; a launch without a
// country, or naming another, launches as before; a country that is not
// ISO 3166-1 alpha-2 is 400.
func TestLaunchCountry(t *testing.T) {
	t.Parallel()
	h, c := transferFixture(t)
	blockIn(t, h, "demo-slot", "BG", "PL")
	body := func(country string) string {
		b := map[string]any{"provider": "demo", "game_id": "demo-slot", "player_id": "p1", "currency": "EUR"}
		if country != "" {
			b["country"] = country
		}
		return apitest.JSON(t, b)
	}
	wantBlocked := func(t *testing.T, e apitest.ErrorBody, field, country string) {
		t.Helper()
		if e.Error.Details[field] != "country" || e.Error.Details["country"] != country || e.Error.Details["game_id"] != "demo-slot" {
			t.Fatalf("details %v", e.Error.Details)
		}
	}

	// The listing says so, for a lobby to leave the game out.
	listed := apitest.Data[struct {
		BlockedCountries []string `json:"blocked_countries"`
	}](t, h.Call(http.MethodGet, "/api/v1/games/demo-slot", c.Key, ""))
	if len(listed.BlockedCountries) != 2 || listed.BlockedCountries[0] != "BG" || listed.BlockedCountries[1] != "PL" {
		t.Fatalf("listed blocked_countries %v", listed.BlockedCountries)
	}

	for _, country := range []string{"PL", "bg"} {
		e := apitest.WantError(t, h.Call(http.MethodPost, "/api/v1/game/launch", c.Key, body(country)), http.StatusForbidden,
			wire.CodeGameBlockedInCountry)
		wantBlocked(t, e, "field", map[string]string{"PL": "PL", "bg": "BG"}[country])
	}
	q := url.Values{"provider": {"demo"}, "game_id": {"demo-slot"}, "player_id": {"p1"}, "currency": {"EUR"}, "country": {"PL"}}
	wantBlocked(t, apitest.WantError(t, h.Call(http.MethodGet, "/api/v1/game/launch?"+q.Encode(), c.Key, ""),
		http.StatusForbidden, wire.CodeGameBlockedInCountry), "field", "PL")
	e := apitest.WantError(t, h.Call(http.MethodPost, "/api/v1/game/launch/transfer", c.Key,
		transferBody(t, map[string]any{"country": "PL"})), http.StatusForbidden, wire.CodeGameBlockedInCountry)
	wantBlocked(t, e, "field", "PL")
	for _, bad := range []string{"POL", "P1", "  "} {
		e := apitest.WantError(t, h.Call(http.MethodPost, "/api/v1/game/launch", c.Key, body(bad)), http.StatusBadRequest,
			wire.CodeInvalidRequest)
		if e.Error.Details["field"] != "country" {
			t.Fatalf("country %q: details %v", bad, e.Error.Details)
		}
	}
	if n := launchEvents(t, h); n != 0 {
		t.Fatalf("%d launches recorded by refused launches", n)
	}
	// The refused transfer launch moved nothing: the client still holds 100.
	tr := apitest.Data[ctTransferLaunch](t, h.Call(http.MethodPost, "/api/v1/game/launch/transfer", c.Key,
		transferBody(t, map[string]any{"amount": "100.00", "country": "BR"})))
	if tr.Transfer.Amount.String() != "100.00" {
		t.Fatalf("transfer %+v", tr.Transfer)
	}

	// Another country, or none, launches; so does another game in PL.
	for _, b := range []string{body("BR"), body(""), apitest.JSON(t, map[string]any{"provider": "demo", "game_id": "demo-slot-2",
		"player_id": "p1", "currency": "EUR", "country": "PL"})} {
		apitest.Data[apitest.Launch](t, h.Call(http.MethodPost, "/api/v1/game/launch", c.Key, b))
	}
	if n := launchEvents(t, h); n != 4 {
		t.Fatalf("%d launches, want 4", n)
	}
}

// TestSignedLaunchCountry: the signed launch's optional country parameter
// (not signed, like language) refuses a game blocked there before any
// balance is synced.
func TestSignedLaunchCountry(t *testing.T) {
	t.Parallel()
	h := newSLHarness(t)
	c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch}, gateway.LaunchSettings{DefaultCurrency: "EUR"})
	blockIn(t, h.Harness, h.game, "PL")

	events := func() int {
		var n int
		if err := h.Pool.QueryRow(context.Background(), `SELECT count(*) FROM events`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := events()
	q := h.signedQuery(c, "u1", "50")
	q.Set("country", "pl")
	rec := h.launchAs(c, q)
	a := apitest.Decode[slLaunchAnswer](t, rec)
	if rec.Code != http.StatusForbidden || a.OK || a.Code != wire.CodeGameBlockedInCountry {
		t.Fatalf("blocked: %d %+v", rec.Code, a)
	}
	q.Set("country", "Poland")
	if rec := h.launchAs(c, q); rec.Code != http.StatusBadRequest {
		t.Fatalf("a country name: %d %s", rec.Code, rec.Body)
	}
	if n := events() - before; n != 0 {
		t.Fatalf("%d events written by refused launches", n)
	}
	h.mustLaunch(c, "u1", "50", url.Values{"country": {"BR"}})
	h.mustLaunch(c, "u2", "50", nil)
}
