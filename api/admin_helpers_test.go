package api_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/metrics"
	"github.com/pitboss/pitboss/adapters/postgres/deliverystore"
	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/secretbox"
	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/gateway"
)

// Helpers of the key management, admin API, rate limit, usage, health and
// metrics tests. Names carry an "adm" prefix so they do not collide with
// other test files of package api_test.

const (
	admSandboxHost    = "sandbox.adm.test"
	admProductionHost = "api.adm.test"
	admToken          = "admin-token-for-tests-0123456789abcdef"
)

// admClock is the server's clock: real time plus an offset the test moves,
// so that key expiry (decided by the database's clock) and the server's
// own time agree until a test moves it on.
type admClock struct {
	mu     sync.Mutex
	offset time.Duration
	frozen *time.Time
}

func (c *admClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.frozen != nil {
		return *c.frozen
	}
	return time.Now().Add(c.offset)
}

// Freeze stops the clock at t.
func (c *admClock) Freeze(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.frozen = &t
}

// Advance moves a frozen clock on.
func (c *admClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.frozen.Add(d)
	c.frozen = &t
}

func admUID(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// admOptions shape a harness.
type admOptions struct {
	adminToken string // "" disables the admin API
	tiers      string // PITBOSS_RATE_TIERS form; "" the defaults
	rateStore  func(pool *pgxpool.Pool) gateway.RateStore
	ready      func(pool *pgxpool.Pool) []api.ReadyCheck
}

// admHarness is the real Echo server on a fresh database, with a running
// ledger writer, the real stores, a usage meter flushed by the test and
// its own metrics registry.
type admHarness struct {
	t       testing.TB
	pool    *pgxpool.Pool
	handler http.Handler
	clock   *admClock
	gw      *gatewaystore.Gateway
	meter   *api.UsageMeter
	metrics *metrics.Registry
}

func newAdmHarness(t testing.TB, o admOptions) *admHarness {
	t.Helper()
	pool, _ := pgtest.NewDatabase(t)
	return newAdmHarnessOn(t, pool, o)
}

func newAdmHarnessOn(t testing.TB, pool *pgxpool.Pool, o admOptions) *admHarness {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	registry := metrics.New()
	ledger, err := eventstore.NewLedger(pool, eventstore.LedgerConfig{Observer: registry}, logger)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ledger.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("ledger run: %v", err)
		}
	})
	box, err := secretbox.New([]byte(strings.Repeat("a", secretbox.KeySize)))
	if err != nil {
		t.Fatal(err)
	}
	lc, err := gatewaystore.NewLaunchClients(pool, box)
	if err != nil {
		t.Fatal(err)
	}
	deliveries, err := deliverystore.NewDeliveries(pool, box)
	if err != nil {
		t.Fatal(err)
	}
	gw := gatewaystore.NewGateway(pool).WithSecretBox(box)
	usage := gatewaystore.NewUsage(pool)
	meter := api.NewUsageMeter(usage, time.Hour, logger) // the tests flush
	registry.WatchUsage(meter)
	registry.WatchLag(gatewaystore.NewLag(pool), time.Now, 5*time.Second, logger)
	var limits gateway.RateLimits
	if o.tiers != "" {
		tiers, err := gateway.ParseRateTiers(o.tiers)
		if err != nil {
			t.Fatal(err)
		}
		limits = gateway.RateLimits{Tiers: tiers}
	}
	deps := api.Deps{
		Commands: commands.NewHandler(ledger, admSystem{}, admIDs{}),
		Balances: eventstore.NewAccounts(pool), Wallets: gw, Keys: gw, Catalog: gw, Sessions: gw,
		LaunchClients: lc, Deliveries: deliveries, Webhooks: deliveries, IDs: admIDs{}, Logger: logger,
		Admin: api.AdminDeps{Clients: gw, Launch: lc, Callbacks: deliveries},
		Usage: usage, Meter: meter, Metrics: registry,
	}
	clock := &admClock{}
	deps.Clock = clock
	if o.rateStore != nil {
		deps.RateStore = o.rateStore(pool)
	}
	if o.ready != nil {
		deps.Ready = o.ready(pool)
	}
	srv := api.NewServer(api.Config{
		PublicURL:          "http://pitboss.adm.test",
		HostEnvironments:   map[string]string{admSandboxHost: "sandbox", admProductionHost: "production"},
		DefaultEnvironment: "sandbox",
		AdminToken:         o.adminToken,
		RateLimits:         limits,
	}, deps)
	return &admHarness{t: t, pool: pool, handler: srv.Handler(), clock: clock, gw: gw, meter: meter, metrics: registry}
}

// admSystem is the commands' clock (it stamps occurred_at): real time.
type admSystem struct{}

func (admSystem) Now() time.Time { return time.Now().UTC() }

type admIDs struct{}

func (admIDs) NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return hex.EncodeToString(b[0:4]) + "-" + hex.EncodeToString(b[4:6]) + "-" + hex.EncodeToString(b[6:8]) + "-" +
		hex.EncodeToString(b[8:10]) + "-" + hex.EncodeToString(b[10:])
}

// admReq is one request to the server.
type admReq struct {
	method, path, host, token string
	body                      any // string: sent verbatim; else JSON-encoded
	header                    map[string]string
}

func (h *admHarness) do(r admReq) *httptest.ResponseRecorder {
	h.t.Helper()
	var body io.Reader
	switch b := r.body.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		body = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(r.method, r.path, body)
	req.Host = r.host
	if req.Host == "" {
		req.Host = admSandboxHost
	}
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.handler.ServeHTTP(rec, req)
	return rec
}

// admin calls the admin API with the admin token.
func (h *admHarness) admin(method, path string, body any) *httptest.ResponseRecorder {
	h.t.Helper()
	return h.do(admReq{method: method, path: path, token: admToken, body: body})
}

// call calls /api/v1 with an API key at the sandbox address.
func (h *admHarness) call(method, path, key string, body any) *httptest.ResponseRecorder {
	h.t.Helper()
	return h.do(admReq{method: method, path: path, token: key, body: body})
}

type admErrorBody struct {
	Success bool `json:"success"`
	Error   struct {
		Code      string         `json:"code"`
		Message   string         `json:"message"`
		RequestID string         `json:"request_id"`
		Details   map[string]any `json:"details"`
	} `json:"error"`
}

func admDecode[T any](t testing.TB, rec *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %T from %s: %v", v, rec.Body, err)
	}
	return v
}

// admData decodes {success:true, data} after checking the status is 200.
func admData[T any](t testing.TB, rec *httptest.ResponseRecorder) T {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", rec.Code, rec.Body)
	}
	env := admDecode[struct {
		Success bool `json:"success"`
		Data    T    `json:"data"`
	}](t, rec)
	if !env.Success {
		t.Fatalf("success false: %s", rec.Body)
	}
	return env.Data
}

// wantAdmError checks status, code and the one error shape.
func wantAdmError(t *testing.T, rec *httptest.ResponseRecorder, status int, code string) admErrorBody {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status %d, want %d: %s", rec.Code, status, rec.Body)
	}
	e := admDecode[admErrorBody](t, rec)
	if e.Success || e.Error.Code != code || e.Error.RequestID == "" || e.Error.Message == "" {
		t.Fatalf("error body %s, want code %s", rec.Body, code)
	}
	return e
}

type admKey struct {
	ID          string   `json:"id"`
	ClientID    string   `json:"client_id"`
	Prefix      string   `json:"prefix"`
	Label       string   `json:"label"`
	Environment string   `json:"environment"`
	Scopes      []string `json:"scopes"`
	Status      string   `json:"status"`
	CreatedAt   string   `json:"created_at"`
	ExpiresAt   *string  `json:"expires_at"`
	RevokedAt   *string  `json:"revoked_at"`
	LastUsedAt  *string  `json:"last_used_at"`
	ReplacedBy  *string  `json:"replaced_by"`
	Key         string   `json:"key"`
}

// newClient creates a client through the admin API and issues it a key
// with scopes.
func (h *admHarness) newClient(env, plan string, scopes ...string) (clientID string, key admKey) {
	h.t.Helper()
	clientID = admUID("client")
	body := map[string]any{"id": clientID, "name": "Operator " + clientID, "environment": env}
	if plan != "" {
		body["plan"] = plan
	}
	admData[map[string]any](h.t, h.admin(http.MethodPost, "/admin/v1/clients", body))
	return clientID, h.issueKey(clientID, scopes...)
}

func (h *admHarness) issueKey(clientID string, scopes ...string) admKey {
	h.t.Helper()
	k := admData[admKey](h.t, h.admin(http.MethodPost, "/admin/v1/clients/"+clientID+"/keys", map[string]any{"scopes": scopes}))
	if k.Key == "" || !strings.HasPrefix(k.Key, k.Prefix+"_") {
		h.t.Fatalf("issued key %+v: the key must start with its prefix", k)
	}
	return k
}

// header reads an integer header.
func admIntHeader(t *testing.T, rec *httptest.ResponseRecorder, name string) int64 {
	t.Helper()
	v := rec.Header().Get(name)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("header %s = %q, want an integer (status %d: %s)", name, v, rec.Code, rec.Body)
	}
	return n
}
