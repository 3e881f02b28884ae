package api_test

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/providers"
	"github.com/pitboss/pitboss/adapters/secretbox"
	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// Helpers of the signed-launch, return-address and provider-wallet tests.
// Names carry an "sl" prefix so they do not collide with other test files
// of package api_test.

// slClock is a clock the test sets; the API and the ledger share it.
type slClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *slClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *slClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

type slIDs struct{}

func (slIDs) NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return hex.EncodeToString(b[0:4]) + "-" + hex.EncodeToString(b[4:6]) + "-" + hex.EncodeToString(b[6:8]) + "-" +
		hex.EncodeToString(b[8:10]) + "-" + hex.EncodeToString(b[10:])
}

func slUID(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// slTestNow is the fixed "server time" of the tests: a whole second, so
// the ±120 s window is exact in seconds and in milliseconds.
var slTestNow = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

const (
	slPublicURL      = "http://pitboss.test"
	slSandboxHost    = "sandbox.test"
	slProductionHost = "api.test"
	slSessionTTL     = time.Hour
)

// slClient is one operator with an API key and a client secret.
type slClient struct {
	id, key, secret, host string
}

// slHarness is the real Echo server on a fresh Postgres database with a
// running ledger writer.
type slHarness struct {
	t        *testing.T
	pool     *pgxpool.Pool
	handler  http.Handler
	clock    *slClock
	gw       *gatewaystore.Gateway
	launch   *gatewaystore.LaunchClients
	accounts *eventstore.Accounts

	provider, providerSecret, game string
}

func newSLHarness(t *testing.T) *slHarness {
	t.Helper()
	pool, _ := pgtest.NewDatabase(t)
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	ledger, err := eventstore.NewLedger(pool, eventstore.LedgerConfig{}, logger)
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
	box, err := secretbox.New([]byte(strings.Repeat("k", secretbox.KeySize)))
	if err != nil {
		t.Fatal(err)
	}
	lc, err := gatewaystore.NewLaunchClients(pool, box)
	if err != nil {
		t.Fatal(err)
	}
	clock := &slClock{t: slTestNow}
	gw := gatewaystore.NewGateway(pool).WithSecretBox(box) // provider secrets sealed, as in serve
	reg, err := providers.NewRegistryWithConfig(providers.Config{PublicURL: slPublicURL, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	srv := api.NewServer(api.Config{
		PublicURL:          slPublicURL,
		SessionTTL:         slSessionTTL,
		HostEnvironments:   map[string]string{slSandboxHost: "sandbox", slProductionHost: "production"},
		DefaultEnvironment: "sandbox",
		TrustedProxies:     []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
	}, api.Deps{
		Commands: commands.NewHandler(ledger, clock, slIDs{}),
		Balances: eventstore.NewAccounts(pool), Wallets: gw, Keys: gw, Catalog: gw, Sessions: gw,
		LaunchClients: lc, Games: gw, Launcher: reg, Clock: clock, IDs: slIDs{}, Logger: logger,
	})
	h := &slHarness{t: t, pool: pool, handler: srv.Handler(), clock: clock, gw: gw, launch: lc,
		accounts: eventstore.NewAccounts(pool), provider: slUID("prov"), providerSecret: "provider-secret-" + slUID("s"),
		game: slUID("game")}
	if err := gw.UpsertProvider(context.Background(), gateway.Provider{ID: h.provider, Name: "Test provider",
		Secret: h.providerSecret, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if err := gw.UpsertGame(context.Background(), gateway.Game{ID: h.game, ProviderID: h.provider, Name: "Test slot",
		Category: "slots", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	return h
}

// newClient creates a client in env with a key holding scopes, issues its
// client secret and applies settings.
func (h *slHarness) newClient(env string, scopes []string, settings gateway.LaunchSettings) slClient {
	h.t.Helper()
	ctx := context.Background()
	c := slClient{id: slUID("client"), host: slSandboxHost}
	if env == "production" {
		c.host = slProductionHost
	}
	if _, err := h.gw.CreateClient(ctx, c.id, "Test operator", env); err != nil {
		h.t.Fatal(err)
	}
	var err error
	if c.key, _, err = h.gw.IssueKey(ctx, c.id, scopes, nil); err != nil {
		h.t.Fatal(err)
	}
	if c.secret, err = h.launch.IssueClientSecret(ctx, c.id); err != nil {
		h.t.Fatal(err)
	}
	if err := h.launch.SetLaunchSettings(ctx, c.id, settings); err != nil {
		h.t.Fatal(err)
	}
	return c
}

// slSign is the spec's rule, written out here and not taken from the code
// under test: lowercase hex HMAC-SHA256, keyed with the client secret, of
// api_key|user_id|game_uid|balance|ts.
func slSign(secret, apiKey, userID, gameUID, balance, ts string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(apiKey + "|" + userID + "|" + gameUID + "|" + balance + "|" + ts))
	return hex.EncodeToString(m.Sum(nil))
}

// signedQuery builds a launch query signed with the client's secret at the
// test clock's time (in seconds).
func (h *slHarness) signedQuery(c slClient, user, balance string) url.Values {
	ts := strconv.FormatInt(h.clock.Now().Unix(), 10)
	return url.Values{"api_key": {c.key}, "user_id": {user}, "game_uid": {h.game}, "balance": {balance},
		"ts": {ts}, "sig": {slSign(c.secret, c.key, user, h.game, balance, ts)}, "currency_code": {"EUR"}}
}

type slRequest struct {
	host       string
	remoteAddr string
	header     http.Header
}

// get sends a GET to the real Echo handler. remoteAddr is the direct peer.
func (h *slHarness) get(path string, q url.Values, r slRequest) *httptest.ResponseRecorder {
	h.t.Helper()
	target := path
	if q != nil {
		target += "?" + q.Encode()
	}
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Host = r.host
	if req.Host == "" {
		req.Host = slSandboxHost
	}
	req.RemoteAddr = r.remoteAddr
	if req.RemoteAddr == "" {
		req.RemoteAddr = "192.0.2.10:51000"
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.handler.ServeHTTP(rec, req)
	return rec
}

func (h *slHarness) launchAs(c slClient, q url.Values) *httptest.ResponseRecorder {
	h.t.Helper()
	return h.get("/v1/launch", q, slRequest{host: c.host})
}

// slLaunchAnswer is the launch response as a client reads it.
type slLaunchAnswer struct {
	OK        bool   `json:"ok"`
	GameURL   string `json:"game_url"`
	SessionID string `json:"session_id"`
	Error     string `json:"error"`
	Code      string `json:"code"`
}

func slDecode[T any](t *testing.T, rec *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("decode %q: %v", rec.Body.String(), err)
	}
	return v
}

// mustLaunch launches for user with balance and returns the session id.
func (h *slHarness) mustLaunch(c slClient, user, balance string, extra url.Values) slLaunchAnswer {
	h.t.Helper()
	q := h.signedQuery(c, user, balance)
	for k, v := range extra {
		q[k] = v
	}
	rec := h.launchAs(c, q)
	if rec.Code != http.StatusOK {
		h.t.Fatalf("launch: status %d, body %s", rec.Code, rec.Body)
	}
	a := slDecode[slLaunchAnswer](h.t, rec)
	if !a.OK || a.SessionID == "" {
		h.t.Fatalf("launch: %+v", a)
	}
	return a
}

func (h *slHarness) balance(id domain.AccountID) int64 {
	h.t.Helper()
	st, err := h.accounts.Account(context.Background(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	return st.Balance
}

// events returns the ledger events of one stream of a type, decoded from
// the stored canonical bodies.
func (h *slHarness) events(stream domain.AccountID, typ domain.EventType) []domain.Event {
	h.t.Helper()
	rows, err := h.pool.Query(context.Background(),
		`SELECT body::text FROM events WHERE stream_id = $1 AND event_type = $2 ORDER BY position`, string(stream), string(typ))
	if err != nil {
		h.t.Fatal(err)
	}
	defer rows.Close()
	var out []domain.Event
	for rows.Next() {
		var b string
		if err := rows.Scan(&b); err != nil {
			h.t.Fatal(err)
		}
		e, err := domain.DecodeBody([]byte(b))
		if err != nil {
			h.t.Fatal(err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		h.t.Fatal(err)
	}
	return out
}

// providerCall posts a wallet call signed with secret (the provider's
// unless the test says otherwise).
func (h *slHarness) providerCall(op string, body map[string]any, secret string) *httptest.ResponseRecorder {
	h.t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		h.t.Fatal(err)
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(raw)
	req := httptest.NewRequest(http.MethodPost, "/provider/v1/wallet/"+op, strings.NewReader(string(raw)))
	req.Host = slSandboxHost
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Provider-Id", h.provider)
	req.Header.Set("X-Signature", hex.EncodeToString(m.Sum(nil)))
	rec := httptest.NewRecorder()
	h.handler.ServeHTTP(rec, req)
	return rec
}

// slWalletAnswer is a provider wallet answer.
type slWalletAnswer struct {
	Status        string      `json:"status"`
	Balance       json.Number `json:"balance"`
	Currency      string      `json:"currency"`
	TransactionID string      `json:"transaction_id"`
	ExternalID    string      `json:"external_transaction_id"`
	RoundID       string      `json:"round_id"`
	Replayed      bool        `json:"replayed"`
}

// slErrorBody is the one error shape.
type slErrorBody struct {
	Success bool `json:"success"`
	Error   struct {
		Code      string         `json:"code"`
		Message   string         `json:"message"`
		RequestID string         `json:"request_id"`
		Details   map[string]any `json:"details"`
	} `json:"error"`
}
