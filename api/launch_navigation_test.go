package api_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/gateway"
)

// TestSignedLaunchAnswersABrowserWithTheGame: the spec lets a client send
// the player to the launch address directly. A browser navigation
// (Sec-Fetch-Mode: navigate, or an Accept that prefers text/html) is
// answered with a redirect to the game, and a refusal with a readable page;
// a program asking for JSON, or sending no preference, still gets JSON; an
// explicit redirect= decides over the headers (issue 17, item 12).
func TestSignedLaunchAnswersABrowserWithTheGame(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	h := apitest.New(t, apitest.Options{Clock: apitest.StoppedAt(t0)})
	h.AddProvider("demo", "Demo", gateway.ProviderKindDemo)
	h.AddGame("slot", "demo", "Slot", "slots", true)
	c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch}, gateway.LaunchSettings{DefaultCurrency: "EUR"})
	const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
	n := 0
	launch := func(header map[string]string, extra string, signed bool) *http.Response {
		n++
		user := "u" + strconv.Itoa(n)
		ts := strconv.FormatInt(t0.Unix(), 10)
		q := url.Values{"api_key": {c.Key}, "user_id": {user}, "game_uid": {"slot"}, "balance": {"10.00"}, "ts": {ts},
			"sig": {apitest.SignLaunch(c.Secret, c.Key, user, "slot", "10.00", ts)}}
		if !signed {
			q.Set("sig", strings.Repeat("0", 64))
		}
		rec := h.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/launch?" + q.Encode() + extra, Header: header})
		return rec.Result()
	}
	tests := []struct {
		name        string
		header      map[string]string
		extra       string
		signed      bool
		status      int
		contentType string
	}{
		{"navigation", map[string]string{"Sec-Fetch-Mode": "navigate", "Accept": browserAccept}, "", true, http.StatusFound, ""},
		{"an Accept that prefers HTML", map[string]string{"Accept": browserAccept}, "", true, http.StatusFound, ""},
		{"navigation refused", map[string]string{"Sec-Fetch-Mode": "navigate"}, "", false, http.StatusUnauthorized, "text/html"},
		{"a program asking for JSON", map[string]string{"Accept": "application/json"}, "", true, http.StatusOK, "application/json"},
		{"no preference", nil, "", true, http.StatusOK, "application/json"},
		{"a fetch from a page", map[string]string{"Sec-Fetch-Mode": "cors", "Accept": "*/*"}, "", true, http.StatusOK, "application/json"},
		{"JSON preferred over HTML", map[string]string{"Accept": "application/json, text/html;q=0.5"}, "", true, http.StatusOK, "application/json"},
		{"redirect=0 decides", map[string]string{"Sec-Fetch-Mode": "navigate", "Accept": browserAccept}, "&redirect=0", true, http.StatusOK, "application/json"},
		{"redirect=1 decides", map[string]string{"Accept": "application/json"}, "&redirect=1", true, http.StatusFound, ""},
		{"a refusal asked for as JSON", map[string]string{"Accept": "application/json"}, "", false, http.StatusUnauthorized, "application/json"},
	}
	for _, tc := range tests {
		res := launch(tc.header, tc.extra, tc.signed)
		if res.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, res.StatusCode, tc.status)
			continue
		}
		if tc.status == http.StatusFound && !strings.Contains(res.Header.Get("Location"), "/demo/play?session=") {
			t.Errorf("%s: Location %q, want the game", tc.name, res.Header.Get("Location"))
		}
		if tc.contentType != "" && !strings.HasPrefix(res.Header.Get("Content-Type"), tc.contentType) {
			t.Errorf("%s: Content-Type %q, want %s", tc.name, res.Header.Get("Content-Type"), tc.contentType)
		}
		if v := res.Header.Get("Vary"); !strings.Contains(v, "Accept") || !strings.Contains(v, "Sec-Fetch-Mode") {
			t.Errorf("%s: Vary %q, want Accept and Sec-Fetch-Mode", tc.name, v)
		}
	}
}
