package demogame_test

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
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/adapters/kafka/kafkatest"
	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/postgres/readstore"
	"github.com/pitboss/pitboss/adapters/projector"
	"github.com/pitboss/pitboss/adapters/providers"
	"github.com/pitboss/pitboss/adapters/relay"
	"github.com/pitboss/pitboss/adapters/system"
	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/demogame"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/projections"
)

// The harness of the demo game's tests: the real api server with the game
// mounted as cmd/pitboss mounts it, on a loopback port (the game calls the
// wallet over it), on a fresh Postgres database, with a running ledger
// writer and the real provider registry. Names keep the "ct" prefix of the
// api catalog tests they came from.

var _ demogame.Host = (*api.Server)(nil)

var ctEUR = domain.MustCurrency("EUR")

type ctHarness struct {
	t        *testing.T
	pool     *pgxpool.Pool
	gw       *gatewaystore.Gateway
	accounts *eventstore.Accounts
	base     string
	http     *http.Client
	// walletProxy sits between the demo game and the provider wallet
	// (demogame.Config.WalletURL) and records every call in walletCalls.
	walletProxy *httptest.Server
	walletCalls chan ctWalletCall
}

func ctUID(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// ctOptions change the server a harness builds.
type ctOptions struct {
	// readModels runs the relay (event store -> a fresh Kafka topic) and
	// the projectors (topic -> read models) behind the server, as serve
	// does, so GET /api/v1/transactions answers.
	readModels bool
}

// ctWalletCall is one call the demo game made to the provider wallet, as
// a recording proxy between them saw it.
type ctWalletCall struct {
	Path, ProviderID, Signature string
	Body                        []byte
}

func newCTHarness(t *testing.T, opts ...ctOptions) *ctHarness {
	t.Helper()
	var o ctOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	pool, _ := pgtest.NewDatabase(t)
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	ledger, err := eventstore.NewLedger(pool, eventstore.LedgerConfig{}, logger)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ledger.Run(ctx) }()
	ts := httptest.NewUnstartedServer(nil)
	base := "http://" + ts.Listener.Addr().String()
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	calls := make(chan ctWalletCall, 1024)
	fwd := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		select {
		case calls <- ctWalletCall{Path: r.URL.Path, ProviderID: r.Header.Get("X-Provider-Id"),
			Signature: r.Header.Get("X-Signature"), Body: b}:
		default:
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		fwd.ServeHTTP(w, r)
	}))
	reg, err := providers.NewRegistryWithConfig(providers.Config{PublicURL: base, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	gw := gatewaystore.NewGateway(pool)
	deps := api.Deps{
		Commands: commands.NewHandler(ledger, system.Clock{}, system.IDs{}),
		Balances: eventstore.NewAccounts(pool), Wallets: gw, Keys: gw, Catalog: gw, Sessions: gw,
		Games: gw, Launcher: reg, Clock: system.Clock{}, IDs: system.IDs{}, Logger: logger,
	}
	if o.readModels {
		rm := readstore.NewReadModels(pool)
		deps.Queries = &projections.Queries{Transactions: rm, Reports: rm, Positions: rm, Ledger: eventstore.NewAccounts(pool)}
		startReadModels(t, ctx, pool, rm, logger)
	}
	srv := api.NewServer(api.Config{PublicURL: base, SessionTTL: time.Hour, DefaultEnvironment: "sandbox"}, deps)
	game, err := demogame.New(demogame.Config{WalletURL: proxy.URL, Host: srv, Sessions: gw, Catalog: gw,
		Routes: gw, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	game.Register(srv.Echo())
	ts.Config.Handler = srv.Handler()
	ts.Start()
	t.Cleanup(func() {
		proxy.Close()
		ts.Close()
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("ledger run: %v", err)
		}
	})
	return &ctHarness{t: t, pool: pool, gw: gw, accounts: eventstore.NewAccounts(pool), base: base,
		http: &http.Client{Timeout: 30 * time.Second}, walletProxy: proxy, walletCalls: calls}
}

// ctClient is an operator with an API key.
type ctClient struct{ id, key string }

func (h *ctHarness) newClient(scopes ...string) ctClient {
	h.t.Helper()
	ctx := context.Background()
	c := ctClient{id: ctUID("client")}
	if _, err := h.gw.CreateClient(ctx, c.id, "Test operator", "sandbox"); err != nil {
		h.t.Fatal(err)
	}
	var err error
	if c.key, _, err = h.gw.IssueKey(ctx, c.id, scopes, nil); err != nil {
		h.t.Fatal(err)
	}
	return c
}

// addProvider stores an enabled provider with its route; name defaults to
// the id.
func (h *ctHarness) addProvider(id, name, kind string, endpoints ...string) {
	h.t.Helper()
	ctx := context.Background()
	if name == "" {
		name = id
	}
	if err := h.gw.UpsertProvider(ctx, gateway.Provider{ID: id, Name: name, Secret: "secret-of-" + id, Enabled: true}); err != nil {
		h.t.Fatal(err)
	}
	r := gateway.ProviderRoute{ProviderID: id, Kind: kind, Endpoints: endpoints, Balancing: gateway.BalancingPriority,
		Timeout: 5 * time.Second, BreakerFailures: 2, BreakerCooldown: 30 * time.Second}
	if err := h.gw.SetProviderRoute(ctx, r); err != nil {
		h.t.Fatal(err)
	}
}

func (h *ctHarness) addGame(id, providerID, name, category string, enabled bool) {
	h.t.Helper()
	if err := h.gw.UpsertGame(context.Background(), gateway.Game{ID: id, ProviderID: providerID, Name: name,
		Category: category, Enabled: enabled}); err != nil {
		h.t.Fatal(err)
	}
}

func launchBody(provider, game, player, currency string) string {
	return `{"provider":"` + provider + `","game_id":"` + game + `","player_id":"` + player + `","currency":"` + currency + `"}`
}

// ctResponse is an HTTP answer with its body.
type ctResponse struct {
	status int
	header http.Header
	body   []byte
}

func (r ctResponse) String() string { return http.StatusText(r.status) + ": " + string(r.body) }

// do sends a request over the loopback listener. An empty key sends no
// Authorization header; body is sent as application/json when not empty.
func (h *ctHarness) do(method, path, key, body string) ctResponse {
	h.t.Helper()
	req, err := http.NewRequest(method, h.base+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.http.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return ctResponse{status: resp.StatusCode, header: resp.Header, body: b}
}

// ctOK decodes a success envelope's data, failing unless status is 200.
func ctOK[T any](t *testing.T, r ctResponse) T {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", r.status, r.body)
	}
	var env struct {
		Success bool            `json:"success"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(r.body, &env); err != nil || !env.Success {
		t.Fatalf("envelope %s: %v", r.body, err)
	}
	var v T
	dec := json.NewDecoder(strings.NewReader(string(env.Data)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode data %s: %v", env.Data, err)
	}
	return v
}

// ctErr is the one error shape.
type ctErr struct {
	Success bool `json:"success"`
	Error   struct {
		Code      string         `json:"code"`
		Message   string         `json:"message"`
		RequestID string         `json:"request_id"`
		Details   map[string]any `json:"details"`
	} `json:"error"`
}

// ctWantError checks status and code of an error answer.
func ctWantError(t *testing.T, r ctResponse, status int, code string) ctErr {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	var e ctErr
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("error body %s: %v", r.body, err)
	}
	if e.Success || e.Error.Code != code || e.Error.RequestID == "" || e.Error.Message == "" {
		t.Fatalf("error %+v, want code %s", e, code)
	}
	return e
}

// deposit funds a player's wallet through POST /api/v1/transactions.
func (h *ctHarness) deposit(c ctClient, player, amount, currency string) {
	h.t.Helper()
	b, err := json.Marshal(map[string]string{"type": "deposit", "transaction_id": ctUID("dep"), "player_id": player,
		"amount": amount, "currency": currency})
	if err != nil {
		h.t.Fatal(err)
	}
	if r := h.do(http.MethodPost, "/api/v1/transactions", c.key, string(b)); r.status != http.StatusOK {
		h.t.Fatalf("deposit: %s", r)
	}
}

// balance is a wallet's committed balance in minor units.
func (h *ctHarness) balance(id domain.AccountID) int64 {
	h.t.Helper()
	st, err := h.accounts.Account(context.Background(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	return st.Balance
}

// events returns the ledger events of one stream of a type.
func (h *ctHarness) events(stream domain.AccountID, typ domain.EventType) []domain.Event {
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

// ctLaunch is the launch result as a client reads it.
type ctLaunch struct {
	GameURL       string `json:"game_url"`
	TransactionID string `json:"transaction_id"`
	ExpiresAt     string `json:"expires_at"`
	SessionID     string `json:"session_id"`
}

// newCTJSONProvider is a real outside provider endpoint on loopback
// speaking the json kind: it answers launchUrl with the token it was sent.
func newCTJSONProvider(t *testing.T) *httptest.Server {
	t.Helper()
	p := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		token, _ := body["token"].(string)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"launchUrl": "https://games.example/play?token=" + token})
	}))
	t.Cleanup(p.Close)
	return p
}

// startReadModels runs the relay and one projector per projection on a
// fresh topic with fresh consumer groups until the test ends.
func startReadModels(t *testing.T, ctx context.Context, pool *pgxpool.Pool, rm *readstore.ReadModels, logger *slog.Logger) {
	t.Helper()
	brokers := kafkatest.Brokers(t)
	topic := kafkatest.NewTopic(t, brokers, 3)
	dlq := kafkatest.NewTopic(t, brokers, 1)
	pub, err := kafka.NewPublisher(brokers, logger)
	if err != nil {
		t.Fatal(err)
	}
	r, err := relay.New(pool, pub, relay.Config{Topic: topic, PollInterval: 100 * time.Millisecond}, logger)
	if err != nil {
		t.Fatal(err)
	}
	var runners []func(context.Context) error
	runners = append(runners, r.Run)
	for _, n := range projections.All {
		w, err := projector.New(rm, projector.Config{Brokers: brokers, Topic: topic, DeadLetterTopic: dlq, Projection: n,
			ConsumerGroup: ctUID("pitboss-test-" + string(n))}, logger)
		if err != nil {
			t.Fatal(err)
		}
		runners = append(runners, w.Run)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, len(runners))
	for _, run := range runners {
		go func() { done <- run(rctx) }()
	}
	t.Cleanup(func() {
		stop()
		for range runners {
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("read models: %v", err)
			}
		}
		_ = pub.Close()
	})
}
