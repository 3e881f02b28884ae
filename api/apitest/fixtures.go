package apitest

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/wallet"
)

// UID is prefix and eight random hex digits: an id no other test uses.
func UID(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// Client is an operator with an API key.
type Client struct {
	ID    string
	Key   string // the API key itself
	KeyID string
	// Secret is the client secret of the signed launch (NewLaunchClient).
	Secret string
	// Host addresses the client's environment: a host Options.HostEnvironments
	// maps to it, or empty (the default, sandbox).
	Host string
}

// NewClient stores a sandbox client with a fresh id and issues it a key
// holding scopes.
func (h *Harness) NewClient(scopes ...string) Client {
	h.t.Helper()
	return h.NewClientIn("sandbox", scopes...)
}

// NewClientIn is NewClient in environment env.
func (h *Harness) NewClientIn(env string, scopes ...string) Client {
	h.t.Helper()
	c := Client{ID: UID("client")}
	h.AddClient(c.ID, env)
	c.Key, c.KeyID = h.IssueKey(c.ID, scopes...)
	for host, e := range h.opts.HostEnvironments {
		if e == env {
			c.Host = host
		}
	}
	return c
}

// NewLaunchClient is NewClientIn with a client secret issued for the
// signed launch and settings applied.
func (h *Harness) NewLaunchClient(env string, scopes []string, settings gateway.LaunchSettings) Client {
	h.t.Helper()
	c := h.NewClientIn(env, scopes...)
	ctx := context.Background()
	var err error
	if c.Secret, err = h.LaunchClients.IssueClientSecret(ctx, c.ID); err != nil {
		h.t.Fatal(err)
	}
	if err := h.LaunchClients.SetLaunchSettings(ctx, c.ID, settings); err != nil {
		h.t.Fatal(err)
	}
	return c
}

// AddClient stores client id in env.
func (h *Harness) AddClient(id, env string) {
	h.t.Helper()
	if _, err := h.Gateway.CreateClient(context.Background(), id, "Operator "+id, env); err != nil {
		h.t.Fatal(err)
	}
}

// IssueKey issues client a key holding scopes.
func (h *Harness) IssueKey(client string, scopes ...string) (key, keyID string) {
	h.t.Helper()
	key, keyID, err := h.Gateway.IssueKey(context.Background(), client, scopes, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	return key, keyID
}

// AddProvider stores an enabled provider, whose secret is "secret-of-"
// and its id, on the default signature scheme (v2), with a route of kind
// over endpoints; name defaults to the id. The route is returned for a
// test to change.
func (h *Harness) AddProvider(id, name, kind string, endpoints ...string) gateway.ProviderRoute {
	h.t.Helper()
	ctx := context.Background()
	if name == "" {
		name = id
	}
	if err := h.Gateway.UpsertProvider(ctx, gateway.Provider{ID: id, Name: name, Secret: ProviderSecret(id), Enabled: true}); err != nil {
		h.t.Fatal(err)
	}
	r := gateway.ProviderRoute{ProviderID: id, Kind: kind, Endpoints: endpoints, Balancing: gateway.BalancingPriority,
		Timeout: 5 * time.Second, BreakerFailures: 2, BreakerCooldown: 30 * time.Second}
	if err := h.Gateway.SetProviderRoute(ctx, r); err != nil {
		h.t.Fatal(err)
	}
	return r
}

// ProviderSecret is the wallet secret AddProvider gives provider id.
func ProviderSecret(id string) string { return "secret-of-" + id }

// AddGame stores a game of a provider.
func (h *Harness) AddGame(id, providerID, name, category string, enabled bool) {
	h.t.Helper()
	if err := h.Gateway.UpsertGame(context.Background(), gateway.Game{ID: id, ProviderID: providerID, Name: name,
		Category: category, Enabled: enabled}); err != nil {
		h.t.Fatal(err)
	}
}

// Deposit funds a player's (with an empty player, the client's own)
// wallet through POST /api/v1/transactions.
func (h *Harness) Deposit(c Client, player, amount, currency string) {
	h.t.Helper()
	rec := h.Call(http.MethodPost, "/api/v1/transactions", c.Key, map[string]string{"type": "deposit",
		"transaction_id": UID("dep"), "player_id": player, "amount": amount, "currency": currency})
	if rec.Code != http.StatusOK {
		h.t.Fatalf("deposit: %d %s", rec.Code, rec.Body)
	}
}

// Launch is a launch answer as a client reads it.
type Launch struct {
	GameURL       string `json:"game_url"`
	TransactionID string `json:"transaction_id"`
	ExpiresAt     string `json:"expires_at"`
	SessionID     string `json:"session_id"`
}

// LaunchBody is the JSON body of POST /api/v1/game/launch.
func LaunchBody(provider, game, player, currency string) string {
	return `{"provider":"` + provider + `","game_id":"` + game + `","player_id":"` + player + `","currency":"` + currency + `"}`
}

// Balance is a wallet's committed balance in minor units.
func (h *Harness) Balance(id domain.AccountID) int64 {
	h.t.Helper()
	st, err := h.Accounts.Account(context.Background(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	return st.Balance
}

// Head is the position of the last event in the store.
func (h *Harness) Head() int64 {
	h.t.Helper()
	pos, _, err := h.Accounts.Head(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	return pos
}

// Events returns the ledger events of one stream and type, decoded from
// the stored bodies, in position order.
func (h *Harness) Events(stream domain.AccountID, typ domain.EventType) []domain.Event {
	h.t.Helper()
	rows, err := h.Pool.Query(context.Background(),
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

// Sign is the lowercase hex HMAC-SHA256 of body keyed with secret: the
// provider wallet's legacy v1 X-Signature, and the MAC of SignV2 and
// SignLaunch. It is written out here from the spec, not taken from the
// code under test.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// SignV2 is the provider wallet's v2 X-Signature of a call sent at Unix
// second t: "t=<t>,v2=<hex>", the hex being Sign of
// "<t>.<METHOD>.<path>.<raw body>". Written out from
// docs/provider-wallet.md, not taken from the code under test.
func SignV2(secret string, t int64, method, path string, body []byte) string {
	ts := strconv.FormatInt(t, 10)
	return "t=" + ts + ",v2=" + Sign(secret, []byte(ts+"."+method+"."+path+"."+string(body)))
}

// SignLaunch is the signed launch's sig, by the spec's rule: Sign, keyed
// with the client secret, of api_key|user_id|game_uid|balance|ts.
func SignLaunch(secret, apiKey, userID, gameUID, balance, ts string) string {
	return Sign(secret, []byte(apiKey+"|"+userID+"|"+gameUID+"|"+balance+"|"+ts))
}

// WalletCall posts a provider wallet call (op: balance, bet, win,
// rollback) as provider, signed with secret by the v2 scheme (SignV2) at
// the server clock's time, as a provider whose clock agrees with ours.
func (h *Harness) WalletCall(provider, secret, op string, body any) *httptest.ResponseRecorder {
	h.t.Helper()
	raw, _ := requestBody(h.t, body)
	path := "/provider/v1/wallet/" + op
	return h.Do(Request{Method: http.MethodPost, Path: path, Body: raw,
		Header: map[string]string{"X-Provider-Id": provider, "X-Signature": SignV2(secret, h.Clock.Now().Unix(), http.MethodPost, path, raw)}})
}

// WalletCallV1 is WalletCall signed by the legacy v1 scheme: Sign of the
// body alone.
func (h *Harness) WalletCallV1(provider, secret, op string, body any) *httptest.ResponseRecorder {
	h.t.Helper()
	raw, _ := requestBody(h.t, body)
	return h.Do(Request{Method: http.MethodPost, Path: "/provider/v1/wallet/" + op, Body: raw,
		Header: map[string]string{"X-Provider-Id": provider, "X-Signature": Sign(secret, raw)}})
}

// JSONProvider is an outside game provider speaking the json kind on a
// loopback port: it answers launchUrl with the token it was sent, or fails
// with its status (4xx: a refusal naming PLAYER_BLOCKED). Calls receives
// the request bodies (buffered; one that does not fit is dropped).
type JSONProvider struct {
	*httptest.Server
	Calls chan map[string]any
}

// NewJSONProvider starts a provider answering with status until the test
// ends.
func NewJSONProvider(t testing.TB, status int) *JSONProvider {
	t.Helper()
	p := &JSONProvider{Calls: make(chan map[string]any, 64)}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		select {
		case p.Calls <- body:
		default:
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		switch {
		case status == http.StatusOK:
			token, _ := body["token"].(string)
			_ = json.NewEncoder(w).Encode(map[string]string{"launchUrl": "https://games.example/play?token=" + token})
		case status < 500:
			_, _ = io.WriteString(w, `{"errorCode":"PLAYER_BLOCKED","message":"player is blocked"}`)
		default:
			_, _ = io.WriteString(w, `{"message":"down"}`)
		}
	}))
	t.Cleanup(p.Close)
	return p
}

// SettleFollowUps makes one pass of the seamless wallet's follow-up queue
// (wallet.FollowUpRunner.Once) at the harness's clock, and answers how
// many it settled.
func (h *Harness) SettleFollowUps() int {
	h.t.Helper()
	n, err := wallet.FollowUpRunner{Core: h.Server.WalletCore(), Queue: h.FollowUps, Logger: h.log}.Once(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	return n
}
