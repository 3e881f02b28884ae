package api_test

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

var slEUR = domain.MustCurrency("EUR")

func boolp(b bool) *bool { return &b }

// TestSignedLaunch covers the signature rule, the timestamp window, the
// signature requirement and the other refusals of GET /v1/launch: one case
// per rule, each with the status and code the client sees.
func TestSignedLaunch(t *testing.T) {
	h := newSLHarness(t)
	sandbox := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch}, gateway.LaunchSettings{DefaultCurrency: "EUR"})
	strict := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch}, gateway.LaunchSettings{RequireSignature: boolp(true)})
	prod := h.NewLaunchClient("production", []string{gateway.ScopeLaunch}, gateway.LaunchSettings{})
	noScope := h.NewLaunchClient("sandbox", []string{gateway.ScopeWalletRead}, gateway.LaunchSettings{})

	now := h.Clock.Now()
	sec := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }
	ms := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).UnixMilli(), 10) }
	// q builds a query signed over exactly the given texts.
	q := func(c apitest.Client, user, balance, ts string) url.Values {
		return url.Values{"api_key": {c.Key}, "user_id": {user}, "game_uid": {h.game}, "balance": {balance},
			"ts": {ts}, "sig": {apitest.SignLaunch(c.Secret, c.Key, user, h.game, balance, ts)}, "currency_code": {"EUR"}}
	}
	with := func(v url.Values, k, val string) url.Values {
		out := url.Values{}
		for kk, vv := range v {
			out[kk] = append([]string(nil), vv...)
		}
		if val == "" {
			delete(out, k)
		} else {
			out.Set(k, val)
		}
		return out
	}

	cases := []struct {
		name   string
		client apitest.Client
		query  url.Values
		status int
		code   string
	}{
		{"valid signature", sandbox, q(sandbox, "u1", "100.00", sec(0)), http.StatusOK, ""},
		{"balance is signed as sent, 100.5 not 100.50", sandbox, q(sandbox, "u2", "100.5", sec(0)), http.StatusOK, ""},
		{"balance re-formatted after signing", sandbox, with(q(sandbox, "u2", "100.5", sec(0)), "balance", "100.50"),
			http.StatusUnauthorized, wire.CodeInvalidSignature},
		{"signed with the wrong secret", sandbox, with(q(sandbox, "u3", "10", sec(0)), "sig",
			apitest.SignLaunch("not-the-secret", sandbox.Key, "u3", h.game, "10", sec(0))), http.StatusUnauthorized, wire.CodeInvalidSignature},
		{"user_id changed after signing", sandbox, with(q(sandbox, "u4", "10", sec(0)), "user_id", "u4-other"),
			http.StatusUnauthorized, wire.CodeInvalidSignature},
		{"game_uid changed after signing", sandbox, with(q(sandbox, "u4", "10", sec(0)), "game_uid", h.game+"x"),
			http.StatusUnauthorized, wire.CodeInvalidSignature},
		{"upper-case hex signature", sandbox, with(q(sandbox, "u4", "10", sec(0)), "sig",
			strings.ToUpper(apitest.SignLaunch(sandbox.Secret, sandbox.Key, "u4", h.game, "10", sec(0)))), http.StatusUnauthorized, wire.CodeInvalidSignature},
		{"ts in milliseconds", sandbox, q(sandbox, "u5", "10", ms(0)), http.StatusOK, ""},
		{"ts +120 s", sandbox, q(sandbox, "u6", "10", sec(120*time.Second)), http.StatusOK, ""},
		{"ts -120 s", sandbox, q(sandbox, "u7", "10", sec(-120*time.Second)), http.StatusOK, ""},
		{"ts +121 s", sandbox, q(sandbox, "u8", "10", sec(121*time.Second)), http.StatusUnauthorized, wire.CodeTimestampOutOfRange},
		{"ts -121 s", sandbox, q(sandbox, "u9", "10", sec(-121*time.Second)), http.StatusUnauthorized, wire.CodeTimestampOutOfRange},
		{"ts +120000 ms", sandbox, q(sandbox, "u10", "10", ms(120*time.Second)), http.StatusOK, ""},
		{"ts -120000 ms", sandbox, q(sandbox, "u10b", "10", ms(-120*time.Second)), http.StatusOK, ""},
		{"ts +120001 ms", sandbox, q(sandbox, "u11", "10", ms(120*time.Second+time.Millisecond)), http.StatusUnauthorized, wire.CodeTimestampOutOfRange},
		{"ts -121000 ms", sandbox, q(sandbox, "u11", "10", ms(-121*time.Second)), http.StatusUnauthorized, wire.CodeTimestampOutOfRange},
		{"ts not an integer", sandbox, q(sandbox, "u12", "10", "1.7e9"), http.StatusBadRequest, wire.CodeInvalidRequest},
		{"sig without ts", sandbox, with(q(sandbox, "u12", "10", sec(0)), "ts", ""), http.StatusBadRequest, wire.CodeInvalidRequest},
		{"no sig, client does not require one (sandbox default)", sandbox,
			with(with(q(sandbox, "u13", "10", sec(0)), "sig", ""), "ts", ""), http.StatusOK, ""},
		{"no sig, client requires one", strict, with(q(strict, "u14", "10", sec(0)), "sig", ""),
			http.StatusUnauthorized, wire.CodeSignatureRequired},
		{"no sig, production requires one by default", prod, with(q(prod, "u15", "10", sec(0)), "sig", ""),
			http.StatusUnauthorized, wire.CodeSignatureRequired},
		{"production, signed", prod, q(prod, "u16", "10", sec(0)), http.StatusOK, ""},
		{"a wrong sig is refused even when none is required", sandbox, with(q(sandbox, "u17", "10", sec(0)), "sig",
			strings.Repeat("0", 64)), http.StatusUnauthorized, wire.CodeInvalidSignature},
		{"unknown api_key", sandbox, with(q(sandbox, "u18", "10", sec(0)), "api_key", "pb_test_nope"),
			http.StatusUnauthorized, wire.CodeUnauthorized},
		{"missing api_key", sandbox, with(q(sandbox, "u18", "10", sec(0)), "api_key", ""),
			http.StatusUnauthorized, wire.CodeUnauthorized},
		{"production key at the sandbox address", apitest.Client{ID: prod.ID, Key: prod.Key, Secret: prod.Secret, Host: slSandboxHost},
			q(prod, "u19", "10", sec(0)), http.StatusUnauthorized, wire.CodeUnauthorized},
		{"key without the launch scope", noScope, q(noScope, "u20", "10", sec(0)), http.StatusForbidden, wire.CodeForbidden},
		{"missing user_id", sandbox, with(q(sandbox, "", "10", sec(0)), "user_id", ""), http.StatusBadRequest, wire.CodeInvalidRequest},
		{"user_id with a colon", sandbox, q(sandbox, "a:b", "10", sec(0)), http.StatusBadRequest, wire.CodeInvalidRequest},
		{"missing balance", sandbox, with(q(sandbox, "u21", "", sec(0)), "balance", ""), http.StatusBadRequest, wire.CodeInvalidRequest},
		{"balance not a number", sandbox, q(sandbox, "u21", "ten", sec(0)), http.StatusBadRequest, wire.CodeInvalidAmount},
		{"balance too precise for EUR", sandbox, q(sandbox, "u21", "1.001", sec(0)), http.StatusBadRequest, wire.CodeAmountTooPrecise},
		{"negative balance", sandbox, q(sandbox, "u21", "-1", sec(0)), http.StatusBadRequest, wire.CodeInvalidAmount},
		{"unknown currency_code", sandbox, with(q(sandbox, "u22", "10", sec(0)), "currency_code", "XXQ"),
			http.StatusBadRequest, wire.CodeUnknownCurrency},
		{"no currency_code and no default", strict, with(q(strict, "u22", "10", sec(0)), "currency_code", ""),
			http.StatusBadRequest, wire.CodeInvalidRequest},
		{"currency_code falls back to the client default", sandbox, with(q(sandbox, "u23", "10", sec(0)), "currency_code", ""),
			http.StatusOK, ""},
		{"parameter given twice", sandbox, func() url.Values {
			v := q(sandbox, "u24", "10", sec(0))
			v.Add("balance", "99999")
			return v
		}(), http.StatusBadRequest, wire.CodeInvalidRequest},
		{"unknown game", sandbox, func() url.Values {
			v := q(sandbox, "u25", "10", sec(0))
			v.Set("game_uid", "no-such-game")
			v.Set("sig", apitest.SignLaunch(sandbox.Secret, sandbox.Key, "u25", "no-such-game", "10", sec(0)))
			return v
		}(), http.StatusNotFound, wire.CodeNotFound},
		{"return_url host not allowed", sandbox, with(q(sandbox, "u26", "10", sec(0)), "return_url", "https://evil.example/"),
			http.StatusBadRequest, wire.CodeReturnURLNotAllowed},
		{"bad language", sandbox, with(q(sandbox, "u27", "10", sec(0)), "language", "<script>"),
			http.StatusBadRequest, wire.CodeInvalidRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := h.launchAs(tc.client, tc.query)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d; body %s", rec.Code, tc.status, rec.Body)
			}
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Fatalf("Content-Type %q", ct)
			}
			a := apitest.Decode[slLaunchAnswer](t, rec)
			if tc.status == http.StatusOK {
				if !a.OK || !strings.HasPrefix(a.GameURL, slPublicURL+"/demo/play?session="+a.SessionID) || a.Error != "" {
					t.Fatalf("answer %+v", a)
				}
				return
			}
			if a.OK || a.GameURL != "" || a.Error == "" || a.Code != tc.code {
				t.Fatalf("answer %+v, want ok=false, an error text and code %s", a, tc.code)
			}
		})
	}
}

// TestSignedLaunchURLDecoding: the signature covers the values after URL
// decoding, whatever escaping the sender used.
func TestSignedLaunchURLDecoding(t *testing.T) {
	h := newSLHarness(t)
	c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch}, gateway.LaunchSettings{})
	ts := strconv.FormatInt(h.Clock.Now().Unix(), 10)
	user := "jane.doe@casino.example"
	sig := apitest.SignLaunch(c.Secret, c.Key, user, h.game, "25.5", ts)
	raw := "api_key=" + c.Key + "&user_id=jane.doe%40casino.example&game_uid=" + url.QueryEscape(h.game) +
		"&balance=25%2E5&ts=" + ts + "&sig=" + sig + "&currency_code=eur"
	rec := h.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/launch?" + raw, Host: c.Host})
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if got := h.Balance(domain.PlayerWallet(c.ID, user, slEUR)); got != 2550 {
		t.Fatalf("wallet %d minor units, want 2550", got)
	}

	for _, bad := range []string{raw + "&language=%zz", raw + ";x=1"} {
		rec := h.Do(apitest.Request{Method: http.MethodGet, Path: "/v1/launch?" + bad, Host: c.Host})
		if a := apitest.Decode[slLaunchAnswer](t, rec); rec.Code != http.StatusBadRequest || a.Code != wire.CodeInvalidRequest {
			t.Fatalf("%q: status %d, %+v", bad, rec.Code, a)
		}
	}
}

// TestSignedLaunchIPAllowList: with an allow-list only listed addresses may
// launch; X-Forwarded-For counts only when the direct peer is a trusted
// proxy (10.0.0.0/8 in the harness).
func TestSignedLaunchIPAllowList(t *testing.T) {
	h := newSLHarness(t)
	c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch}, gateway.LaunchSettings{
		IPAllowList: []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24"), netip.MustParsePrefix("2001:db8::/32")}})
	cases := []struct {
		name, peer, xff string
		status          int
	}{
		{"listed peer", "203.0.113.5:40000", "", http.StatusOK},
		{"listed IPv6 peer", "[2001:db8::7]:40000", "", http.StatusOK},
		{"unlisted peer", "198.51.100.7:40000", "", http.StatusForbidden},
		{"unlisted peer claiming a listed address", "198.51.100.7:40000", "203.0.113.9", http.StatusForbidden},
		{"trusted proxy forwarding a listed address", "10.1.2.3:40000", "203.0.113.9", http.StatusOK},
		{"trusted proxy forwarding an unlisted address", "10.1.2.3:40000", "198.51.100.7", http.StatusForbidden},
		{"spoofed left-most entry behind a trusted proxy", "10.1.2.3:40000", "203.0.113.9, 198.51.100.7", http.StatusForbidden},
		{"chain of trusted proxies", "10.1.2.3:40000", "203.0.113.9, 10.9.9.9", http.StatusOK},
		{"garbage forwarded entry", "10.1.2.3:40000", "not-an-ip", http.StatusForbidden},
		{"trusted proxy without the header is itself unlisted", "10.1.2.3:40000", "", http.StatusForbidden},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := apitest.Request{Method: http.MethodGet, Path: "/v1/launch?" + h.signedQuery(c, "ip-user-"+strconv.Itoa(i), "5").Encode(),
				Host: c.Host, RemoteAddr: tc.peer}
			if tc.xff != "" {
				r.Header = map[string]string{"X-Forwarded-For": tc.xff}
			}
			rec := h.Do(r)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.status == http.StatusForbidden {
				if a := apitest.Decode[slLaunchAnswer](t, rec); a.Code != wire.CodeIPNotAllowed || a.OK {
					t.Fatalf("answer %+v", a)
				}
			}
		})
	}
}

// TestSignedLaunchRedirectForm: redirect=1 answers 302 to the game, and a
// failure is a small HTML page with the same status, not JSON.
func TestSignedLaunchRedirectForm(t *testing.T) {
	h := newSLHarness(t)
	c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch}, gateway.LaunchSettings{})

	q := h.signedQuery(c, "redir-1", "12.34")
	q.Set("redirect", "1")
	rec := h.launchAs(c, q)
	if rec.Code != http.StatusFound {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	loc := rec.Header().Get("Location")
	if !strings.HasPrefix(loc, slPublicURL+"/demo/play?session=gs_") {
		t.Fatalf("Location %q", loc)
	}
	// The JSON form of the same signed launch answers the same game.
	q.Del("redirect")
	if a := apitest.Decode[slLaunchAnswer](t, h.launchAs(c, q)); a.GameURL != loc {
		t.Fatalf("JSON game_url %q, redirect went to %q", a.GameURL, loc)
	}

	bad := h.signedQuery(c, "redir-2", "1")
	bad.Set("sig", strings.Repeat("ab", 32))
	bad.Set("redirect", "1")
	rec = h.launchAs(c, bad)
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("Content-Type %q", ct)
	}
	body := rec.Body.String()
	if !strings.HasPrefix(body, "<!doctype html>") || !strings.Contains(body, "could not be started") ||
		!strings.Contains(body, "sig does not match") || rec.Header().Get("Location") != "" {
		t.Fatalf("error page %s", body)
	}
	if strings.Contains(body, "<script") || strings.Contains(body, "src=") || strings.Contains(body, "href=") {
		t.Fatalf("error page loads something: %s", body)
	}
}

// TestSignedLaunchBalanceSync: the launch balance sets the player's game
// wallet through a balance_synced event whose two postings (the client's
// external account and the wallet) sum to zero; launches are recorded.
func TestSignedLaunchBalanceSync(t *testing.T) {
	h := newSLHarness(t)
	c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch}, gateway.LaunchSettings{})
	user := "sync-user"
	wallet, external := domain.PlayerWallet(c.ID, user, slEUR), domain.ExternalAccount(c.ID, slEUR)

	first := h.mustLaunch(c, user, "100.5", nil)
	h.Clock.Set(slTestNow.Add(time.Second)) // a new ts: a new launch
	second := h.mustLaunch(c, user, "40", nil)
	if first.SessionID == second.SessionID {
		t.Fatalf("two launches share session %s", first.SessionID)
	}

	if got := h.Balance(wallet); got != 4000 {
		t.Fatalf("wallet %d minor units, want 4000", got)
	}
	if got := h.Balance(external); got != -4000 {
		t.Fatalf("external account %d minor units, want -4000", got)
	}
	syncs := h.Events(wallet, domain.EventBalanceSynced)
	want := []struct {
		amount, balanceAfter, session string
		postings                      []domain.Posting
	}{
		{"100.50", "100.50", first.SessionID, []domain.Posting{{Account: external, Amount: "-100.50"}, {Account: wallet, Amount: "100.50"}}},
		{"40.00", "40.00", second.SessionID, []domain.Posting{{Account: external, Amount: "60.50"}, {Account: wallet, Amount: "-60.50"}}},
	}
	if len(syncs) != len(want) {
		t.Fatalf("%d balance_synced events, want %d", len(syncs), len(want))
	}
	for i, w := range want {
		d := syncs[i].Data
		if d.Amount != w.amount || d.BalanceAfter != w.balanceAfter || d.SessionID != w.session || d.GameID != h.game ||
			d.Provider != h.provider || d.PlayerID != user || d.Currency != "EUR" {
			t.Fatalf("sync %d: %+v", i, d)
		}
		if len(d.Postings) != 2 || d.Postings[0] != w.postings[0] || d.Postings[1] != w.postings[1] {
			t.Fatalf("sync %d postings %+v, want %+v", i, d.Postings, w.postings)
		}
		var sum int64
		for _, p := range d.Postings {
			m, err := domain.ParseMoney(p.Amount, slEUR)
			if err != nil {
				t.Fatal(err)
			}
			sum += m.Minor()
		}
		if sum != 0 {
			t.Fatalf("sync %d postings sum to %d", i, sum)
		}
	}
	launches := h.Events(wallet, domain.EventGameLaunched)
	if len(launches) != 2 || launches[0].Data.SessionID != first.SessionID || launches[1].Data.SessionID != second.SessionID {
		t.Fatalf("launch events %+v", launches)
	}
}

// TestSignedLaunchRetry: the same signed URL twice is one launch (same
// session, one sync), and the same signature with a changed unsigned
// parameter is refused.
func TestSignedLaunchRetry(t *testing.T) {
	h := newSLHarness(t)
	c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch}, gateway.LaunchSettings{AllowedReturnHosts: []string{"casino.example"}})
	user := "retry-user"
	q := h.signedQuery(c, user, "50")
	q.Set("return_url", "https://casino.example/lobby")

	first := apitest.Decode[slLaunchAnswer](t, h.launchAs(c, q))
	again := apitest.Decode[slLaunchAnswer](t, h.launchAs(c, q))
	if !first.OK || again.GameURL != first.GameURL || again.SessionID != first.SessionID {
		t.Fatalf("first %+v, again %+v", first, again)
	}
	wallet := domain.PlayerWallet(c.ID, user, slEUR)
	if n := len(h.Events(wallet, domain.EventBalanceSynced)); n != 1 {
		t.Fatalf("%d sync events, want 1", n)
	}
	if n := len(h.Events(wallet, domain.EventGameLaunched)); n != 1 {
		t.Fatalf("%d launch events, want 1", n)
	}

	for _, tc := range []struct{ param, value string }{
		{"currency_code", "USD"},
		{"return_url", "https://casino.example/other"},
	} {
		t.Run(tc.param, func(t *testing.T) {
			changed := url.Values{}
			for k, v := range q {
				changed[k] = v
			}
			changed.Set(tc.param, tc.value)
			rec := h.launchAs(c, changed)
			if rec.Code != http.StatusConflict {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if a := apitest.Decode[slLaunchAnswer](t, rec); a.Code != wire.CodeIdempotencyConflict || !strings.Contains(a.Error, tc.param) {
				t.Fatalf("answer %+v", a)
			}
		})
	}
	if got := h.Balance(domain.PlayerWallet(c.ID, user, domain.MustCurrency("USD"))); got != 0 {
		t.Fatalf("USD wallet moved to %d", got)
	}
}

// TestSignedLaunchProviderUnavailable: a game whose provider is disabled
// is 503.
func TestSignedLaunchProviderUnavailable(t *testing.T) {
	h := newSLHarness(t)
	c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch}, gateway.LaunchSettings{})
	if err := h.Gateway.UpsertProvider(context.Background(), gateway.Provider{ID: h.provider, Name: "Off", Secret: h.providerSecret}); err != nil {
		t.Fatal(err)
	}
	rec := h.launchAs(c, h.signedQuery(c, "u1", "1"))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("status %d, Retry-After %q: %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	if a := apitest.Decode[slLaunchAnswer](t, rec); a.OK || a.Code != wire.CodeUnavailable {
		t.Fatalf("answer %+v", a)
	}
	if got := h.Balance(domain.PlayerWallet(c.ID, "u1", slEUR)); got != 0 {
		t.Fatalf("a refused launch synced the wallet to %d", got)
	}
}

// A signed launch of a game at an outbound provider answers the game
// address that provider's adapter returned, not our demo page.
func TestSignedLaunchUsesTheProviderAdapter(t *testing.T) {
	h := newSLHarness(t)
	c := h.NewLaunchClient("sandbox", []string{gateway.ScopeLaunch}, gateway.LaunchSettings{})
	prov := apitest.NewJSONProvider(t, http.StatusOK)
	if err := h.Gateway.SetProviderRoute(context.Background(), gateway.ProviderRoute{ProviderID: h.provider,
		Kind: gateway.ProviderKindJSON, Endpoints: []string{prov.URL}, Balancing: gateway.BalancingPriority,
		Timeout: 5 * time.Second, BreakerFailures: 2, BreakerCooldown: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	a := h.mustLaunch(c, "u1", "25.00", nil)
	if want := "https://games.example/play?token=" + a.SessionID; a.GameURL != want {
		t.Fatalf("game_url %q, want the provider's %q", a.GameURL, want)
	}
	call := <-prov.Calls
	if call["playerId"] != "u1" || call["token"] != a.SessionID {
		t.Fatalf("provider was called with %v", call)
	}
}
