package api_test

import (
	"encoding/json"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
)

// TestSignedLaunchErrorDetails: the signed launch's failure carries the
// details docs/signed-launch.md promises: server_time (Unix seconds) on
// TIMESTAMP_OUT_OF_RANGE so a client can see its clock skew, ip on
// IP_NOT_ALLOWED, parameter on a bad parameter.
func TestSignedLaunchErrorDetails(t *testing.T) {
	h := newSLHarness(t)
	c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch}, gateway.LaunchSettings{DefaultCurrency: "EUR",
		IPAllowList: []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")}})
	now := h.Clock.Now()
	signed := func(user, ts string) url.Values {
		return url.Values{"api_key": {c.Key}, "user_id": {user}, "game_uid": {h.game}, "balance": {"10"},
			"ts": {ts}, "sig": {apitest.SignLaunch(c.Secret, c.Key, user, h.game, "10", ts)}}
	}
	listed := "203.0.113.5:40000"
	cases := []struct {
		name    string
		query   url.Values
		peer    string
		status  int
		code    string
		details map[string]any
	}{
		{"ts 121 s ahead, in seconds", signed("d1", strconv.FormatInt(now.Add(121*time.Second).Unix(), 10)), listed,
			http.StatusUnauthorized, wire.CodeTimestampOutOfRange, map[string]any{"server_time": json.Number(strconv.FormatInt(now.Unix(), 10))}},
		{"ts 10 min behind, in milliseconds", signed("d2", strconv.FormatInt(now.Add(-10*time.Minute).UnixMilli(), 10)), listed,
			http.StatusUnauthorized, wire.CodeTimestampOutOfRange, map[string]any{"server_time": json.Number(strconv.FormatInt(now.Unix(), 10))}},
		{"address not on the allow-list", signed("d3", strconv.FormatInt(now.Unix(), 10)), "198.51.100.7:40000",
			http.StatusForbidden, wire.CodeIPNotAllowed, map[string]any{"ip": "198.51.100.7"}},
		{"bad ts", signed("d4", "soon"), listed,
			http.StatusBadRequest, wire.CodeInvalidRequest, map[string]any{"parameter": "ts"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := h.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/launch?" + tc.query.Encode(), Host: c.Host,
				RemoteAddr: tc.peer})
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			a := apitest.Decode[struct {
				OK      bool           `json:"ok"`
				Code    string         `json:"code"`
				Details map[string]any `json:"details"`
			}](t, rec)
			if a.OK || a.Code != tc.code {
				t.Fatalf("answer %+v, want code %s", a, tc.code)
			}
			for k, want := range tc.details {
				if got := a.Details[k]; got != want {
					t.Errorf("details.%s = %v (%T), want %v; details %v", k, got, got, want, a.Details)
				}
			}
		})
	}
}
