package api_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pb33f/libopenapi-validator/paths"

	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/adapters/kafka/kafkatest"
	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/internal/eventually"
	"github.com/pitboss/pitboss/operatorsim"
)

// TestOpenAPIConformance boots the service as serve wires it — the API on a
// loopback listener with every store, the ledger writer, the real provider
// registry, the usage meter, the delivery worker, readiness checks — on a
// fresh Postgres database (the read models and the delivery queue are fed
// by pump, below), drives a realistic session through every documented
// operation (successes and the main errors), and validates every answer
// (status, headers, body) against the document in strict mode: an
// undocumented status, field or header fails the test. A request the
// server accepted is also validated against the document, so the document
// is not stricter than the server. Outside systems (an operator's callback
// receiver, game providers) are httptest servers.
func TestOpenAPIConformance(t *testing.T) {
	t.Parallel()
	h := newOAHarness(t)
	h.session()
	h.coverage()
}

// oaHarness is the session's own state around the server: the parsed
// document, the operator's receiver, and what the session has seen.
type oaHarness struct {
	*apitest.Harness
	t        *testing.T
	ctx      context.Context
	spec     *oaSpec
	http     *http.Client
	notReady atomic.Bool // makes the "switch" readiness check fail

	// receiver is the operator's callback and webhook receiver: /cb
	// answers 200; /wh answers 500 (so its deliveries park), or, while
	// hold is set, waits for release (so a re-sent delivery stays pending).
	receiver *httptest.Server
	hold     atomic.Bool
	release  chan struct{}

	// caletaKey is provider "caleta"'s private key: it signs the Caleta
	// wallet calls (docs/protocols/caleta.md).
	caletaKey *rsa.PrivateKey

	mu     sync.Mutex
	seen   map[string]map[int]int // operation -> status -> answers
	checks int
}

// seamlessClient makes the client seam, in seamless mode over an operator
// simulator on loopback.
func (h *oaHarness) seamlessClient(admin string) {
	h.t.Helper()
	sim, err := operatorsim.New(operatorsim.Config{Protocol: operatorsim.ProtocolValkyriePAM, APIToken: "pam-token"})
	if err != nil {
		h.t.Fatal(err)
	}
	srv := httptest.NewServer(sim.Handler())
	h.t.Cleanup(srv.Close)
	h.do(oaReq{method: "POST", path: "/admin/v1/clients", auth: admin, want: oaWant(),
		body: map[string]any{"id": "seam", "name": "Seamless Casino", "environment": "sandbox"}})
	h.do(oaReq{method: "PUT", path: "/admin/v1/clients/seam/wallet", auth: admin, want: oaWant(),
		body: map[string]any{"mode": "seamless", "url": srv.URL, "protocol": "valkyrie-pam", "credential": "pam-token"}})
}

func newOAHarness(t *testing.T) *oaHarness {
	t.Helper()
	return newOAHarnessTiers(t, "sandbox:1000/60s,standard:1000/60s,tiny:2/1h")
}

// newOAHarnessTiers is newOAHarness with the given rate-limit tiers. The
// server is apitest's whole API with the admin API, the usage meter, the
// delivery worker and readiness checks; the read models and the delivery
// queue are fed by Pump.
func newOAHarnessTiers(t *testing.T, rateTiers string) *oaHarness {
	t.Helper()
	h := &oaHarness{t: t, ctx: t.Context(), spec: oaParse(t, oaDocument(t)), seen: map[string]map[int]int{},
		release: make(chan struct{})}
	h.receiver = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/wh" {
			if h.hold.Load() {
				select {
				case <-h.release:
				case <-r.Context().Done():
				}
			}
			http.Error(w, `{"error":"receiver down"}`, http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(h.receiver.Close) // last: after the delivery worker stopped
	brokers := kafkatest.Brokers(t)
	topic := kafkatest.NewTopic(t, brokers, 1) // for the readiness check only
	h.Harness = apitest.New(t, apitest.Options{
		AdminToken: oaAdminToken, RateTiers: rateTiers, AllowPrivateCallbacks: true, ReadWait: 300 * time.Millisecond,
		DeliveryWorker: true, Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelError})),
		Ready: func(pool *pgxpool.Pool) []api.ReadyCheck {
			return []api.ReadyCheck{
				{Name: "postgres", Check: func(ctx context.Context) error { return pool.Ping(ctx) }},
				{Name: "kafka", Check: func(ctx context.Context) error { return kafka.EnsureTopic(ctx, brokers, topic, 1, 1) },
					Optional: true},
				{Name: "switch", Check: func(context.Context) error {
					if h.notReady.Load() {
						return errors.New("switched off by the test")
					}
					return nil
				}},
			}
		},
	})
	t.Cleanup(h.releaseHold) // first: a held attempt lets the worker stop
	h.http = &http.Client{Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	// The catalog: the demo provider, a provider that refuses launches
	// (502), and one that cannot be reached (503).
	refuser := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"errorCode":"PLAYER_BLOCKED","message":"player is blocked"}`))
	}))
	t.Cleanup(refuser.Close)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	downURL := "http://" + closed.Addr().String()
	_ = closed.Close()
	ctx, gw := h.ctx, h.Gateway
	for _, p := range []struct {
		id, kind, endpoint, game string
	}{{"demo", gateway.ProviderKindDemo, "", "demo-slot"}, {"refuser", gateway.ProviderKindJSON, refuser.URL, "refused-slot"},
		{"down", gateway.ProviderKindJSON, downURL, "down-slot"}} {
		if err := gw.UpsertProvider(ctx, gateway.Provider{ID: p.id, Name: "Provider " + p.id, Secret: apitest.ProviderSecret(p.id),
			Enabled: true}); err != nil {
			t.Fatal(err)
		}
		r := gateway.ProviderRoute{ProviderID: p.id, Kind: p.kind, Balancing: gateway.BalancingPriority, Timeout: 2 * time.Second,
			BreakerFailures: 3, BreakerCooldown: 30 * time.Second}
		if p.endpoint != "" {
			r.Endpoints = []string{p.endpoint}
		}
		if err := gw.SetProviderRoute(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := gw.UpsertGame(ctx, gateway.Game{ID: p.game, ProviderID: p.id, Name: "Game " + p.game, Category: "slots",
			Enabled: true}); err != nil {
			t.Fatal(err)
		}
	}
	// Provider "caleta" launches as the demo kind and calls the Caleta
	// wallet, signing with its key.
	h.caletaKey = newRSAKey(t)
	if err := gw.UpsertProvider(ctx, gateway.Provider{ID: "caleta", Name: "Provider caleta", Secret: "s", Enabled: true,
		WalletProtocol: gateway.WalletProtocolCaleta, WalletPublicKey: publicPEM(t, h.caletaKey)}); err != nil {
		t.Fatal(err)
	}
	if err := gw.SetProviderRoute(ctx, gateway.ProviderRoute{ProviderID: "caleta", Kind: gateway.ProviderKindDemo,
		Balancing: gateway.BalancingPriority, Timeout: 2 * time.Second, BreakerFailures: 3, BreakerCooldown: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := gw.UpsertGame(ctx, gateway.Game{ID: "caleta-slot", ProviderID: "caleta", Name: "Game caleta-slot", Category: "slots",
		Enabled: true}); err != nil {
		t.Fatal(err)
	}
	// Provider "redtiger" launches as the demo kind and calls the Red
	// Tiger wallet with its secret as the API key.
	if err := gw.UpsertProvider(ctx, gateway.Provider{ID: "redtiger", Name: "Provider redtiger", Secret: "rt-key", Enabled: true,
		WalletProtocol: gateway.WalletProtocolRedTiger}); err != nil {
		t.Fatal(err)
	}
	if err := gw.SetProviderRoute(ctx, gateway.ProviderRoute{ProviderID: "redtiger", Kind: gateway.ProviderKindDemo,
		Balancing: gateway.BalancingPriority, Timeout: 2 * time.Second, BreakerFailures: 3, BreakerCooldown: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := gw.UpsertGame(ctx, gateway.Game{ID: "redtiger-slot", ProviderID: "redtiger", Name: "Game redtiger-slot", Category: "slots",
		Enabled: true}); err != nil {
		t.Fatal(err)
	}
	// Provider "evolution" launches as the demo kind and calls Evolution's
	// wallet with its secret as the authToken.
	if err := gw.UpsertProvider(ctx, gateway.Provider{ID: "evolution", Name: "Provider evolution", Secret: oaEvolutionSecret,
		Enabled: true, WalletProtocol: gateway.WalletProtocolEvolution}); err != nil {
		t.Fatal(err)
	}
	if err := gw.SetProviderRoute(ctx, gateway.ProviderRoute{ProviderID: "evolution", Kind: gateway.ProviderKindDemo,
		Balancing: gateway.BalancingPriority, Timeout: 2 * time.Second, BreakerFailures: 3, BreakerCooldown: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := gw.UpsertGame(ctx, gateway.Game{ID: "evo-table", ProviderID: "evolution", Name: "Game evo-table", Category: "live",
		Enabled: true}); err != nil {
		t.Fatal(err)
	}
	// Provider "tbb" launches as the demo kind and calls The Bet Brothers'
	// Game Events wallet, signing each body with its secret.
	if err := gw.UpsertProvider(ctx, gateway.Provider{ID: "tbb", Name: "Provider tbb", Secret: oaTBBSecret, Enabled: true,
		WalletProtocol: gateway.WalletProtocolTBB}); err != nil {
		t.Fatal(err)
	}
	if err := gw.SetProviderRoute(ctx, gateway.ProviderRoute{ProviderID: "tbb", Kind: gateway.ProviderKindDemo,
		Balancing: gateway.BalancingPriority, Timeout: 2 * time.Second, BreakerFailures: 3, BreakerCooldown: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := gw.UpsertGame(ctx, gateway.Game{ID: "tbb-slot", ProviderID: "tbb", Name: "Game tbb-slot", Category: "slots",
		Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if err := gw.SetProviderGameCode(ctx, "tbb-slot", "tbb_symbol"); err != nil { // the calls' game_symbol
		t.Fatal(err)
	}
	return h
}

// redTiger calls the Red Tiger wallet as provider "redtiger" with key and
// checks the HTTP status and, for a refusal, the protocol's code.
func (h *oaHarness) redTiger(call, key string, body any, status, code int) oaResp {
	h.t.Helper()
	r := h.do(oaReq{method: "POST", path: "/provider/redtiger/redtiger/wallet/" + call, body: body,
		header: map[string]string{"Authorization": key}, want: oaWant(status)})
	if status != 200 {
		if got := r.str("error", "code"); got != strconv.Itoa(code) {
			h.t.Fatalf("redtiger %s: code %s, want %d: %s", call, got, code, r.body)
		}
	}
	return r
}

// oaEvolutionSecret is provider "evolution"'s secret: the authToken of its
// calls (docs/protocols/evolution.md).
const oaEvolutionSecret = "evolution-secret"

// evolution calls Evolution's wallet as provider "evolution" with token
// as the authToken, and checks the answer's HTTP and protocol status.
func (h *oaHarness) evolution(call, token string, body map[string]any, code int, status string) oaResp {
	h.t.Helper()
	b, _ := json.Marshal(body)
	r := h.do(oaReq{method: "POST", path: "/provider/evolution/evolution/wallet/" + call + "?authToken=" + token, body: b,
		want: oaWant(code)})
	if got := r.str("status"); got != status {
		h.t.Fatalf("evolution %s: status %q, want %s: %s", call, got, status, r.body)
	}
	return r
}

// oaTBBSecret is provider "tbb"'s secret: it signs its calls'
// X-REQUEST-SIGN (docs/protocols/tbb.md).
const oaTBBSecret = "tbb-secret"

// tbb calls The Bet Brothers' wallet as provider "tbb", the body signed
// with sign (nil: the provider's secret), and checks the HTTP status and,
// for a refusal, that the code is the status.
func (h *oaHarness) tbb(call string, body map[string]any, status int, sign func([]byte) string) oaResp {
	h.t.Helper()
	b, _ := json.Marshal(body)
	sig := oaHMAC(oaTBBSecret, string(b))
	if sign != nil {
		sig = sign(b)
	}
	r := h.do(oaReq{method: "POST", path: "/provider/tbb/tbb/wallet/" + call, body: b,
		header: map[string]string{"X-REQUEST-SIGN": sig}, want: oaWant(status)})
	if status != 200 {
		if got := r.str("code"); got != strconv.Itoa(status) {
			h.t.Fatalf("tbb %s: code %s, want %d: %s", call, got, status, r.body)
		}
	}
	return r
}

// caleta calls the Caleta wallet as provider "caleta", signed with its
// key, and checks the answer's status (every answer is HTTP 200).
func (h *oaHarness) caleta(call string, body map[string]any, status string) oaResp {
	h.t.Helper()
	b, _ := json.Marshal(body)
	r := h.do(oaReq{method: "POST", path: "/provider/caleta/caleta/wallet/" + call, body: b,
		header: map[string]string{"X-Auth-Signature": caletaSign(h.t, h.caletaKey, b)}, want: oaWant()})
	if got := r.str("status"); got != status {
		h.t.Fatalf("caleta %s: status %q, want %s: %s", call, got, status, r.body)
	}
	return r
}

func (h *oaHarness) releaseHold() {
	if h.hold.CompareAndSwap(true, false) {
		close(h.release)
	}
}

func oaUID(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// oaReq is one request of the session.
type oaReq struct {
	method, path string
	auth         string            // Authorization: Bearer <auth> when set
	header       map[string]string // more request headers
	body         any               // string or []byte: sent verbatim; else JSON-encoded
	want         []int             // acceptable statuses
	code         string            // the expected error code, if any
	base         string            // another server than the harness's
}

// oaResp is an answer.
type oaResp struct {
	status int
	header http.Header
	body   []byte
	json   map[string]any // nil unless the answer is JSON
}

func (r oaResp) str(keys ...string) string { return oaString(r.json, keys...) }

// do sends the request, checks its status, and validates the exchange
// against the document.
func (h *oaHarness) do(r oaReq) oaResp {
	h.t.Helper()
	var raw []byte
	switch b := r.body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			h.t.Fatal(err)
		}
	}
	newReq := func() *http.Request {
		var body io.Reader
		if raw != nil {
			body = bytes.NewReader(raw)
		}
		base := h.URL
		if r.base != "" {
			base = r.base
		}
		req, err := http.NewRequestWithContext(h.ctx, r.method, base+r.path, body)
		if err != nil {
			h.t.Fatal(err)
		}
		if raw != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if r.auth != "" {
			req.Header.Set("Authorization", "Bearer "+r.auth)
		}
		for k, v := range r.header {
			req.Header.Set(k, v)
		}
		return req
	}
	res, err := h.http.Do(newReq())
	if err != nil {
		h.t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	body, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if err != nil {
		h.t.Fatalf("%s %s: read the answer: %v", r.method, r.path, err)
	}
	out := oaResp{status: res.StatusCode, header: res.Header, body: body}
	if strings.Contains(res.Header.Get("Content-Type"), "json") {
		out.json = oaBody(h.t, body)
	}
	what := fmt.Sprintf("%s %s -> %d", r.method, r.path, res.StatusCode)
	if !slices.Contains(r.want, res.StatusCode) {
		h.t.Fatalf("%s, want %v: %s", what, r.want, oaClip(body))
	}
	if r.code != "" {
		got := out.str("error", "code")
		if out.json != nil && out.json["ok"] != nil { // the signed launch's shape
			got = out.str("code")
		}
		if got != r.code {
			h.t.Fatalf("%s: code %q, want %s: %s", what, got, r.code, oaClip(body))
		}
	}

	// The answer against the document.
	res.Body = io.NopCloser(bytes.NewReader(body))
	vreq := newReq()
	if ok, errs := h.spec.validator.ValidateHttpResponse(vreq, res); !ok {
		h.t.Errorf("%s: the answer does not conform to the document:%s\n    body: %s", what, oaErrorText(errs), oaClip(body))
	}
	// A request the server accepted must be valid by the document.
	if res.StatusCode < 400 {
		if ok, errs := h.spec.validator.ValidateHttpRequest(newReq()); !ok {
			h.t.Errorf("%s: the server accepted a request the document calls invalid:%s", what, oaErrorText(errs))
		}
	}
	h.checkHeaders(r, out, what)

	item, _, tmpl := paths.FindPath(newReq(), h.spec.model, h.spec.opts)
	if item == nil {
		h.t.Errorf("%s: no documented path", what)
	} else {
		op := r.method + " " + tmpl
		h.mu.Lock()
		if h.seen[op] == nil {
			h.seen[op] = map[int]int{}
		}
		h.seen[op][res.StatusCode]++
		h.checks++
		h.mu.Unlock()
	}
	return out
}

// checkHeaders asserts what the document states in prose: the request id
// in the header and the error body agree; authenticated /api/v1 answers
// carry the rate-limit headers; Retry-After agrees with
// details.retry_after_seconds.
func (h *oaHarness) checkHeaders(r oaReq, res oaResp, what string) {
	h.t.Helper()
	rid := res.header.Get("X-Request-Id")
	if rid == "" {
		h.t.Errorf("%s: no X-Request-Id", what)
	}
	if res.json != nil {
		if got := res.str("error", "request_id"); res.json["error"] != nil && res.json["ok"] == nil && got != rid {
			h.t.Errorf("%s: error.request_id %q, X-Request-Id %q", what, got, rid)
		}
		if got := res.str("request_id"); res.json["ok"] != nil && got != "" && got != rid {
			h.t.Errorf("%s: request_id %q, X-Request-Id %q", what, got, rid)
		}
	}
	path, _, _ := strings.Cut(r.path, "?")
	if strings.HasPrefix(path, "/api/v1/") && path != api.OpenAPIPath && res.status != 401 && res.status != 500 {
		for _, hd := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
			if _, err := strconv.ParseInt(res.header.Get(hd), 10, 64); err != nil {
				h.t.Errorf("%s: %s is %q", what, hd, res.header.Get(hd))
			}
		}
	}
	if ra := oaString(res.json, "error", "details", "retry_after_seconds"); ra != "" && res.header.Get("Retry-After") != ra {
		h.t.Errorf("%s: Retry-After %q, details.retry_after_seconds %s", what, res.header.Get("Retry-After"), ra)
	}
	if res.status == http.StatusTooManyRequests && res.header.Get("Retry-After") == "" {
		h.t.Errorf("%s: 429 without Retry-After", what)
	}
}

func oaClip(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

// coverage fails for a documented operation the session never answered
// with success, and logs the documented statuses it did not see.
func (h *oaHarness) coverage() {
	h.t.Helper()
	var missing []string
	exercised := 0
	for _, op := range h.spec.operations() {
		statuses := h.seen[op]
		ok := false
		for st := range statuses {
			if st < 400 {
				ok = true
			}
		}
		if !ok {
			h.t.Errorf("the session never answered %s with success (seen %v)", op, statuses)
		}
		for code := range h.spec.operation(op)["responses"].(map[string]any) {
			st, _ := strconv.Atoi(code)
			if statuses[st] == 0 {
				missing = append(missing, op+" "+code)
			} else {
				exercised++
			}
		}
	}
	slices.Sort(missing)
	h.t.Logf("%d answers validated; %d operations; %d documented (operation, status) pairs seen, %d not exercised:\n  %s",
		h.checks, len(h.spec.operations()), exercised, len(missing), strings.Join(missing, "\n  "))
}

func oaQuery(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v.Encode()
}

func oaHMAC(key, msg string) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

// walletSignature is provider "demo"'s v2 X-Signature of a wallet call
// now.
func (h *oaHarness) walletSignature(call, body string) string {
	return apitest.SignV2(apitest.ProviderSecret("demo"), h.Clock.Now().Unix(), http.MethodPost, "/provider/v1/wallet/"+call, []byte(body))
}

// wallet calls the provider wallet as provider "demo".
func (h *oaHarness) wallet(call string, body any, want int, code string) oaResp {
	h.t.Helper()
	b, _ := json.Marshal(body)
	return h.do(oaReq{method: "POST", path: "/provider/v1/wallet/" + call, body: b,
		header: map[string]string{"X-Provider-Id": "demo", "X-Signature": h.walletSignature(call, string(b))},
		want:   []int{want}, code: code})
}

// readYourWrite reads with min_position: 503 READ_MODEL_BEHIND while the
// events are not projected, 200 once they are.
func (h *oaHarness) readYourWrite(r oaReq) oaResp {
	h.t.Helper()
	r.want, r.code = []int{503}, wire.CodeReadModelBehind
	h.do(r)
	h.Pump()
	r.want, r.code = []int{200}, ""
	return h.do(r)
}

func oaWant(statuses ...int) []int {
	if len(statuses) == 0 {
		return []int{200}
	}
	return statuses
}

// session drives every documented operation.
func (h *oaHarness) session() {
	t := h.t
	const admin = oaAdminToken
	do := h.do

	// Meta and operations.
	do(oaReq{method: "GET", path: "/api/v1/openapi.json", want: oaWant()})
	do(oaReq{method: "GET", path: "/healthz", want: oaWant()})
	do(oaReq{method: "GET", path: "/readyz", want: oaWant()})
	h.notReady.Store(true)
	do(oaReq{method: "GET", path: "/readyz", want: oaWant(503), code: wire.CodeUnavailable})
	h.notReady.Store(false)
	do(oaReq{method: "GET", path: "/metrics", want: oaWant()})

	// Admin: tiers, clients, keys.
	do(oaReq{method: "GET", path: "/admin/v1/tiers", auth: admin, want: oaWant()})
	do(oaReq{method: "GET", path: "/admin/v1/tiers", want: oaWant(401), code: wire.CodeUnauthorized})
	// Exchange rates (docs/reporting-currency.md), JSON and CSV.
	do(oaReq{method: "PUT", path: "/admin/v1/fx-rates", auth: admin, want: oaWant(),
		body: map[string]any{"rates": []any{map[string]any{"base": "EUR", "quote": "USD", "day": "2025-03-01", "rate": "1.10"}}}})
	do(oaReq{method: "PUT", path: "/admin/v1/fx-rates", auth: admin, want: oaWant(), header: map[string]string{"Content-Type": "text/csv"},
		body: "day,base,quote,rate\n2025-03-02,USD,EUR,0.8\n"})
	do(oaReq{method: "PUT", path: "/admin/v1/fx-rates", auth: admin, want: oaWant(400), code: wire.CodeInvalidRequest,
		body: map[string]any{"rates": []any{map[string]any{"base": "EUR", "quote": "EUR", "day": "2025-03-01", "rate": "1"}}}})
	do(oaReq{method: "GET", path: "/admin/v1/fx-rates?base=EUR&from=2025-03-01&to=2025-03-31", auth: admin, want: oaWant()})
	do(oaReq{method: "GET", path: "/admin/v1/fx-rates?to=March", auth: admin, want: oaWant(400), code: wire.CodeInvalidRequest})
	acme := map[string]any{"id": "acme", "name": "Acme Casino", "environment": "sandbox", "plan": "standard"}
	if r := do(oaReq{method: "POST", path: "/admin/v1/clients", auth: admin, body: acme, want: oaWant()}); oaGet(r.json, "data", "created") != true {
		t.Fatalf("client not created: %s", r.body)
	}
	do(oaReq{method: "POST", path: "/admin/v1/clients", auth: admin, body: acme, want: oaWant()})
	// Commission deals (docs/finance.md): flat and tiered versions, bad
	// terms, the list and the history.
	do(oaReq{method: "POST", path: "/admin/v1/deals", auth: admin, want: oaWant(),
		body: map[string]any{"provider": "prov-a", "valid_from": "2025-01-01", "kind": "flat", "rate": "0.1", "backdate": true}})
	do(oaReq{method: "POST", path: "/admin/v1/deals", auth: admin, want: oaWant(),
		body: map[string]any{"provider": "prov-a", "client_id": "acme", "currency": "EUR", "valid_from": "2025-02-01", "kind": "tiered",
			"mode": "marginal", "carry_forward": true, "backdate": true, "note": "Q1 deal",
			"bands": []any{map[string]any{"from": "0", "to": "1000", "rate": "0.1"}, map[string]any{"from": "1000", "rate": "0.2"}}}})
	do(oaReq{method: "POST", path: "/admin/v1/deals", auth: admin, want: oaWant(400), code: wire.CodeInvalidRequest,
		body: map[string]any{"provider": "prov-a", "currency": "EUR", "valid_from": "2025-02-01", "kind": "tiered", "mode": "whole",
			"backdate": true, "bands": []any{map[string]any{"from": "0", "to": "1000", "rate": "0.1"}, map[string]any{"from": "1001", "rate": "0.2"}}}})
	do(oaReq{method: "GET", path: "/admin/v1/deals?provider=prov-a&client_id=acme&with_defaults=true", auth: admin, want: oaWant()})
	do(oaReq{method: "GET", path: "/admin/v1/deals?with_defaults=maybe", auth: admin, want: oaWant(400), code: wire.CodeInvalidRequest})
	do(oaReq{method: "GET", path: "/admin/v1/deals/history?provider=prov-a&per_page=1", auth: admin, want: oaWant()})
	do(oaReq{method: "GET", path: "/admin/v1/deals/history?per_page=0", auth: admin, want: oaWant(400), code: wire.CodeInvalidRequest})
	do(oaReq{method: "POST", path: "/admin/v1/clients", auth: admin, want: oaWant(409), code: wire.CodeClientExists,
		body: map[string]any{"id": "acme", "name": "Someone else", "environment": "sandbox"}})
	do(oaReq{method: "POST", path: "/admin/v1/clients", auth: admin, want: oaWant(400), code: wire.CodeInvalidRequest,
		body: map[string]any{"id": "x", "name": "X", "environment": "staging"}})
	do(oaReq{method: "POST", path: "/admin/v1/clients", auth: admin, want: oaWant(400), code: wire.CodeInvalidJSON, body: `{"id":`})
	do(oaReq{method: "POST", path: "/admin/v1/clients", auth: admin, want: oaWant(),
		body: map[string]any{"id": "tiny", "name": "Tiny plan", "environment": "sandbox", "plan": "tiny"}})
	do(oaReq{method: "GET", path: "/admin/v1/clients?page=1&per_page=10", auth: admin, want: oaWant()})
	do(oaReq{method: "GET", path: "/admin/v1/clients?per_page=0", auth: admin, want: oaWant(400), code: wire.CodeInvalidRequest})
	do(oaReq{method: "GET", path: "/admin/v1/clients/acme", auth: admin, want: oaWant()})
	do(oaReq{method: "GET", path: "/admin/v1/clients/nobody", auth: admin, want: oaWant(404), code: wire.CodeNotFound})
	do(oaReq{method: "PATCH", path: "/admin/v1/clients/acme", auth: admin, want: oaWant(), body: map[string]any{
		"forward_callback_url": h.receiver.URL + "/cb", "allowed_return_hosts": []string{"casino.example"},
		"require_signature": nil, "default_currency": "EUR", "ip_allow_list": []string{}}})
	do(oaReq{method: "PATCH", path: "/admin/v1/clients/acme", auth: admin, want: oaWant(400), code: wire.CodeInvalidRequest,
		body: map[string]any{"environment": "production"}})
	do(oaReq{method: "PUT", path: "/admin/v1/clients/acme/wallet", auth: admin, want: oaWant(), body: map[string]any{
		"mode": "seamless", "url": "https://pam.casino.example/pam", "protocol": "valkyrie-pam", "credential": "pam-token"}})
	do(oaReq{method: "PUT", path: "/admin/v1/clients/acme/wallet", auth: admin, want: oaWant(), body: map[string]any{"mode": "ledger"}})
	do(oaReq{method: "PUT", path: "/admin/v1/clients/acme/wallet", auth: admin, want: oaWant(400), code: wire.CodeInvalidRequest,
		body: map[string]any{"mode": "hybrid"}})
	do(oaReq{method: "PUT", path: "/admin/v1/clients/nobody/wallet", auth: admin, want: oaWant(404), code: wire.CodeNotFound,
		body: map[string]any{"mode": "ledger"}})
	do(oaReq{method: "GET", path: "/admin/v1/seamless/follow-ups?state=all", auth: admin, want: oaWant()})
	do(oaReq{method: "GET", path: "/admin/v1/clients/acme/seamless/reconciliation?day=2025-03-01", auth: admin,
		want: oaWant(400), code: wire.CodeInvalidRequest}) // acme keeps its players' money in the ledger
	h.seamlessClient(admin)
	do(oaReq{method: "GET", path: "/admin/v1/clients/seam/seamless/reconciliation?day=2025-03-01", auth: admin, want: oaWant()})
	do(oaReq{method: "GET", path: "/admin/v1/seamless/follow-ups?state=done", auth: admin, want: oaWant(400), code: wire.CodeInvalidRequest})
	secret := do(oaReq{method: "POST", path: "/admin/v1/clients/acme/client-secret", auth: admin, want: oaWant()}).
		str("data", "client_secret")

	issue := func(client string, scopes ...string) (key, id string) {
		r := do(oaReq{method: "POST", path: "/admin/v1/clients/" + client + "/keys", auth: admin, want: oaWant(),
			body: map[string]any{"scopes": scopes, "label": "conformance"}})
		return r.str("data", "key"), r.str("data", "id")
	}
	full, fullID := issue("acme", gateway.AllScopes...)
	walletOnly, _ := issue("acme", gateway.ScopeWalletRead)
	tinyKey, _ := issue("tiny", gateway.ScopeWalletRead)
	_, rotID := issue("acme", gateway.ScopeLaunch)
	_, revID := issue("acme", gateway.ScopeLaunch)
	do(oaReq{method: "POST", path: "/admin/v1/clients/acme/keys", auth: admin, want: oaWant(400), code: wire.CodeInvalidRequest,
		body: map[string]any{"scopes": []string{}}})
	do(oaReq{method: "GET", path: "/admin/v1/clients/acme/keys", auth: admin, want: oaWant()})
	do(oaReq{method: "GET", path: "/admin/v1/clients/acme/keys/" + fullID, auth: admin, want: oaWant()})
	do(oaReq{method: "GET", path: "/admin/v1/clients/acme/keys/000000000000", auth: admin, want: oaWant(404), code: wire.CodeNotFound})
	do(oaReq{method: "POST", path: "/admin/v1/clients/acme/keys/" + rotID + "/rotate", auth: admin, want: oaWant(),
		body: map[string]any{"grace_period_seconds": 60}})
	do(oaReq{method: "POST", path: "/admin/v1/clients/acme/keys/" + rotID + "/rotate", auth: admin, want: oaWant(409),
		code: wire.CodeKeyAlreadyRotated})
	do(oaReq{method: "POST", path: "/admin/v1/clients/acme/keys/" + revID + "/revoke", auth: admin, want: oaWant()})
	do(oaReq{method: "POST", path: "/admin/v1/clients/acme/keys/" + revID + "/rotate", auth: admin, want: oaWant(409),
		code: wire.CodeKeyNotActive})
	do(oaReq{method: "POST", path: "/admin/v1/clients/acme/keys/" + revID + "/rotate", auth: admin, want: oaWant(400),
		code: wire.CodeInvalidRequest, body: map[string]any{"grace_period_seconds": -1}})
	do(oaReq{method: "GET", path: "/admin/v1/tiers", auth: full, want: oaWant(403), code: wire.CodeForbidden})

	// Admin: the tokens area's reveal of the client secret, and its trail.
	const reveal, reveals = "/admin/v1/clients/acme/client-secret/reveal", "/admin/v1/clients/acme/client-secret/reveals"
	if got := do(oaReq{method: "POST", path: reveal, auth: admin, want: oaWant(), body: map[string]any{"reason": "conformance"}}).
		str("data", "client_secret"); got != secret {
		t.Fatalf("revealed %q, issued %q", got, secret)
	}
	do(oaReq{method: "POST", path: reveal, auth: admin, want: oaWant()})
	do(oaReq{method: "POST", path: reveal, auth: admin, want: oaWant(400), code: wire.CodeInvalidRequest,
		body: map[string]any{"reason": "two\nlines"}})
	do(oaReq{method: "POST", path: reveal, want: oaWant(401), code: wire.CodeUnauthorized})
	do(oaReq{method: "POST", path: reveal, auth: full, want: oaWant(403), code: wire.CodeForbidden})
	do(oaReq{method: "POST", path: "/admin/v1/clients/nobody/client-secret/reveal", auth: admin, want: oaWant(404), code: wire.CodeNotFound})
	do(oaReq{method: "POST", path: "/admin/v1/clients/tiny/client-secret/reveal", auth: admin, want: oaWant(409),
		code: wire.CodeClientSecretNotIssued})
	if r := do(oaReq{method: "GET", path: reveals + "?page=1&per_page=10", auth: admin, want: oaWant()}); r.str("pagination", "total") != "2" {
		t.Fatalf("the trail after two reveals: %s", r.body)
	}
	do(oaReq{method: "GET", path: reveals + "?per_page=0", auth: admin, want: oaWant(400), code: wire.CodeInvalidRequest})
	do(oaReq{method: "GET", path: reveals, want: oaWant(401), code: wire.CodeUnauthorized})
	do(oaReq{method: "GET", path: reveals, auth: full, want: oaWant(403), code: wire.CodeForbidden})
	do(oaReq{method: "GET", path: "/admin/v1/clients/nobody/client-secret/reveals", auth: admin, want: oaWant(404), code: wire.CodeNotFound})

	// Admin: a client's webhook endpoints.
	wh := do(oaReq{method: "POST", path: "/admin/v1/clients/acme/webhooks", auth: admin, want: oaWant(),
		body: map[string]any{"url": "https://hooks.example/pitboss", "kinds": []string{"deposit"}, "description": "admin"}}).
		str("data", "id")
	do(oaReq{method: "POST", path: "/admin/v1/clients/acme/webhooks", auth: admin, want: oaWant(400), code: wire.CodeInvalidRequest,
		body: map[string]any{"url": "ftp://hooks.example", "kinds": []string{"deposit"}}})
	do(oaReq{method: "GET", path: "/admin/v1/clients/acme/webhooks", auth: admin, want: oaWant()})
	do(oaReq{method: "GET", path: "/admin/v1/clients/nobody/webhooks", auth: admin, want: oaWant(404), code: wire.CodeNotFound})
	do(oaReq{method: "GET", path: "/admin/v1/clients/acme/webhooks/" + wh, auth: admin, want: oaWant()})
	do(oaReq{method: "PATCH", path: "/admin/v1/clients/acme/webhooks/" + wh, auth: admin, want: oaWant(),
		body: map[string]any{"enabled": false}})
	do(oaReq{method: "PATCH", path: "/admin/v1/clients/acme/webhooks/" + wh, auth: admin, want: oaWant(400),
		code: wire.CodeInvalidRequest, body: map[string]any{"kinds": []string{"nonsense"}}})
	do(oaReq{method: "DELETE", path: "/admin/v1/clients/acme/webhooks/" + wh, auth: admin, want: oaWant()})
	do(oaReq{method: "GET", path: "/admin/v1/clients/acme/webhooks/" + wh, auth: admin, want: oaWant(404), code: wire.CodeNotFound})

	// The client's own webhook endpoint, to the receiver's failing path:
	// its deliveries park after one attempt.
	do(oaReq{method: "GET", path: "/api/v1/webhooks", auth: full, want: oaWant()})
	ownWH := do(oaReq{method: "POST", path: "/api/v1/webhooks", auth: full, want: oaWant(),
		body: map[string]any{"url": h.receiver.URL + "/wh", "kinds": []string{"*"}}}).str("data", "id")
	do(oaReq{method: "POST", path: "/api/v1/webhooks", auth: full, want: oaWant(400), code: wire.CodeInvalidRequest,
		body: map[string]any{"url": h.receiver.URL + "/wh", "kinds": []string{"nonsense"}}})
	do(oaReq{method: "POST", path: "/api/v1/webhooks", auth: walletOnly, want: oaWant(403), code: wire.CodeForbidden,
		body: map[string]any{"url": h.receiver.URL + "/wh", "kinds": []string{"*"}}})
	do(oaReq{method: "GET", path: "/api/v1/webhooks/" + ownWH, auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/webhooks/wh_unknown", auth: full, want: oaWant(404), code: wire.CodeNotFound})
	do(oaReq{method: "PATCH", path: "/api/v1/webhooks/" + ownWH, auth: full, want: oaWant(),
		body: map[string]any{"description": "conformance receiver"}})
	do(oaReq{method: "PATCH", path: "/api/v1/webhooks/" + ownWH, auth: full, want: oaWant(400), code: wire.CodeInvalidRequest,
		body: map[string]any{"colour": "red"}})
	do(oaReq{method: "POST", path: "/api/v1/webhooks/" + ownWH + "/rotate-secret", auth: full, want: oaWant()})
	doomed := do(oaReq{method: "POST", path: "/api/v1/webhooks", auth: full, want: oaWant(),
		body: map[string]any{"url": "https://hooks.example/doomed", "kinds": []string{"bet"}, "enabled": false}}).str("data", "id")
	do(oaReq{method: "DELETE", path: "/api/v1/webhooks/" + doomed, auth: full, want: oaWant()})

	// Free-bet campaigns (docs/promotions.md) of the demo provider, which
	// has no promotion API: recorded on our side only.
	campaign := map[string]any{"campaign_id": "oa-spring", "provider": "demo", "games": []string{"demo-slot"},
		"currency": "EUR", "bet_value": "0.50", "free_bets": 2, "valid_until": "2099-01-01T00:00:00Z"}
	do(oaReq{method: "POST", path: "/api/v1/campaigns", auth: full, want: oaWant(), body: campaign})
	do(oaReq{method: "POST", path: "/api/v1/campaigns", auth: full, want: oaWant(400), code: wire.CodeInvalidRequest,
		body: map[string]any{"campaign_id": "oa-bad", "provider": "demo", "games": []string{}, "currency": "EUR",
			"bet_value": "0.50", "free_bets": 2, "valid_until": "2099-01-01T00:00:00Z"}})
	do(oaReq{method: "POST", path: "/api/v1/campaigns", auth: walletOnly, want: oaWant(403), code: wire.CodeForbidden, body: campaign})
	do(oaReq{method: "GET", path: "/api/v1/campaigns", auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/campaigns/oa-spring", auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/campaigns/oa-none", auth: full, want: oaWant(404), code: wire.CodeNotFound})
	do(oaReq{method: "POST", path: "/api/v1/campaigns/oa-spring/rewards", auth: full, want: oaWant(),
		body: map[string]any{"rewards": []any{map[string]any{"reward_id": "oa-rw-1", "player_id": "oa-player"},
			map[string]any{"reward_id": "oa-rw-2", "player_id": "oa-player"}}}})
	do(oaReq{method: "GET", path: "/api/v1/campaigns/oa-spring/rewards", auth: full, want: oaWant()})
	do(oaReq{method: "POST", path: "/api/v1/campaigns/oa-spring/rewards/oa-rw-2/cancel", auth: full, want: oaWant(),
		body: map[string]any{"reason": "conformance"}})
	do(oaReq{method: "POST", path: "/api/v1/campaigns/oa-spring/rewards/oa-rw-9/cancel", auth: full, want: oaWant(404),
		code: wire.CodeNotFound})
	do(oaReq{method: "GET", path: "/api/v1/reports/campaigns", auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/reports/campaigns?campaign_id=oa-spring&reporting_currency=USD", auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/reports/campaigns", auth: full, want: oaWant(), header: map[string]string{"Accept": "text/csv"}})
	do(oaReq{method: "GET", path: "/api/v1/reports/campaigns?from=2025-03-02&to=2025-03-01", auth: full, want: oaWant(400),
		code: wire.CodeInvalidRequest})
	do(oaReq{method: "DELETE", path: "/api/v1/webhooks/" + doomed, auth: full, want: oaWant(404), code: wire.CodeNotFound})
	do(oaReq{method: "POST", path: "/api/v1/webhooks/" + doomed + "/rotate-secret", auth: full, want: oaWant(404), code: wire.CodeNotFound})
	do(oaReq{method: "GET", path: "/api/v1/forward-callback", auth: full, want: oaWant()})
	do(oaReq{method: "POST", path: "/api/v1/forward-callback/rotate-secret", auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/forward-callback", auth: walletOnly, want: oaWant(403), code: wire.CodeForbidden})

	// Money: the operator's own transactions.
	deposit := map[string]any{"type": "deposit", "transaction_id": "dep-1", "amount": 1000.5, "currency": "EUR"}
	do(oaReq{method: "POST", path: "/api/v1/transactions", auth: full, body: deposit, want: oaWant()})
	if r := do(oaReq{method: "POST", path: "/api/v1/transactions", auth: full, body: deposit, want: oaWant()}); oaGet(r.json, "data", "replayed") != true {
		t.Fatalf("a retried deposit was not replayed: %s", r.body)
	}
	do(oaReq{method: "POST", path: "/api/v1/transactions", auth: full, want: oaWant(409), code: wire.CodeIdempotencyConflict,
		body: map[string]any{"type": "deposit", "transaction_id": "dep-1", "amount": "999", "currency": "EUR"}})
	do(oaReq{method: "POST", path: "/api/v1/transactions", auth: full, want: oaWant(), body: map[string]any{
		"type": "transfer", "transaction_id": "tr-1", "player_id": "p1", "amount": "200.00", "currency": "EUR",
		"direction": "to_player"}})
	do(oaReq{method: "POST", path: "/api/v1/transactions", auth: full, want: oaWant(), body: map[string]any{
		"type": "withdrawal", "transaction_id": "wd-1", "amount": "0.50", "currency": "EUR", "reason": "fees"}})
	do(oaReq{method: "POST", path: "/api/v1/transactions", auth: full, want: oaWant(), body: map[string]any{
		"type": "adjustment", "transaction_id": "adj-1", "amount": "-0.25", "currency": "EUR"}})
	for _, c := range []struct {
		body any
		code string
	}{
		{map[string]any{"type": "withdrawal", "transaction_id": "wd-2", "amount": "1000000", "currency": "EUR"}, wire.CodeInsufficientFunds},
		{map[string]any{"type": "deposit", "transaction_id": "dep-2", "amount": "1.001", "currency": "EUR"}, wire.CodeAmountTooPrecise},
		{map[string]any{"type": "deposit", "transaction_id": "dep-2", "amount": "1e3", "currency": "EUR"}, wire.CodeInvalidAmount},
		{map[string]any{"type": "deposit", "transaction_id": "dep-2", "amount": "1", "currency": "XXY"}, wire.CodeUnknownCurrency},
		{map[string]any{"type": "refund", "transaction_id": "dep-2", "amount": "1", "currency": "EUR"}, wire.CodeInvalidRequest},
		{`{"type":"deposit",`, wire.CodeInvalidJSON},
		{`{"type":"deposit","transaction_id":"x","amount":"1","currency":"EUR","pad":"` + strings.Repeat("x", wire.MaxBodyBytes) + `"}`, wire.CodeBodyTooLarge},
	} {
		do(oaReq{method: "POST", path: "/api/v1/transactions", auth: full, body: c.body, want: oaWant(400), code: c.code})
	}
	do(oaReq{method: "POST", path: "/api/v1/transactions", body: deposit, want: oaWant(401), code: wire.CodeUnauthorized})
	do(oaReq{method: "POST", path: "/api/v1/transactions", auth: "pb_test_nope", body: deposit, want: oaWant(401), code: wire.CodeUnauthorized})
	do(oaReq{method: "POST", path: "/api/v1/transactions", auth: walletOnly, body: deposit, want: oaWant(403), code: wire.CodeForbidden})

	// Wallet balance.
	do(oaReq{method: "GET", path: "/api/v1/wallet/balance", auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/wallet/balance?player_id=p1&currency=EUR", auth: walletOnly, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/wallet/balance?currency=USD", auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/wallet/balance?player_id=not%20an%20id", auth: full, want: oaWant(400), code: wire.CodeInvalidRequest})
	do(oaReq{method: "GET", path: "/api/v1/wallet/balance?min_position=999999999", auth: full, want: oaWant(400), code: wire.CodePositionBeyondHead})
	do(oaReq{method: "GET", path: "/api/v1/wallet/balance", auth: secret, want: oaWant(401), code: wire.CodeUnauthorized})

	// Catalog.
	do(oaReq{method: "GET", path: "/api/v1/providers", auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/providers", auth: walletOnly, want: oaWant(403), code: wire.CodeForbidden})
	do(oaReq{method: "GET", path: "/api/v1/games?provider=demo&category=SLOTS&search=slot&page=1&per_page=10", auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/games?per_page=1000", auth: full, want: oaWant(400), code: wire.CodeInvalidRequest})
	do(oaReq{method: "GET", path: "/api/v1/games/demo-slot", auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/games/no-such-game", auth: full, want: oaWant(404), code: wire.CodeNotFound})

	// Launches.
	launch := map[string]any{"provider": "demo", "game_id": "demo-slot", "player_id": "p1", "currency": "EUR",
		"session_token": "tok-123", "language": "en"}
	session := do(oaReq{method: "POST", path: "/api/v1/game/launch", auth: full, body: launch, want: oaWant()}).str("data", "session_id")
	do(oaReq{method: "POST", path: "/api/v1/game/launch", auth: full, want: oaWant(404), code: wire.CodeNotFound,
		body: map[string]any{"provider": "demo", "game_id": "nope", "player_id": "p1", "currency": "EUR"}})
	do(oaReq{method: "POST", path: "/api/v1/game/launch", auth: full, want: oaWant(400), code: wire.CodeInvalidRequest,
		body: map[string]any{"provider": "demo", "game_id": "demo-slot", "currency": "EUR"}})
	do(oaReq{method: "POST", path: "/api/v1/game/launch", auth: full, want: oaWant(502), code: wire.CodeProviderRejected,
		body: map[string]any{"provider": "refuser", "game_id": "refused-slot", "player_id": "p1", "currency": "EUR"}})
	do(oaReq{method: "POST", path: "/api/v1/game/launch", auth: full, want: oaWant(503), code: wire.CodeUnavailable,
		body: map[string]any{"provider": "down", "game_id": "down-slot", "player_id": "p1", "currency": "EUR"}})
	do(oaReq{method: "POST", path: "/api/v1/game/launch", auth: walletOnly, body: launch, want: oaWant(403), code: wire.CodeForbidden})
	// Another player: a launch of p1 would supersede the session above,
	// whose new bets would then be refused (docs/provider-wallet.md).
	do(oaReq{method: "GET", path: "/api/v1/game/launch?" + oaQuery("provider", "demo", "game_id", "demo-slot", "player_id", "p4",
		"currency", "EUR", "language", "pt-BR"), auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/game/launch?provider=demo&provider=demo&game_id=demo-slot&player_id=p1&currency=EUR",
		auth: full, want: oaWant(400), code: wire.CodeInvalidRequest})
	do(oaReq{method: "GET", path: "/api/v1/game/launch?" + oaQuery("provider", "refuser", "game_id", "refused-slot",
		"player_id", "p1", "currency", "EUR"), auth: full, want: oaWant(502), code: wire.CodeProviderRejected})
	do(oaReq{method: "GET", path: "/api/v1/game/launch?" + oaQuery("provider", "down", "game_id", "down-slot",
		"player_id", "p1", "currency", "EUR"), auth: full, want: oaWant(503), code: wire.CodeUnavailable})
	do(oaReq{method: "GET", path: "/api/v1/game/launch?" + oaQuery("provider", "demo", "game_id", "zzz",
		"player_id", "p1", "currency", "EUR"), auth: full, want: oaWant(404), code: wire.CodeNotFound})
	transfer := map[string]any{"provider": "demo", "game_id": "demo-slot", "player_id": "p2", "currency": "EUR",
		"amount": "25.00", "transfer_id": "tl-1"}
	do(oaReq{method: "POST", path: "/api/v1/game/launch/transfer", auth: full, body: transfer, want: oaWant()})
	do(oaReq{method: "POST", path: "/api/v1/game/launch/transfer", auth: full, body: transfer, want: oaWant()})
	transfer["amount"] = "26.00"
	do(oaReq{method: "POST", path: "/api/v1/game/launch/transfer", auth: full, body: transfer, want: oaWant(409),
		code: wire.CodeIdempotencyConflict})
	do(oaReq{method: "POST", path: "/api/v1/game/launch/transfer", auth: full, want: oaWant(400), code: wire.CodeInsufficientFunds,
		body: map[string]any{"provider": "demo", "game_id": "demo-slot", "player_id": "p2", "currency": "EUR",
			"amount": "5000000", "transfer_id": "tl-2"}})
	do(oaReq{method: "POST", path: "/api/v1/game/launch/transfer", auth: full, want: oaWant(404), code: wire.CodeNotFound,
		body: map[string]any{"provider": "nope", "game_id": "demo-slot", "player_id": "p2", "currency": "EUR",
			"amount": "1", "transfer_id": "tl-3"}})
	do(oaReq{method: "POST", path: "/api/v1/game/launch/transfer", auth: full, want: oaWant(502), code: wire.CodeProviderRejected,
		body: map[string]any{"provider": "refuser", "game_id": "refused-slot", "player_id": "p3", "currency": "EUR",
			"amount": "1", "transfer_id": "tl-4"}})
	do(oaReq{method: "POST", path: "/api/v1/game/launch/transfer", auth: full, want: oaWant(503), code: wire.CodeUnavailable,
		body: map[string]any{"provider": "down", "game_id": "down-slot", "player_id": "p3", "currency": "EUR",
			"amount": "1", "transfer_id": "tl-5"}})
	do(oaReq{method: "POST", path: "/api/v1/game/launch/transfer", auth: walletOnly, body: transfer, want: oaWant(403),
		code: wire.CodeForbidden})

	// The provider wallet, as provider "demo" in the session above.
	h.wallet("balance", map[string]any{"session_id": session}, 200, "")
	bet := map[string]any{"session_id": session, "transaction_id": "bet-1", "round_id": "r-1", "amount": "10.00"}
	h.wallet("bet", bet, 200, "")
	if r := h.wallet("bet", bet, 200, ""); oaGet(r.json, "replayed") != true {
		t.Fatalf("a retried bet was not replayed: %s", r.body)
	}
	h.wallet("bet", map[string]any{"session_id": session, "transaction_id": "bet-1", "round_id": "r-1", "amount": "11.00"},
		409, wire.CodeIdempotencyConflict)
	h.wallet("win", map[string]any{"session_id": session, "transaction_id": "win-1", "round_id": "r-1", "amount": 25.5,
		"reference_transaction_id": "bet-1", "round_closed": true}, 200, "")
	h.wallet("bet", map[string]any{"session_id": session, "transaction_id": "bet-2", "round_id": "r-2", "amount": "5",
		"promo": false, "game_id": "demo-slot", "player_id": "p1", "currency": "EUR"}, 200, "")
	h.wallet("rollback", map[string]any{"session_id": session, "transaction_id": "rb-1", "reference_transaction_id": "bet-2"}, 200, "")
	h.wallet("rollback", map[string]any{"session_id": session, "transaction_id": "rb-2", "reference_transaction_id": "bet-2"},
		409, wire.CodeAlreadyRolledBack)
	h.wallet("rollback", map[string]any{"session_id": session, "transaction_id": "rb-3", "reference_transaction_id": "bet-9"}, 200, "")
	h.wallet("bet", map[string]any{"session_id": session, "transaction_id": "bet-9", "amount": "1"}, 409, wire.CodeRolledBackEarlier)
	h.wallet("win", map[string]any{"session_id": session, "transaction_id": "win-2", "amount": "1",
		"reference_transaction_id": "bet-2"}, 409, wire.CodeBetRolledBack)
	h.wallet("win", map[string]any{"session_id": session, "transaction_id": "win-3", "amount": "1",
		"reference_transaction_id": "no-such-bet"}, 404, wire.CodeTransactionUnknown)
	h.wallet("rollback", map[string]any{"session_id": session, "transaction_id": "rb-4", "reference_transaction_id": "rb-1"},
		409, wire.CodeNotRollbackable)
	h.wallet("rollback", map[string]any{"session_id": session, "transaction_id": "rb-5", "reference_transaction_id": "bet-1"},
		409, wire.CodeBetSettled)
	h.wallet("bet", map[string]any{"session_id": session, "transaction_id": "bet-4", "amount": "1", "game_id": "no-such-game"},
		400, wire.CodeInvalidRequest)
	h.wallet("bet", map[string]any{"session_id": session, "transaction_id": "bet-3", "amount": "100000"}, 400, wire.CodeInsufficientFunds)
	h.wallet("bet", map[string]any{"session_id": session, "transaction_id": "bet-4", "amount": "1", "player_id": "p9"},
		409, wire.CodePlayerMismatch)
	h.wallet("balance", map[string]any{"session_id": "gs_unknown"}, 404, wire.CodeNotFound)
	h.wallet("status", map[string]any{"session_id": session, "transaction_id": "bet-1"}, 200, "")
	h.wallet("status", map[string]any{"session_id": session, "transaction_id": "never-sent"}, 200, "")
	h.wallet("status", map[string]any{"session_id": session}, 400, wire.CodeInvalidRequest)
	for _, r := range []struct {
		day  string
		want int
		code string
	}{{h.Clock.Now().UTC().Format(time.DateOnly), 200, ""}, {"2025-02-30", 400, wire.CodeInvalidRequest}} {
		path := "/provider/v1/reports/rounds/" + r.day
		h.do(oaReq{method: "GET", path: path, header: map[string]string{"X-Provider-Id": "demo",
			"X-Signature": apitest.SignV2(apitest.ProviderSecret("demo"), h.Clock.Now().Unix(), http.MethodGet, path, nil)},
			want: oaWant(r.want), code: r.code})
	}
	h.do(oaReq{method: "GET", path: "/provider/v1/reports/rounds/2025-01-31", header: map[string]string{"X-Provider-Id": "demo"},
		want: oaWant(401), code: wire.CodeInvalidSignature})
	h.wallet("balance", map[string]any{"session": session}, 400, wire.CodeInvalidRequest)
	h.do(oaReq{method: "POST", path: "/provider/v1/wallet/balance", body: `{"session_id":"` + session + `"}`,
		header: map[string]string{"X-Provider-Id": "demo", "X-Signature": strings.Repeat("0", 64)},
		want:   oaWant(401), code: wire.CodeInvalidSignature})
	stale := `{"session_id":"` + session + `"}`
	h.do(oaReq{method: "POST", path: "/provider/v1/wallet/balance", body: stale,
		header: map[string]string{"X-Provider-Id": "demo", "X-Signature": apitest.SignV2(apitest.ProviderSecret("demo"),
			h.Clock.Now().Add(-5*time.Minute).Unix(), http.MethodPost, "/provider/v1/wallet/balance", []byte(stale))},
		want: oaWant(401), code: wire.CodeTimestampOutOfRange})
	h.do(oaReq{method: "POST", path: "/provider/v1/wallet/win", body: `{}`, want: oaWant(401), code: wire.CodeUnauthorized})
	h.do(oaReq{method: "POST", path: "/provider/v1/wallet/rollback", body: `{}`,
		header: map[string]string{"X-Provider-Id": "nobody", "X-Signature": oaHMAC("x", "{}")}, want: oaWant(401), code: wire.CodeUnauthorized})

	// The Caleta wallet, as provider "caleta" in a session of its game.
	cs := do(oaReq{method: "POST", path: "/api/v1/game/launch", auth: full, want: oaWant(),
		body: map[string]any{"provider": "caleta", "game_id": "caleta-slot", "player_id": "p1", "currency": "EUR"}}).str("data", "session_id")
	h.caleta("check", map[string]any{"token": cs}, "RS_OK")
	h.caleta("balance", map[string]any{"token": cs, "request_uuid": "rq-1", "supplier_user": "u1", "game_code": "caleta-slot"}, "RS_OK")
	cbet := map[string]any{"token": cs, "request_uuid": "rq-2", "supplier_user": "u1", "game_code": "caleta-slot", "game_id": 7,
		"transaction_uuid": "cb-1", "round": "cr-1", "round_closed": false, "is_free": false, "currency": "EUR", "amount": 1_000_000,
		"bet": "lines 20"}
	h.caleta("bet", cbet, "RS_OK")
	cbet["amount"] = 2_000_000
	h.caleta("bet", cbet, "RS_ERROR_DUPLICATE_TRANSACTION")
	h.caleta("win", map[string]any{"token": cs, "request_uuid": "rq-3", "supplier_user": "u1", "game_code": "caleta-slot",
		"transaction_uuid": "cw-1", "reference_transaction_uuid": "cb-1", "round": "cr-1", "round_closed": true, "is_free": false,
		"currency": "EUR", "amount": 2_500_000, "jackpot_win": 0}, "RS_OK")
	h.caleta("rollback", map[string]any{"token": cs, "request_uuid": "rq-4", "transaction_uuid": "crb-1",
		"reference_transaction_uuid": "cb-9", "round": "cr-9", "round_closed": true, "game_code": "caleta-slot", "user": "p1"}, "RS_OK")
	h.caleta("bet", map[string]any{"token": cs, "request_uuid": "rq-5", "transaction_uuid": "cb-2", "round": "cr-2",
		"currency": "EUR", "amount": 1_000_000, "is_free": true, "campaign_uuid": "camp-1", "reward_uuid": "rew-1"}, "RS_OK")
	h.caleta("win", map[string]any{"token": cs, "request_uuid": "rq-8", "transaction_uuid": "cw-3", "reference_transaction_uuid": "cb-2",
		"round": "cr-2", "round_closed": true, "currency": "EUR", "amount": 5_000_000, "is_free": true, "campaign_uuid": "camp-1",
		"reward_uuid": "rew-1", "jackpot_win": 4_000_000}, "RS_OK")
	h.caleta("win", map[string]any{"token": "gs_unknown", "request_uuid": "rq-6", "transaction_uuid": "cw-2",
		"reference_transaction_uuid": "cb-1", "round": "cr-1", "currency": "EUR", "amount": 1}, "RS_ERROR_INVALID_TOKEN")
	h.do(oaReq{method: "POST", path: "/provider/caleta/caleta/wallet/balance", body: `{"token":"` + cs + `","request_uuid":"rq-7"}`,
		header: map[string]string{"X-Auth-Signature": "c2lnbmF0dXJl"}, want: oaWant()})

	// The Red Tiger wallet, as provider "redtiger" in a session of its game.
	rs := do(oaReq{method: "POST", path: "/api/v1/game/launch", auth: full, want: oaWant(),
		body: map[string]any{"provider": "redtiger", "game_id": "redtiger-slot", "player_id": "p1", "currency": "EUR"}}).str("data", "session_id")
	rtBase := func(more map[string]any) map[string]any {
		b := map[string]any{"token": rs, "userId": "p1", "casino": "c", "currency": "EUR", "ip": "192.0.2.1"}
		for k, v := range more {
			b[k] = v
		}
		return b
	}
	rtStake := func(id, stake, round string) map[string]any {
		return rtBase(map[string]any{"game": map[string]any{"type": "slot", "key": "redtiger-slot", "version": "1"},
			"transaction": map[string]any{"id": id, "stake": stake, "stakePromo": "0.00",
				"details": map[string]any{"game": stake, "jackpot": "0.00"}},
			"round": map[string]any{"id": round, "starts": true, "ends": false},
			"promo": map[string]any{"type": "", "instanceCode": "", "campaignCode": "", "instanceId": 0, "campaignId": 0}})
	}
	rtPayout := func(id, payout, round string) map[string]any {
		return rtBase(map[string]any{"game": map[string]any{"type": "slot", "key": "redtiger-slot", "version": "1"},
			"transaction": map[string]any{"id": id, "payout": payout, "payoutPromo": "0.00",
				"details": map[string]any{"game": payout, "jackpot": "0.000000"},
				"sources": map[string]any{"jackpot": map[string]any{}, "lines": payout, "features": "0.00"}},
			"round": map[string]any{"id": round, "starts": false, "ends": true}, "retry": false,
			"jackpot": map[string]any{"group": "", "contribution": "0.00", "pots": []string{}}})
	}
	h.redTiger("auth", "rt-key", rtBase(map[string]any{"channel": "D", "affiliate": "", "extras": ""}), 200, 0)
	h.redTiger("stake", "Basic rt-key", rtStake("rs-1", "1.00", "rr-1"), 200, 0)
	h.redTiger("stake", "rt-key", rtStake("rs-1", "2.00", "rr-1"), 400, 401)
	h.redTiger("payout", "rt-key", rtPayout("rp-1", "2.50", "rr-1"), 200, 0)
	h.redTiger("stake", "rt-key", rtStake("rs-2", "1.00", "rr-2"), 200, 0)
	h.redTiger("refund", "rt-key", rtStake("rs-2", "1.00", "rr-2"), 200, 0)
	h.redTiger("promo/buyin", "rt-key", rtStake("rb-1", "1.00", "rt-1"), 200, 0)
	h.redTiger("promo/settle", "rt-key", rtPayout("rb-1-win", "3.00", "rt-1"), 200, 0)
	h.redTiger("promo/buyin", "rt-key", rtStake("rb-2", "1.00", "rt-2"), 200, 0)
	h.redTiger("promo/refund", "rt-key", rtStake("rb-2", "1.00", "rt-2"), 200, 0)
	h.redTiger("payout", "rt-key", rtPayout("rp-2", "0.001", "rr-1"), 400, 200)
	h.redTiger("stake", "wrong-key", rtStake("rs-3", "1.00", "rr-3"), 401, 100)
	h.redTiger("stake", "rt-key", `{"token":`, 400, 200)

	// Evolution's wallet, as provider "evolution" in a session of its table.
	es := do(oaReq{method: "POST", path: "/api/v1/game/launch", auth: full, want: oaWant(),
		body: map[string]any{"provider": "evolution", "game_id": "evo-table", "player_id": "p1", "currency": "EUR"}}).str("data", "session_id")
	tok := oaEvolutionSecret
	eb := func(extra map[string]any) map[string]any {
		b := map[string]any{"sid": es, "userId": "p1", "uuid": "eq-" + strconv.Itoa(len(extra)), "currency": "EUR",
			"game": map[string]any{"id": "er-1", "type": "blackjack", "details": map[string]any{"table": map[string]any{"id": "evo-table", "vid": "v"}}}}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	h.evolution("check", tok, map[string]any{"sid": es, "userId": "p1", "uuid": "eq-c", "channel": map[string]any{"type": "P"}}, 200, "OK")
	h.evolution("balance", tok, eb(nil), 200, "OK")
	h.evolution("debit", tok, eb(map[string]any{"transaction": map[string]any{"id": "ed-1", "refId": "er-1", "amount": 10}}), 200, "OK")
	h.evolution("debit", tok, eb(map[string]any{"transaction": map[string]any{"id": "ed-1", "refId": "er-1", "amount": 11}}), 200, "BET_ALREADY_EXIST")
	h.evolution("credit", tok, eb(map[string]any{"transaction": map[string]any{"id": "ec-1", "refId": "er-1", "amount": 25.5}}), 200, "OK")
	h.evolution("cancel", tok, eb(map[string]any{"transaction": map[string]any{"id": "ed-1", "refId": "er-1", "amount": 10}}), 200, "BET_ALREADY_SETTLED")
	h.evolution("debit", tok, eb(map[string]any{"transaction": map[string]any{"id": "ed-2", "refId": "er-2", "amount": 5}}), 200, "OK")
	h.evolution("cancel", tok, eb(map[string]any{"transaction": map[string]any{"id": "ed-2", "refId": "er-2"}}), 200, "OK")
	h.evolution("credit", tok, eb(map[string]any{"transaction": map[string]any{"id": "ec-9", "refId": "er-9", "amount": 1}}), 200, "BET_DOES_NOT_EXIST")
	h.evolution("promo_payout", tok, eb(map[string]any{"promoTransaction": map[string]any{"type": "FromTournament", "id": "ep-1",
		"amount": 3, "voucherId": "v-1", "remainingRounds": 0}}), 200, "OK")
	h.evolution("debit", tok, eb(map[string]any{"sid": "gs_unknown", "transaction": map[string]any{"id": "ed-3", "refId": "er-3", "amount": 1}}), 200, "INVALID_SID")
	h.evolution("balance", "wrong", eb(nil), 401, "INVALID_TOKEN_ID")

	// The Bet Brothers' wallet, as provider "tbb" in a session of its game.
	ts := do(oaReq{method: "POST", path: "/api/v1/game/launch", auth: full, want: oaWant(),
		body: map[string]any{"provider": "tbb", "game_id": "tbb-slot", "player_id": "p1", "currency": "EUR"}}).str("data", "session_id")
	tb := func(call string, more map[string]any) map[string]any {
		b := map[string]any{"token": ts, "provider_name": "tbb", "provider_id": 19, "currency_code": "EUR"}
		if call != "balance" {
			b["player_id"], b["amount"], b["is_mobile"], b["round_id"] = "p1", 100, false, "tr-1"
			b["game_symbol"], b["transaction_id"] = "tbb_symbol", "tx"
		}
		if call == "win" {
			b["round_close"] = true
		}
		for k, v := range more {
			if v == nil {
				delete(b, k)
			} else {
				b[k] = v
			}
		}
		return b
	}
	upperHex := func(b []byte) string { return strings.ToUpper(oaHMAC(oaTBBSecret, string(b))) }
	wrongKey := func(b []byte) string { return oaHMAC("wrong-secret", string(b)) }
	h.tbb("balance", tb("balance", nil), 200, nil)
	h.tbb("balance", tb("balance", nil), 200, upperHex)
	h.tbb("balance", tb("balance", map[string]any{"currency_code": "USD"}), 400, nil)
	h.tbb("balance", tb("balance", nil), 403, wrongKey)
	tbet := tb("bet", map[string]any{"transaction_id": "tb-1", "amount": 1_000, "game_symbol": "tbb-slot"})
	booked := h.tbb("bet", tbet, 200, nil)
	if again := h.tbb("bet", tbet, 200, nil); again.str("transaction_id") != booked.str("transaction_id") {
		t.Fatalf("a retried tbb bet was not answered as the first: %s, first %s", again.body, booked.body)
	}
	h.tbb("bet", tb("bet", map[string]any{"transaction_id": "tb-1", "amount": 2_000}), 400, nil)
	h.tbb("bet", tb("bet", map[string]any{"transaction_id": "tb-2", "amount": int64(1) << 50}), 402, nil)
	h.tbb("bet", tb("bet", map[string]any{"transaction_id": "tb-2", "token": "gs_unknown"}), 403, nil)
	h.tbb("bet", tb("bet", map[string]any{"transaction_id": "tb-2", "player_id": "p9"}), 404, nil)
	h.tbb("bet", tb("bet", map[string]any{"transaction_id": "tb-2", "game_symbol": "no-such-game"}), 405, nil)
	h.tbb("win", tb("win", map[string]any{"transaction_id": "tw-1", "amount": 2_550, "tournament": map[string]any{},
		"jackpot": map[string]any{}}), 200, nil)
	h.tbb("win", tb("win", map[string]any{"transaction_id": "tw-2", "round_close": nil}), 400, nil)
	h.tbb("win", tb("win", map[string]any{"transaction_id": "tw-2"}), 403, wrongKey)
	h.tbb("win", tb("win", map[string]any{"transaction_id": "tw-2", "player_id": "p9"}), 404, nil)
	h.tbb("win", tb("win", map[string]any{"transaction_id": "tw-2", "game_symbol": "no-such-game"}), 405, nil)
	// A refund of the bet the win settled; of a bet, twice; a win on its
	// round; a refund of a bet never sent, then that bet; a refund naming
	// a win's id before it, then that win.
	h.tbb("refund", tb("refund", map[string]any{"transaction_id": "tb-1", "refunded_transaction_id": "tb-1"}), 400, nil)
	h.tbb("bet", tb("bet", map[string]any{"transaction_id": "tb-3", "round_id": "tr-3"}), 200, nil)
	trefund := tb("refund", map[string]any{"transaction_id": "tb-3", "refunded_transaction_id": "tb-3", "round_id": "tr-3"})
	h.tbb("refund", trefund, 200, nil)
	h.tbb("refund", trefund, 200, nil)
	h.tbb("win", tb("win", map[string]any{"transaction_id": "tw-3", "round_id": "tr-3"}), 406, nil)
	h.tbb("refund", tb("refund", map[string]any{"transaction_id": "tr-x", "refunded_transaction_id": "tb-late", "round_id": "tr-4"}), 406, nil)
	h.tbb("bet", tb("bet", map[string]any{"transaction_id": "tb-late", "round_id": "tr-4"}), 408, nil)
	h.tbb("refund", tb("refund", map[string]any{"transaction_id": "tr-y", "refunded_transaction_id": "tw-late", "round_id": "tr-5"}), 406, nil)
	h.tbb("win", tb("win", map[string]any{"transaction_id": "tw-late", "round_id": "tr-5"}), 408, nil)
	// A refund whose own ledger id (refund@tb-z) an earlier refund named.
	h.tbb("refund", tb("refund", map[string]any{"transaction_id": "tr-z", "refunded_transaction_id": "refund@tb-z", "round_id": "tr-6"}), 406, nil)
	h.tbb("refund", tb("refund", map[string]any{"transaction_id": "tr-z", "refunded_transaction_id": "tb-z", "round_id": "tr-6"}), 408, nil)
	h.tbb("refund", tb("refund", map[string]any{"refunded_transaction_id": "tb-3", "token": "gs_unknown"}), 403, nil)
	h.tbb("refund", tb("refund", map[string]any{"refunded_transaction_id": "tb-3", "player_id": "p9"}), 404, nil)
	h.tbb("refund", tb("refund", map[string]any{"refunded_transaction_id": "tb-3", "game_symbol": "no-such-game"}), 405, nil)
	h.do(oaReq{method: "POST", path: "/provider/tbb/tbb/wallet/bet", body: `{"token":`,
		header: map[string]string{"X-REQUEST-SIGN": oaHMAC(oaTBBSecret, `{"token":`)}, want: oaWant(400)})
	h.do(oaReq{method: "POST", path: "/provider/tbb/nobody/wallet/balance", body: `{}`,
		header: map[string]string{"X-REQUEST-SIGN": oaHMAC(oaTBBSecret, `{}`)}, want: oaWant(403)})

	// The signed launch and the return address.
	signed := func(apiKey, user, game, balance string, ts int64, extra ...string) string {
		tsText := strconv.FormatInt(ts, 10)
		sig := oaHMAC(secret, strings.Join([]string{apiKey, user, game, balance, tsText}, "|"))
		return "/v1/launch?" + oaQuery(append([]string{"api_key", apiKey, "user_id", user, "game_uid", game, "balance", balance,
			"ts", tsText, "sig", sig}, extra...)...)
	}
	now := time.Now().Unix()
	first := signed(full, "ps-1", "demo-slot", "50.00", now, "currency_code", "EUR", "return_url", "https://casino.example/lobby")
	sl := do(oaReq{method: "GET", path: first, want: oaWant()})
	do(oaReq{method: "GET", path: first, want: oaWant()})
	do(oaReq{method: "GET", path: first + "&currency_code=USD", want: oaWant(400), code: wire.CodeInvalidRequest}) // given twice
	do(oaReq{method: "GET", path: strings.Replace(first, "currency_code=EUR", "currency_code=USD", 1), want: oaWant(409),
		code: wire.CodeIdempotencyConflict})
	do(oaReq{method: "GET", path: signed(full, "ps-2", "demo-slot", "10", now, "redirect", "1"), want: oaWant(302)})
	do(oaReq{method: "GET", path: signed(full, "ps-2", "demo-slot", "10", now-3600), want: oaWant(401), code: wire.CodeTimestampOutOfRange})
	do(oaReq{method: "GET", path: signed(full, "ps-2", "demo-slot", "10", now) + "x", want: oaWant(401), code: wire.CodeInvalidSignature})
	do(oaReq{method: "GET", path: signed(full, "ps-2", "demo-slot", "10", now, "redirect", "1") + "x", want: oaWant(401)})
	do(oaReq{method: "GET", path: "/v1/launch?" + oaQuery("user_id", "ps-2", "game_uid", "demo-slot", "balance", "1"), want: oaWant(401),
		code: wire.CodeUnauthorized})
	do(oaReq{method: "GET", path: "/v1/launch?" + oaQuery("api_key", full, "game_uid", "demo-slot", "balance", "1"), want: oaWant(400),
		code: wire.CodeInvalidRequest})
	do(oaReq{method: "GET", path: signed(full, "ps-2", "demo-slot", "-1", now), want: oaWant(400), code: wire.CodeInvalidAmount})
	do(oaReq{method: "GET", path: signed(full, "ps-2", "demo-slot", "1", now, "return_url", "https://evil.example/"), want: oaWant(400),
		code: wire.CodeReturnURLNotAllowed})
	do(oaReq{method: "GET", path: signed(walletOnly, "ps-2", "demo-slot", "1", now), want: oaWant(403), code: wire.CodeForbidden})
	do(oaReq{method: "GET", path: signed(full, "ps-2", "no-game", "1", now), want: oaWant(404), code: wire.CodeNotFound})
	do(oaReq{method: "GET", path: signed(full, "ps-2", "refused-slot", "1", now), want: oaWant(502), code: wire.CodeProviderRejected})
	do(oaReq{method: "GET", path: signed(full, "ps-2", "down-slot", "1", now), want: oaWant(503), code: wire.CodeUnavailable})
	do(oaReq{method: "GET", path: "/v1/return?session=" + url.QueryEscape(sl.str("session_id")), want: oaWant(302)})
	do(oaReq{method: "GET", path: "/v1/return", want: oaWant()})
	do(oaReq{method: "GET", path: "/v1/return?session=" + url.QueryEscape(session), want: oaWant()})
	do(oaReq{method: "GET", path: "/v1/return?session=gs_unknown", want: oaWant(404)})
	do(oaReq{method: "PATCH", path: "/admin/v1/clients/acme", auth: admin, want: oaWant(),
		body: map[string]any{"allowed_return_hosts": []string{}}})
	do(oaReq{method: "GET", path: "/v1/return?session=" + url.QueryEscape(sl.str("session_id")), want: oaWant(403)})

	// Reads from the read models, once they reflect the last write.
	last := h.wallet("bet", map[string]any{"session_id": session, "transaction_id": "bet-last", "round_id": "r-3",
		"amount": "1.00", "round_closed": true}, 200, "")
	pos := do(oaReq{method: "POST", path: "/api/v1/transactions", auth: full, want: oaWant(), body: map[string]any{
		"type": "deposit", "transaction_id": "dep-last", "amount": "1", "currency": "EUR"}}).str("data", "position")
	_ = last
	h.readYourWrite(oaReq{method: "GET", path: "/api/v1/transactions?min_position=" + pos, auth: full})
	do(oaReq{method: "GET", path: "/api/v1/transactions?" + oaQuery("page", "1", "per_page", "5", "player_id", "p1", "provider", "demo",
		"game", "demo-slot", "type", "bet", "status", "settled", "currency", "EUR", "from", "2020-01-01T00:00:00Z",
		"to", "2100-01-01T00:00:00Z"), auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/transactions?type=game_result", auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/transactions?per_page=501", auth: full, want: oaWant(400), code: wire.CodeInvalidRequest})
	do(oaReq{method: "GET", path: "/api/v1/transactions?currency=XXY", auth: full, want: oaWant(400), code: wire.CodeUnknownCurrency})
	do(oaReq{method: "GET", path: "/api/v1/transactions?min_position=999999999", auth: full, want: oaWant(400), code: wire.CodePositionBeyondHead})
	do(oaReq{method: "GET", path: "/api/v1/transactions", auth: walletOnly, want: oaWant(403), code: wire.CodeForbidden})
	do(oaReq{method: "GET", path: "/api/v1/reports/ggr?min_position=" + pos, auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/reports/ggr?group_by=day,provider,game,currency", auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/reports/ggr?group_by=month", auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/reports/ggr?group_by=day,provider&reporting_currency=USD", auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/reports/ggr?reporting_currency=usd", auth: full, want: oaWant(400), code: wire.CodeInvalidRequest})
	do(oaReq{method: "GET", path: "/api/v1/reports/commission?reporting_currency=USD", auth: full, want: oaWant()})
	do(oaReq{method: "POST", path: "/api/v1/reconciliations?day=2025-03-01&currency=EUR", auth: full, want: oaWant(),
		header: map[string]string{"Content-Type": "text/csv"}, body: "transaction_id,amount,status\nb1,10.00,settled\nzz,1.00,settled\n"})
	do(oaReq{method: "POST", path: "/api/v1/reconciliations?currency=EUR", auth: full, want: oaWant(400), code: wire.CodeInvalidRequest,
		header: map[string]string{"Content-Type": "text/csv"}, body: "transaction_id,amount\n"})
	do(oaReq{method: "POST", path: "/api/v1/reconciliations?day=2025-03-01", auth: walletOnly, want: oaWant(403), code: wire.CodeForbidden,
		header: map[string]string{"Content-Type": "text/csv"}, body: "transaction_id,amount\n"})
	do(oaReq{method: "GET", path: "/api/v1/reports/ggr?group_by=day,provider,game", auth: full, want: oaWant(),
		header: map[string]string{"Accept": "text/csv"}})
	do(oaReq{method: "GET", path: "/api/v1/reports/ggr?group_by=week", auth: full, want: oaWant(400), code: wire.CodeInvalidRequest})
	do(oaReq{method: "GET", path: "/api/v1/reports/ggr?min_position=999999999", auth: full, want: oaWant(400), code: wire.CodePositionBeyondHead})
	do(oaReq{method: "GET", path: "/api/v1/reports/ggr", auth: walletOnly, want: oaWant(403), code: wire.CodeForbidden})
	do(oaReq{method: "GET", path: "/api/v1/reports/commission?group_by=day&from=" + time.Now().UTC().AddDate(0, 0, -60).Format(time.DateOnly), auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/reports/commission", auth: full, want: oaWant(), header: map[string]string{"Accept": "text/csv"}})
	do(oaReq{method: "GET", path: "/api/v1/reports/commission?group_by=game", auth: full, want: oaWant(400), code: wire.CodeInvalidRequest})
	// Statements (docs/statements.md): close last month, read it every way.
	h.Pump()
	month := h.Clock.Now().UTC().AddDate(0, -1, 0).Format("2006-01")
	stmt := do(oaReq{method: "POST", path: "/admin/v1/clients/acme/statements", auth: admin, want: oaWant(201),
		body: map[string]any{"provider": "demo", "period": "month", "start": month, "reporting_currency": "USD"}})
	stmtID := stmt.str("data", "id")
	do(oaReq{method: "POST", path: "/admin/v1/clients/acme/statements", auth: admin, want: oaWant(409), code: wire.CodePeriodClosed,
		body: map[string]any{"provider": "demo", "period": "month", "start": month}})
	do(oaReq{method: "POST", path: "/admin/v1/clients/acme/statements", auth: admin, want: oaWant(400), code: wire.CodeInvalidRequest,
		body: map[string]any{"provider": "demo", "period": "week", "start": month}})
	do(oaReq{method: "POST", path: "/admin/v1/clients/nobody/statements", auth: admin, want: oaWant(404), code: wire.CodeNotFound,
		body: map[string]any{"provider": "demo", "period": "month", "start": month}})
	do(oaReq{method: "GET", path: "/admin/v1/clients/acme/statements?provider=demo", auth: admin, want: oaWant()})
	do(oaReq{method: "GET", path: "/admin/v1/clients/acme/statements/" + stmtID, auth: admin, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/statements", auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/statements?per_page=0", auth: full, want: oaWant(400), code: wire.CodeInvalidRequest})
	do(oaReq{method: "GET", path: "/api/v1/statements/" + stmtID, auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/statements/" + stmtID, auth: full, want: oaWant(), header: map[string]string{"Accept": "text/csv"}})
	do(oaReq{method: "GET", path: "/api/v1/statements/" + stmtID, auth: full, want: oaWant(), header: map[string]string{"Accept": "text/html"}})
	do(oaReq{method: "GET", path: "/api/v1/statements/00000000-0000-7000-8000-000000000000", auth: full, want: oaWant(404), code: wire.CodeNotFound})
	do(oaReq{method: "GET", path: "/api/v1/statements", auth: walletOnly, want: oaWant(403), code: wire.CodeForbidden})
	do(oaReq{method: "GET", path: "/api/v1/reports/commission?min_position=999999999", auth: full, want: oaWant(400),
		code: wire.CodePositionBeyondHead})
	do(oaReq{method: "GET", path: "/api/v1/reports/commission", auth: walletOnly, want: oaWant(403), code: wire.CodeForbidden})

	// A round (docs/read-models.md): Caleta's cr-1, whose provider launches
	// as the demo kind here (no round-detail call). A free bet of 0 in a
	// round of the same id at the demo provider makes the id ambiguous.
	do(oaReq{method: "GET", path: "/api/v1/rounds/cr-1", auth: full, want: oaWant()})
	if _, err := h.Commands.PlaceBet(h.ctx, domain.GameTx{Client: "acme", Player: "p-round", Provider: "demo", Game: "demo-slot",
		Round: "cr-1", ExternalTxID: "oa-round-1", Currency: domain.MustCurrency("EUR"), Promo: true},
		domain.Zero(domain.MustCurrency("EUR"))); err != nil {
		t.Fatal(err)
	}
	h.Pump()
	do(oaReq{method: "GET", path: "/api/v1/rounds/cr-1", auth: full, want: oaWant(409), code: wire.CodeRoundAmbiguous})
	do(oaReq{method: "GET", path: "/api/v1/rounds/cr-1?provider=caleta&min_position=" + pos, auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/rounds/cr-1?provider=demo", auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/rounds/cr!1", auth: full, want: oaWant(400), code: wire.CodeInvalidRequest})
	do(oaReq{method: "GET", path: "/api/v1/rounds/no-such-round", auth: full, want: oaWant(404), code: wire.CodeNotFound})
	do(oaReq{method: "GET", path: "/api/v1/rounds/cr-1", want: oaWant(401), code: wire.CodeUnauthorized})
	do(oaReq{method: "GET", path: "/api/v1/rounds/cr-1", auth: walletOnly, want: oaWant(403), code: wire.CodeForbidden})

	// Audit.
	do(oaReq{method: "GET", path: "/api/v1/audit/events?after=0&limit=5", auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/audit/events?after=999999", auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/audit/events?limit=0", auth: full, want: oaWant(400), code: wire.CodeInvalidRequest})
	do(oaReq{method: "GET", path: "/api/v1/audit/events", auth: walletOnly, want: oaWant(403), code: wire.CodeForbidden})
	makeCheckpoint(h.t, h.Harness)
	do(oaReq{method: "GET", path: "/api/v1/audit/checkpoints?after=0&limit=5", auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/audit/checkpoints?after=999999", auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/audit/checkpoints?after=-1", auth: full, want: oaWant(400), code: wire.CodeInvalidRequest})
	do(oaReq{method: "GET", path: "/api/v1/audit/checkpoints", auth: walletOnly, want: oaWant(403), code: wire.CodeForbidden})
	do(oaReq{method: "GET", path: "/api/v1/audit/checkpoint-keys", auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/audit/checkpoint-keys", auth: walletOnly, want: oaWant(403), code: wire.CodeForbidden})
	h.consoleSession(full, walletOnly)
	h.logSession()

	// Deliveries: callbacks to /cb succeed; webhooks to /wh park.
	var parked string
	eventually.True(t, 30*time.Second, "a parked webhook delivery", func() bool {
		r := do(oaReq{method: "GET", path: "/api/v1/deliveries?status=parked&endpoint_id=" + ownWH + "&per_page=100", auth: full, want: oaWant()})
		parked = oaString(r.json, "data", "0", "id")
		return parked != ""
	})
	eventually.True(t, 30*time.Second, "a delivered callback", func() bool {
		r := do(oaReq{method: "GET", path: "/api/v1/deliveries?status=succeeded&endpoint_id=callback", auth: full, want: oaWant()})
		return oaString(r.json, "data", "0", "id") != ""
	})
	event := do(oaReq{method: "GET", path: "/api/v1/deliveries/" + parked, auth: full, want: oaWant()}).str("data", "event_id")
	do(oaReq{method: "GET", path: "/api/v1/deliveries?" + oaQuery("event_id", event, "page", "1"), auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/deliveries?status=lost", auth: full, want: oaWant(400), code: wire.CodeInvalidRequest})
	do(oaReq{method: "GET", path: "/api/v1/deliveries?event_id=not-a-uuid", auth: full, want: oaWant(400), code: wire.CodeInvalidRequest})
	do(oaReq{method: "GET", path: "/api/v1/deliveries/dl_unknown", auth: full, want: oaWant(404), code: wire.CodeNotFound})
	do(oaReq{method: "GET", path: "/api/v1/deliveries", auth: walletOnly, want: oaWant(403), code: wire.CodeForbidden})
	h.hold.Store(true) // the re-sent delivery stays pending while its attempt waits
	do(oaReq{method: "POST", path: "/api/v1/deliveries/" + parked + "/resend", auth: full, want: oaWant()})
	do(oaReq{method: "POST", path: "/api/v1/deliveries/" + parked + "/resend", auth: full, want: oaWant(409),
		code: wire.CodeDeliveryInProgress})
	h.releaseHold()
	do(oaReq{method: "POST", path: "/api/v1/deliveries/dl_unknown/resend", auth: full, want: oaWant(404), code: wire.CodeNotFound})
	do(oaReq{method: "POST", path: "/api/v1/deliveries/" + parked + "/resend", auth: walletOnly, want: oaWant(403), code: wire.CodeForbidden})

	// Usage, once counted; then the tiny plan's rate limit.
	if err := h.Meter.Flush(h.ctx); err != nil {
		t.Fatal(err)
	}
	do(oaReq{method: "GET", path: "/api/v1/usage", auth: full, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/usage?" + oaQuery("granularity", "minute", "from", time.Now().Add(-time.Hour).UTC().Format(time.RFC3339),
		"key_id", fullID), auth: walletOnly, want: oaWant()})
	do(oaReq{method: "GET", path: "/api/v1/usage?granularity=week", auth: full, want: oaWant(400), code: wire.CodeInvalidRequest})
	do(oaReq{method: "GET", path: "/api/v1/usage", want: oaWant(401), code: wire.CodeUnauthorized})
	do(oaReq{method: "GET", path: "/admin/v1/clients/acme/usage?granularity=day&from=" + time.Now().UTC().Format(time.DateOnly),
		auth: admin, want: oaWant()})
	do(oaReq{method: "GET", path: "/admin/v1/clients/acme/usage?from=yesterday", auth: admin, want: oaWant(400), code: wire.CodeInvalidRequest})
	do(oaReq{method: "GET", path: "/admin/v1/clients/nobody/usage", auth: admin, want: oaWant(404), code: wire.CodeNotFound})
	for range 2 {
		do(oaReq{method: "GET", path: "/api/v1/wallet/balance", auth: tinyKey, want: oaWant()})
	}
	do(oaReq{method: "GET", path: "/api/v1/usage", auth: tinyKey, want: oaWant(429), code: wire.CodeRateLimited})
	do(oaReq{method: "GET", path: "/api/v1/wallet/balance", auth: tinyKey, want: oaWant(429), code: wire.CodeRateLimited})

	h.bareSweep(full)

	// Every operation refuses a request without credentials (401), with a
	// credential lacking the permission (403), and over the limit (429).
	launchOnly, _ := issue("acme", gateway.ScopeLaunch)
	for _, op := range h.spec.operations() {
		method, tmpl, _ := strings.Cut(op, " ")
		path := oaDocParam.ReplaceAllString(tmpl, "x")
		o := h.spec.operation(op)
		sec, _ := o["security"].([]any)
		if len(sec) == 0 {
			continue
		}
		scheme := sec[0].(map[string]any)
		if _, ok := scheme["ApiKey"]; !ok && scheme["AdminToken"] == nil {
			continue // the provider wallet and the signed launch: above
		}
		do(oaReq{method: method, path: path, want: oaWant(401), code: wire.CodeUnauthorized})
		if _, ok := scheme["AdminToken"]; ok {
			do(oaReq{method: method, path: path, auth: full, want: oaWant(403), code: wire.CodeForbidden})
			continue
		}
		if scopes, _ := scheme["ApiKey"].([]any); len(scopes) > 0 {
			lacking := walletOnly
			if slices.Contains(scopes, any(gateway.ScopeWalletRead)) {
				lacking = launchOnly
			}
			do(oaReq{method: method, path: path, auth: lacking, want: oaWant(403), code: wire.CodeForbidden})
		}
		do(oaReq{method: method, path: path, auth: tinyKey, want: oaWant(429), code: wire.CodeRateLimited})
	}
}

// bareSweep calls every operation of a server built with nothing but its
// key store, as an API process without the optional stores is: the stores
// it lacks answer 503 (or a panic is caught as 500), the admin API without
// a token answers 404, and every answer must still be documented.
func (h *oaHarness) bareSweep(key string) {
	h.t.Helper()
	bare := h.Bare()
	for _, op := range h.spec.operations() {
		method, tmpl, _ := strings.Cut(op, " ")
		o := h.spec.operation(op)
		var want []int
		for code := range o["responses"].(map[string]any) {
			st, _ := strconv.Atoi(code)
			want = append(want, st)
		}
		r := oaReq{method: method, path: oaDocParam.ReplaceAllString(tmpl, "x"), want: want, base: bare.URL}
		if _, ok := o["requestBody"]; ok {
			r.body = "{}"
		}
		sec, _ := o["security"].([]any)
		if len(sec) > 0 {
			scheme := sec[0].(map[string]any)
			switch {
			case scheme["ApiKey"] != nil:
				r.auth = key
			case scheme["AdminToken"] != nil:
				r.auth, r.want, r.code = oaAdminToken, []int{404}, wire.CodeNotFound
			case scheme["CaletaSignature"] != nil:
				// A valid body: every Caleta answer is 200, which the
				// sweep holds to the document's request too.
				r.body = `{"token":"t","request_uuid":"r","transaction_uuid":"x","reference_transaction_uuid":"y",` +
					`"round":"c","currency":"EUR","amount":1}`
				switch {
				case strings.HasSuffix(tmpl, "/check"):
					r.body = `{"token":"t"}`
				case strings.HasSuffix(tmpl, "/balance"):
					r.body = `{"token":"t","request_uuid":"r"}`
				case strings.HasSuffix(tmpl, "/bet"):
					r.body = `{"token":"t","request_uuid":"r","transaction_uuid":"x","round":"c","currency":"EUR","amount":1}`
				case strings.HasSuffix(tmpl, "/rollback"):
					r.body = `{"token":"t","request_uuid":"r","transaction_uuid":"x","reference_transaction_uuid":"y"}`
				}
				r.header = map[string]string{"X-Auth-Signature": "c2lnbmF0dXJl"}
			case scheme["EvolutionAuthToken"] != nil:
				// A valid body: every Evolution answer but a refused token
				// is 200, which the sweep holds to the document's request.
				r.path += "?authToken=x"
				r.body = `{"sid":"s","userId":"u","uuid":"q","currency":"EUR","transaction":{"id":"t","refId":"r","amount":1}}`
				switch {
				case strings.HasSuffix(tmpl, "/check"):
					r.body = `{"sid":"s","userId":"u","uuid":"q"}`
				case strings.HasSuffix(tmpl, "/balance"):
					r.body = `{"sid":"s","userId":"u","uuid":"q","currency":"EUR"}`
				case strings.HasSuffix(tmpl, "/promo_payout"):
					r.body = `{"sid":"s","userId":"u","uuid":"q","currency":"EUR","promoTransaction":{"id":"p","amount":1}}`
				}
			case scheme["ProviderId"] != nil:
				r.header = map[string]string{"X-Provider-Id": "demo", "X-Signature": h.walletSignature(strings.TrimPrefix(tmpl, "/provider/v1/wallet/"), "{}")}
			}
		}
		h.do(r)
	}
}
