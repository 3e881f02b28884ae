package api_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
)

// TestReturnAddress: GET /v1/return?session=<id> sends the player to the
// return_url given at launch when its host is (still) allowed, and shows
// the default game-closed page otherwise.
func TestReturnAddress(t *testing.T) {
	h := newSLHarness(t)
	settings := gateway.LaunchSettings{AllowedReturnHosts: []string{"casino.example", "LOBBY.example:8443"}}
	c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch}, settings)

	withURL := h.mustLaunch(c, "ret-1", "10", url.Values{"return_url": {"https://casino.example/lobby?from=game&x=1"}})
	withPort := h.mustLaunch(c, "ret-2", "10", url.Values{"return_url": {"http://lobby.example:8443/back"}})
	without := h.mustLaunch(c, "ret-3", "10", nil)

	// The client drops casino.example after withURL was launched: the
	// return address checks again.
	if err := h.LaunchClients.SetLaunchSettings(context.Background(), c.ID,
		gateway.LaunchSettings{AllowedReturnHosts: []string{"lobby.example:8443"}}); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name     string
		query    url.Values
		status   int
		location string
	}{
		{"redirect to the given return_url", url.Values{"session": {withPort.SessionID}}, http.StatusFound, "http://lobby.example:8443/back"},
		{"no return_url: default page", url.Values{"session": {without.SessionID}}, http.StatusOK, ""},
		{"host removed since launch: refused", url.Values{"session": {withURL.SessionID}}, http.StatusForbidden, ""},
		{"no session: default page", nil, http.StatusOK, ""},
		{"unknown session", url.Values{"session": {"gs_nope"}}, http.StatusNotFound, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := "/v1/return"
			if tc.query != nil {
				path += "?" + tc.query.Encode()
			}
			rec := h.Get(path, "")
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if got := rec.Header().Get("Location"); got != tc.location {
				t.Fatalf("Location %q, want %q", got, tc.location)
			}
			if tc.status == http.StatusFound {
				return
			}
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
				t.Fatalf("Content-Type %q", ct)
			}
			body := rec.Body.String()
			if !strings.Contains(body, "Game closed") {
				t.Fatalf("page %s", body)
			}
			for _, external := range []string{"<script", "src=", "href=", "@import", "url("} {
				if strings.Contains(body, external) {
					t.Fatalf("page loads %q: %s", external, body)
				}
			}
		})
	}
}

// TestReturnAddressExactRedirect: the redirect goes to exactly the URL the
// client gave, and only after the host check at launch.
func TestReturnAddressExactRedirect(t *testing.T) {
	h := newSLHarness(t)
	c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch}, gateway.LaunchSettings{AllowedReturnHosts: []string{"casino.example"}})
	given := "https://casino.example/lobby?from=game&x=1#top"
	a := h.mustLaunch(c, "ret-exact", "10", url.Values{"return_url": {given}})
	rec := h.Get("/v1/return?session="+url.QueryEscape(a.SessionID), "")
	if rec.Code != http.StatusFound || rec.Header().Get("Location") != given {
		t.Fatalf("status %d, Location %q", rec.Code, rec.Header().Get("Location"))
	}

	for _, bad := range []string{
		"https://casino.example.evil.example/",
		"https://evil.example/?next=casino.example",
		"https://casino.example@evil.example/",
		"javascript://casino.example/%0aalert(1)",
		"//casino.example/lobby",
		"ftp://casino.example/",
		"https:\\\\casino.example\\",
	} {
		t.Run(bad, func(t *testing.T) {
			q := h.signedQuery(c, "ret-bad", "1")
			q.Set("return_url", bad)
			rec := h.launchAs(c, q)
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if a := apitest.Decode[slLaunchAnswer](t, rec); a.Code != wire.CodeReturnURLNotAllowed {
				t.Fatalf("answer %+v", a)
			}
		})
	}
}
