package api_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/api/apitest"
)

// TestSignedLaunchAnswersABrowserWithTheGame: the spec lets a client send
// the player to the launch address directly. A browser navigation
// (Sec-Fetch-Mode: navigate, or an Accept that prefers text/html) is
// answered with a redirect to the game, and a refusal with a readable page;
// a program asking for JSON, or sending no preference, still gets JSON; an
// explicit redirect= decides over the headers (issue 17, item 12).
func TestSignedLaunchAnswersABrowserWithTheGame(t *testing.T) {
	t.Parallel()
	h := newLaunchFixture(t, apitest.Options{})
	const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
	n := 0
	launch := func(header map[string]string, extra string, signed bool) *http.Response {
		n++
		user := "u" + strconv.Itoa(n)
		q := h.signedQuery(user, "10.00")
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
