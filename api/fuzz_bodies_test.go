package api_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
)

// fzServer is the whole HTTP surface wired as `pitboss serve` wires it
// (every store real, on a fresh database, and the demo game), with a
// client, its key, a provider with a secret, a launched session and a
// webhook, so that every route with a body gets as far as decoding and
// validating it.
type fzServer struct {
	*apitest.Harness
	key, adminToken                   string
	provider, providerSecret          string
	session, webhookID, keyID, client string
	logs                              *fzLog
}

// fzLog collects the server's log lines; a panic the recover middleware
// caught shows up there.
type fzLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *fzLog) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.buf.Write(p) }
func (l *fzLog) String() string              { l.mu.Lock(); defer l.mu.Unlock(); return l.buf.String() }

// fzHarness builds the server on a fresh database (dropped when t ends),
// its options changed by with.
func fzHarness(t testing.TB, with ...func(*apitest.Options)) *fzServer {
	t.Helper()
	logs := &fzLog{}
	s := &fzServer{adminToken: strings.Repeat("a", 40), provider: "fzprov", providerSecret: apitest.ProviderSecret("fzprov"),
		client: "fzclient", logs: logs}
	o := apitest.Options{AdminToken: s.adminToken, AllowPrivateCallbacks: true, ReadyTimeout: time.Second,
		DemoGame: true, Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	for _, w := range with {
		w(&o)
	}
	s.Harness = apitest.New(t, o)
	s.AddClient(s.client, "sandbox")
	s.key, s.keyID = s.IssueKey(s.client, gateway.AllScopes...)
	s.AddProvider(s.provider, "Fuzz games", gateway.ProviderKindDemo)
	s.AddGame("fzgame", s.provider, "Fuzz slot", "slots", true)
	for _, d := range []string{
		`{"type":"deposit","transaction_id":"fz-dep","player_id":"fzp","amount":"1000.00","currency":"EUR"}`,
		`{"type":"deposit","transaction_id":"fz-dep-client","amount":"1000.00","currency":"EUR"}`, // for transfers
	} {
		if rec := s.do(t, http.MethodPost, "/api/v1/transactions", []byte(d)); rec.Code != http.StatusOK {
			t.Fatalf("deposit: %d %s", rec.Code, rec.Body)
		}
	}
	rec := s.do(t, http.MethodPost, "/api/v1/game/launch", []byte(`{"provider":"fzprov","game_id":"fzgame","player_id":"fzp","currency":"EUR"}`))
	var launch struct {
		Data struct {
			SessionID string `json:"session_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &launch); err != nil || launch.Data.SessionID == "" {
		t.Fatalf("launch: %d %s", rec.Code, rec.Body)
	}
	s.session = launch.Data.SessionID
	rec = s.do(t, http.MethodPost, "/api/v1/webhooks", []byte(`{"url":"http://127.0.0.1:9/hook","kinds":["bet"]}`))
	var wh struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &wh); err != nil || wh.Data.ID == "" {
		t.Fatalf("webhook: %d %s", rec.Code, rec.Body)
	}
	s.webhookID = wh.Data.ID
	return s
}

// fzRoute is a route that takes a JSON body.
type fzRoute struct {
	method, path string
	auth         string // bearer, admin, provider or none
	valid        string // a body that passes validation
}

func (s *fzServer) routes() []fzRoute {
	cl, wh, key := s.client, s.webhookID, s.keyID
	sess := s.session
	return []fzRoute{
		{http.MethodPost, "/api/v1/transactions", "bearer", `{"type":"deposit","transaction_id":"fz-1","player_id":"fzp","amount":"1.00","currency":"EUR"}`},
		// Another player's launches: a launch of fzp would supersede the
		// session the wallet routes below play in (wallet.Core.Bet).
		{http.MethodPost, "/api/v1/game/launch", "bearer", `{"provider":"fzprov","game_id":"fzgame","player_id":"fzp2","currency":"EUR"}`},
		{http.MethodPost, "/api/v1/game/launch/transfer", "bearer", `{"provider":"fzprov","game_id":"fzgame","player_id":"fzp2","currency":"EUR","amount":"1.00","transfer_id":"fz-t1"}`},
		{http.MethodPost, "/api/v1/webhooks", "bearer", `{"url":"http://127.0.0.1:9/h2","kinds":["win"]}`},
		{http.MethodPatch, "/api/v1/webhooks/" + wh, "bearer", `{"description":"fuzz"}`},
		{http.MethodPost, "/provider/v1/wallet/balance", "provider", `{"session_id":"` + sess + `"}`},
		{http.MethodPost, "/provider/v1/wallet/bet", "provider", `{"session_id":"` + sess + `","transaction_id":"fzb1","amount":"0.10","round_id":"fzr1"}`},
		{http.MethodPost, "/provider/v1/wallet/win", "provider", `{"session_id":"` + sess + `","transaction_id":"fzw1","amount":"0.20","reference_transaction_id":"fzb1"}`},
		{http.MethodPost, "/provider/v1/wallet/rollback", "provider", `{"session_id":"` + sess + `","transaction_id":"fzr1","reference_transaction_id":"fzw1"}`},
		{http.MethodPost, "/demo/spin", "none", `{"session":"` + sess + `","stake":"0.10"}`},
		{http.MethodPost, "/admin/v1/clients", "admin", `{"id":"fzc2","name":"Fuzz two","environment":"sandbox"}`},
		{http.MethodPatch, "/admin/v1/clients/" + cl, "admin", `{"name":"Fuzz operator"}`},
		{http.MethodPost, "/admin/v1/clients/" + cl + "/keys", "admin", `{"scopes":["wallet:read"],"label":"fz"}`},
		{http.MethodPost, "/admin/v1/clients/" + cl + "/keys/" + key + "/rotate", "admin", `{"expires_at":"2099-01-01T00:00:00Z"}`},
		{http.MethodPost, "/admin/v1/clients/" + cl + "/webhooks", "admin", `{"url":"http://127.0.0.1:9/h3","kinds":["*"]}`},
		{http.MethodPatch, "/admin/v1/clients/" + cl + "/webhooks/" + wh, "admin", `{"description":"fz","enabled":true}`},
		{http.MethodPost, "/admin/v1/deals", "admin", `{"provider":"fzprov","currency":"EUR","valid_from":"2099-01-01","kind":"tiered","mode":"whole",` +
			`"bands":[{"from":"0","to":"10","rate":"0.1"},{"from":"10","rate":"0.2"}],"carry_forward":true}`},
	}
}

// do sends a request with the sandbox client's key, failing t.
func (s *fzServer) do(t testing.TB, method, path string, body []byte) *httptest.ResponseRecorder {
	return s.send(t, fzRoute{method: method, path: path, auth: "bearer"}, body)
}

// send sends body to r's route with its authentication, as a request with a
// JSON body (whatever body holds), failing t.
func (s *fzServer) send(t testing.TB, r fzRoute, body []byte) *httptest.ResponseRecorder {
	req := apitest.Request{Method: r.method, Path: r.path, Body: body, Header: map[string]string{"Content-Type": "application/json"}}
	switch r.auth {
	case "bearer":
		req.Key = s.key
	case "admin":
		req.Key = s.adminToken
	case "provider":
		req.Header["X-Provider-Id"] = s.provider
		req.Header["X-Signature"] = apitest.SignV2(s.providerSecret, s.Clock.Now().Unix(), r.method, r.path, body)
	}
	return s.With(t).Do(req)
}

// fzCheck is the property every answer holds: never a 5xx (a panic is
// one: the recover middleware answers 500), and every failure in the one
// error shape with a code and a request id.
func fzCheck(t testing.TB, r fzRoute, body []byte, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code >= 500 {
		t.Fatalf("%s %s with %q: %d %s", r.method, r.path, clip(body), rec.Code, rec.Body)
	}
	if strings.HasPrefix(r.path, "/v1/return") {
		// A page for players: HTML, whatever happened.
		if !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
			t.Fatalf("%s %s: %d %q, want an HTML page", r.method, r.path, rec.Code, rec.Header().Get("Content-Type"))
		}
		return
	}
	if rec.Code >= 400 && strings.HasPrefix(r.path, "/v1/launch") {
		// The signed launch answers in its spec's own shape {ok, error}.
		var e struct {
			OK    *bool  `json:"ok"`
			Error string `json:"error"`
			Code  string `json:"code"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.OK == nil || *e.OK || e.Error == "" || e.Code == "" {
			t.Fatalf("%s %s: %d without the launch error shape: %s", r.method, r.path, rec.Code, rec.Body)
		}
		return
	}
	if rec.Code >= 400 {
		var e struct {
			Success *bool `json:"success"`
			Error   struct {
				Code      string `json:"code"`
				Message   string `json:"message"`
				RequestID string `json:"request_id"`
			} `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Success == nil || *e.Success ||
			e.Error.Code == "" || e.Error.Message == "" || e.Error.RequestID == "" {
			t.Fatalf("%s %s with %q: %d without the error shape: %s", r.method, r.path, clip(body), rec.Code, rec.Body)
		}
	}
}

// firstKey is the first key of a route's valid body ({"key":...}).
func firstKey(body string) string {
	k, _, _ := strings.Cut(strings.TrimPrefix(body, `{"`), `"`)
	return k
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// FuzzRequestBodies sends arbitrary bodies to every route that reads JSON:
// whatever the bytes, the answer is a 2xx or a 4xx in the error shape,
// never a 5xx or a panic. `go test` runs the seeds; `go test -fuzz
// FuzzRequestBodies ./api` explores.
func FuzzRequestBodies(f *testing.F) {
	s := fzHarness(f)
	routes := s.routes()
	variants := []func(string) string{
		func(v string) string { return v },
		func(v string) string { return strings.Replace(v, "{", `{"unknown_field":1,`, 1) },
		func(v string) string { return strings.Replace(v, "{", `{"amount":"9","Amount":"9","amount":"9",`, 1) },
		func(v string) string { return strings.Repeat("[", 40) + strings.Repeat("]", 40) },
		func(v string) string { return v[:len(v)/2] },
		func(v string) string { return v + " {}" },
		func(v string) string { return strings.Replace(v, `":"`, "\":\"\x00\x01\u200b", 1) },
		func(v string) string { return strings.Replace(v, `":"`, "\":\"\xff\xfe", 1) },
		func(v string) string { return strings.Replace(v, `"1.00"`, `1e400`, 1) },
		func(v string) string { return strings.Replace(v, `"0.10"`, `-0.10`, 1) },
		func(v string) string { return `null` },
		func(v string) string { return `"just a string"` },
		func(v string) string { return strings.ReplaceAll(v, `"`, `'`) },
		func(v string) string { return `{"a":` + strings.Repeat(`{"a":`, 20) + `1` + strings.Repeat(`}`, 21) },
	}
	for i, r := range routes {
		for _, v := range variants {
			f.Add(uint8(i), []byte(v(r.valid)))
		}
	}
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		r := routes[int(route)%len(routes)]
		rec := s.send(t, r, body)
		fzCheck(t, r, body, rec)
		if strings.Contains(s.logs.String(), "panic in handler") {
			t.Fatalf("a handler panicked:\n%s", s.logs.String())
		}
	})
}

// TestBadInput sends each route with a body the refusals the issue lists:
// too large, nested too deep, an unknown field, control characters, not
// UTF-8, not JSON; and list routes a huge per_page. Each is a 4xx in the
// error shape with the code below.
func TestBadInput(t *testing.T) {
	s := fzHarness(t)
	big := `{"transaction_id":"` + strings.Repeat("x", wire.MaxBodyBytes) + `"}`
	cases := []struct {
		name string
		body func(valid string) string
		code string // or INVALID_JSON where a field's own decoder refuses it (a time)
	}{
		{"body over the size limit", func(string) string { return big }, wire.CodeBodyTooLarge},
		{"JSON nested deeper than the limit", func(string) string {
			return strings.Repeat(`{"a":`, 64) + `1` + strings.Repeat(`}`, 64)
		}, wire.CodeInvalidJSON},
		{"unknown field", func(v string) string { return strings.Replace(v, "{", `{"is_admin":true,`, 1) }, wire.CodeInvalidRequest},
		{"a string with U+0000", func(v string) string { return strings.Replace(v, `":"`, `":"\u0000`, 1) }, wire.CodeInvalidRequest},
		{"invalid UTF-8", func(v string) string { return strings.Replace(v, `":"`, "\":\"\xc3\x28", 1) }, wire.CodeInvalidJSON},
		{"raw control character in a string", func(v string) string { return strings.Replace(v, `":"`, "\":\"\x01", 1) }, wire.CodeInvalidJSON},
		{"not JSON", func(string) string { return `<xml/>` }, wire.CodeInvalidJSON},
		{"empty body", func(string) string { return `` }, wire.CodeInvalidJSON},
		{"two objects", func(v string) string { return v + v }, wire.CodeInvalidJSON},
		{"a stray closing brace after the object", func(v string) string { return v + "}" }, wire.CodeInvalidJSON},
		// A key given twice, or in another case, is read differently by
		// other readers than by encoding/json (issue 17, item 3).
		{"the first member given twice", func(v string) string {
			first, _, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(v, "{"), "}"), `,"`)
			return strings.TrimSuffix(v, "}") + "," + first + "}"
		}, wire.CodeInvalidRequest},
		{"the first key in upper case", func(v string) string {
			return strings.Replace(v, `"`+firstKey(v)+`"`, `"`+strings.ToUpper(firstKey(v))+`"`, 1)
		}, wire.CodeInvalidRequest},
	}
	for _, r := range s.routes() {
		for _, tc := range cases {
			if tc.name == "empty body" && strings.HasSuffix(r.path, "/rotate") {
				continue // an optional body: empty means the defaults
			}
			t.Run(r.method+" "+r.path+": "+tc.name, func(t *testing.T) {
				body := []byte(tc.body(r.valid))
				rec := s.send(t, r, body)
				fzCheck(t, r, body, rec)
				var e struct {
					Error struct {
						Code string `json:"code"`
					} `json:"error"`
				}
				_ = json.Unmarshal(rec.Body.Bytes(), &e)
				codeOK := e.Error.Code == tc.code || tc.code == wire.CodeInvalidRequest && e.Error.Code == wire.CodeInvalidJSON &&
					strings.HasSuffix(r.path, "/rotate")
				if rec.Code < 400 || rec.Code >= 500 || !codeOK {
					t.Fatalf("%d %s, want a 4xx with %s: %s", rec.Code, e.Error.Code, tc.code, clip(rec.Body.Bytes()))
				}
			})
		}
	}
	t.Run("the valid bodies are accepted", func(t *testing.T) {
		// Otherwise the cases above could pass for the wrong reason.
		for _, r := range s.routes() {
			rec := s.send(t, r, []byte(r.valid))
			if strings.HasSuffix(r.path, "/rotate") && rec.Code == http.StatusConflict {
				continue // a key rotates once; the fuzz seeds may have rotated it
			}
			if rec.Code >= 400 {
				t.Errorf("%s %s with its valid body: %d %s", r.method, r.path, rec.Code, rec.Body)
			}
		}
	})
	for _, l := range []struct{ path, param string }{{"/api/v1/transactions", "per_page"}, {"/api/v1/deliveries", "per_page"},
		{"/api/v1/games", "per_page"}, {"/api/v1/audit/events", "limit"}, {"/admin/v1/clients", "per_page"}} {
		for _, pp := range []string{"1000000000", "99999999999999999999999", "-1", "0", "abc"} {
			path := l.path + "?" + l.param + "=" + pp
			t.Run("GET "+path, func(t *testing.T) {
				auth := "bearer"
				if strings.HasPrefix(l.path, "/admin") {
					auth = "admin"
				}
				r := fzRoute{method: http.MethodGet, path: path, auth: auth}
				rec := s.send(t, r, nil)
				fzCheck(t, r, nil, rec)
				if rec.Code != http.StatusBadRequest {
					t.Fatalf("%s: %d, want 400: %s", path, rec.Code, clip(rec.Body.Bytes()))
				}
			})
		}
	}
}

// FuzzQueryAndPath sends arbitrary path segments and query strings to the
// routes that read them: never a 5xx, every failure in the error shape.
func FuzzQueryAndPath(f *testing.F) {
	s := fzHarness(f)
	routes := []fzRoute{
		{http.MethodGet, "/api/v1/games/{}", "bearer", ""},
		{http.MethodGet, "/api/v1/deliveries/{}", "bearer", ""},
		{http.MethodPost, "/api/v1/deliveries/{}/resend", "bearer", ""},
		{http.MethodGet, "/api/v1/webhooks/{}", "bearer", ""},
		{http.MethodDelete, "/api/v1/webhooks/{}", "bearer", ""},
		{http.MethodGet, "/admin/v1/clients/{}", "admin", ""},
		{http.MethodGet, "/admin/v1/clients/{}/keys", "admin", ""},
		{http.MethodGet, "/api/v1/transactions?", "bearer", ""},
		{http.MethodGet, "/api/v1/wallet/balance?", "bearer", ""},
		{http.MethodGet, "/api/v1/reports/ggr?", "bearer", ""},
		{http.MethodGet, "/api/v1/reports/commission?", "bearer", ""},
		{http.MethodGet, "/api/v1/game/launch?", "bearer", ""},
		{http.MethodGet, "/api/v1/deliveries?", "bearer", ""},
		{http.MethodGet, "/api/v1/games?", "bearer", ""},
		{http.MethodGet, "/api/v1/audit/events?", "bearer", ""},
		{http.MethodGet, "/api/v1/usage?", "bearer", ""},
		{http.MethodGet, "/v1/launch?", "none", ""},
		{http.MethodGet, "/v1/return?", "none", ""},
		{http.MethodGet, "/demo/state?", "none", ""},
		{http.MethodGet, "/admin/v1/clients?", "admin", ""},
	}
	for i := range routes {
		for _, seed := range []string{"x", "%00", "a%00b", "%ff%fe", "..%2f..", strings.Repeat("z", 300),
			"player_id=%00", "player_id=p&currency=XXX", "session=%00", "page=0&per_page=999999999", "from=2025-13-01",
			"api_key=%00&user_id=u&game_uid=g&balance=1&ts=1&sig=00", "min_position=-1", "group_by=day,month",
			"after=%00&limit=1", "status=%00", "granularity=%00"} {
			f.Add(uint8(i), seed)
		}
	}
	f.Fuzz(func(t *testing.T, route uint8, text string) {
		r := routes[int(route)%len(routes)]
		if strings.Contains(r.path, "{}") {
			r.path = strings.Replace(r.path, "{}", text, 1)
		} else {
			r.path += text
		}
		if _, err := http.NewRequest(r.method, "http://x"+r.path, nil); err != nil || !strings.HasPrefix(r.path, "/") {
			return // not a request a client can send
		}
		rec := s.send(t, r, nil)
		fzCheck(t, r, []byte(r.path), rec)
		if strings.Contains(s.logs.String(), "panic in handler") {
			t.Fatalf("a handler panicked:\n%s", s.logs.String())
		}
	})
}
