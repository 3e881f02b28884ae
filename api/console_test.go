package api_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/audit"
	"github.com/pitboss/pitboss/console"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/internal/eventually"
)

// TestConsoleRoutes covers every status of the routes the console added
// (GET /api/v1/me, /console/overview, /transactions/{id}, /audit/head)
// and the static pages, on the real server with real Postgres, Kafka, the
// relay and the projectors.
func TestConsoleRoutes(t *testing.T) {
	t.Parallel()
	h := newConsoleFixture(t)
	full := h.NewClient(gateway.AllScopes...)
	other := h.NewClient(gateway.AllScopes...)
	reportsOnly := h.NewClient(gateway.ScopeReportsRead)
	walletOnly := h.NewClient(gateway.ScopeWalletRead)
	h.webhook(full)
	h.Deposit(full, "p1", "20.00", "EUR")
	h.Deposit(full, "", "100.00", "EUR")
	b := h.bet(full, "p1", "2.50")
	otherBet := h.bet2(other)
	h.WaitHistory(full.Key, b.position)
	parked := h.park(full)

	t.Run("me", func(t *testing.T) {
		type me struct {
			ClientID    string   `json:"client_id"`
			KeyID       string   `json:"key_id"`
			Environment string   `json:"environment"`
			Scopes      []string `json:"scopes"`
		}
		for _, c := range []struct {
			key    apitest.Client
			scopes []string
		}{{full, gateway.AllScopes}, {walletOnly, []string{gateway.ScopeWalletRead}}} {
			got := apitest.Data[me](t, h.Call(http.MethodGet, "/api/v1/me", c.key.Key, ""))
			if got.ClientID != c.key.ID || got.Environment != "sandbox" || got.KeyID == "" || !strings.Contains(c.key.Key, got.KeyID) ||
				!slices.Equal(slices.Sorted(slices.Values(got.Scopes)), slices.Sorted(slices.Values(c.scopes))) {
				t.Errorf("me %+v for client %s with %v", got, c.key.ID, c.scopes)
			}
		}
		apitest.WantError(t, h.Call(http.MethodGet, "/api/v1/me", "", ""), http.StatusUnauthorized, wire.CodeUnauthorized)
		apitest.WantError(t, h.Call(http.MethodGet, "/api/v1/me", "pb_test_nope_nope", ""), http.StatusUnauthorized, wire.CodeUnauthorized)
	})

	t.Run("overview", func(t *testing.T) {
		type overview struct {
			Day   string `json:"day"`
			Today []struct {
				Currency string      `json:"currency"`
				Bets     json.Number `json:"bets"`
				Wins     json.Number `json:"wins"`
				GGR      json.Number `json:"ggr"`
				Rounds   int64       `json:"rounds"`
			} `json:"today"`
			Balances []struct {
				Currency string      `json:"currency"`
				Balance  json.Number `json:"balance"`
			} `json:"balances"`
			Lag *struct {
				Head        int64 `json:"head"`
				Projections []struct {
					Name     string `json:"name"`
					Position int64  `json:"position"`
				} `json:"projections"`
			} `json:"lag"`
			FailedDeliveries []struct {
				ID     string `json:"id"`
				Status string `json:"status"`
			} `json:"failed_deliveries"`
			FailedTotal *int64 `json:"failed_deliveries_total"`
		}
		r := h.Call(http.MethodGet, "/api/v1/console/overview", full.Key, "")
		o := apitest.Data[overview](t, r)
		if o.Day != time.Now().UTC().Format(time.DateOnly) || len(o.Today) != 1 || o.Today[0].Currency != "EUR" ||
			o.Today[0].Bets != "2.50" || o.Today[0].Wins != "0.00" || o.Today[0].GGR != "2.50" || o.Today[0].Rounds != 1 {
			t.Errorf("today %+v", o)
		}
		if len(o.Balances) != 1 || o.Balances[0].Balance != "100.00" {
			t.Errorf("balances %+v, want the client wallet's EUR 100.00", o.Balances)
		}
		if o.Lag == nil || o.Lag.Head < b.position || len(o.Lag.Projections) != 2 {
			t.Errorf("lag %+v", o.Lag)
		}
		if o.FailedTotal == nil || *o.FailedTotal != 1 || len(o.FailedDeliveries) != 1 || o.FailedDeliveries[0].ID != parked ||
			o.FailedDeliveries[0].Status != gateway.DeliveryParked {
			t.Errorf("failed deliveries %+v (total %v), want %s", o.FailedDeliveries, o.FailedTotal, parked)
		}
		if r.Header().Get(api.HeaderLedgerPosition) == "" {
			t.Error("no X-Ledger-Position")
		}
		// A past day has nothing; a key without wallet:read and
		// deliveries:read gets null for those parts.
		if o := apitest.Data[overview](t, h.Call(http.MethodGet, "/api/v1/console/overview?day=2020-01-31", full.Key, "")); len(o.Today) != 0 {
			t.Errorf("2020-01-31: %+v", o.Today)
		}
		raw := h.Call(http.MethodGet, "/api/v1/console/overview", reportsOnly.Key, "")
		var env struct {
			Data map[string]json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(raw.Body.Bytes(), &env); err != nil || string(env.Data["balances"]) != "null" ||
			string(env.Data["failed_deliveries"]) != "null" || string(env.Data["today"]) != "[]" {
			t.Errorf("reports-only overview: %s (%v)", raw.Body, err)
		}
		for _, c := range []struct {
			name, query, key string
			status           int
			code             string
		}{
			{"bad day", "?day=31.01.2020", full.Key, 400, wire.CodeInvalidRequest},
			{"bad min_position", "?min_position=-1", full.Key, 400, wire.CodeInvalidRequest},
			{"no key", "", "", 401, wire.CodeUnauthorized},
			{"no reports:read", "", walletOnly.Key, 403, wire.CodeForbidden},
		} {
			t.Run(c.name, func(t *testing.T) {
				apitest.WantError(t, h.Call(http.MethodGet, "/api/v1/console/overview"+c.query, c.key, ""), c.status, c.code)
			})
		}
	})

	t.Run("transaction detail", func(t *testing.T) {
		type detail struct {
			ID       string       `json:"id"`
			Type     string       `json:"type"`
			Amount   json.Number  `json:"amount"`
			RoundID  *string      `json:"round_id"`
			Position int64        `json:"position"`
			Events   []audit.Line `json:"events"`
		}
		type row struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		}
		rows := apitest.Data[[]row](t, h.Call(http.MethodGet, "/api/v1/transactions?player_id=p1&provider=demo", full.Key, ""))
		ids := map[string]string{}
		for _, r := range rows {
			ids[r.Type] = r.ID
		}
		if ids["bet"] == "" || ids["game_result"] == "" {
			t.Fatalf("history rows %+v", rows)
		}
		var wantHash []byte
		if err := h.Pool.QueryRow(context.Background(), `SELECT hash FROM events WHERE event_id = $1`, ids["bet"]).Scan(&wantHash); err != nil {
			t.Fatal(err)
		}
		d := apitest.Data[detail](t, h.Call(http.MethodGet, "/api/v1/transactions/"+ids["bet"], full.Key, ""))
		if d.ID != ids["bet"] || d.Type != "bet" || d.Amount != "-2.50" || len(d.Events) != 1 ||
			d.Events[0].EventID != ids["bet"] || d.Events[0].Hash != hex.EncodeToString(wantHash) || d.Events[0].Position != b.position {
			t.Errorf("bet detail %+v, want its one event with hash %x", d, wantHash)
		}
		g := apitest.Data[detail](t, h.Call(http.MethodGet, "/api/v1/transactions/"+ids["game_result"], full.Key, ""))
		if g.Type != "game_result" || g.RoundID == nil || *g.RoundID != b.round || len(g.Events) != 1 || g.Events[0].EventID != ids["bet"] {
			t.Errorf("game result detail %+v, want the round's bet event", g)
		}
		for _, c := range []struct {
			name, id, key string
			status        int
			code          string
		}{
			{"not a uuid", "bet-1", full.Key, 400, wire.CodeInvalidRequest},
			{"no key", ids["bet"], "", 401, wire.CodeUnauthorized},
			{"no transactions:read", ids["bet"], walletOnly.Key, 403, wire.CodeForbidden},
			{"unknown", "00000000-0000-4000-8000-000000000000", full.Key, 404, wire.CodeNotFound},
			{"another client's", otherBet, full.Key, 404, wire.CodeNotFound},
		} {
			t.Run(c.name, func(t *testing.T) {
				apitest.WantError(t, h.Call(http.MethodGet, "/api/v1/transactions/"+c.id, c.key, ""), c.status, c.code)
			})
		}
	})

	t.Run("audit head", func(t *testing.T) {
		type head struct {
			Position   int64  `json:"position"`
			Hash       string `json:"hash"`
			EventsPath string `json:"events_path"`
			LastVerify *struct {
				OK           bool   `json:"ok"`
				HeadPosition int64  `json:"head_position"`
				HeadHash     string `json:"head_hash"`
				Checks       []struct {
					Name string `json:"name"`
					OK   bool   `json:"ok"`
				} `json:"checks"`
			} `json:"last_verify"`
		}
		var pos int64
		var hash []byte
		// the client's own head: its last event's position and hash, never
		// the platform's (issue 17, item 8)
		if err := h.Pool.QueryRow(context.Background(), `SELECT position, hash FROM events
			WHERE split_part(stream_id, ':', 2) = $1 ORDER BY position DESC LIMIT 1`, full.ID).Scan(&pos, &hash); err != nil {
			t.Fatal(err)
		}
		got := apitest.Data[head](t, h.Call(http.MethodGet, "/api/v1/audit/head", full.Key, ""))
		if got.Position != pos || got.Hash != hex.EncodeToString(hash) || got.EventsPath != "/api/v1/audit/events" ||
			got.LastVerify != nil {
			t.Errorf("head %+v, want the client's own head %d %x and no verification yet", got, pos, hash)
		}
		rep, err := h.Audit.Verify(context.Background(), auditstore.VerifyOptions{SkipReadModels: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Audit.SaveRun(context.Background(), rep); err != nil {
			t.Fatal(err)
		}
		got = apitest.Data[head](t, h.Call(http.MethodGet, "/api/v1/audit/head", full.Key, ""))
		// the client's part of the run (TestClientsSeeTheirOwnPositions)
		span, _ := rep.Client(full.ID)
		if got.LastVerify == nil || got.LastVerify.OK != rep.OK || got.LastVerify.HeadPosition != span.HeadPosition ||
			got.LastVerify.HeadHash != span.HeadHash || len(got.LastVerify.Checks) != len(rep.Checks) {
			t.Errorf("last verify %+v, want %+v of %+v", got.LastVerify, span, rep)
		}
		apitest.WantError(t, h.Call(http.MethodGet, "/api/v1/audit/head", "", ""), http.StatusUnauthorized, wire.CodeUnauthorized)
		apitest.WantError(t, h.Call(http.MethodGet, "/api/v1/audit/head", walletOnly.Key, ""), http.StatusForbidden, wire.CodeForbidden)
	})

	t.Run("static pages", func(t *testing.T) {
		noRedirect := &http.Client{Timeout: 10 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		get := func(path string) (*http.Response, string) {
			t.Helper()
			res, err := noRedirect.Get(h.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			return res, string(b)
		}
		res, body := get("/console/")
		if res.StatusCode != 200 || !strings.Contains(body, `<script type="module" src="app.js">`) ||
			res.Header.Get("Content-Security-Policy") != console.ContentSecurityPolicy ||
			!strings.Contains(res.Header.Get("Content-Security-Policy"), "default-src 'self'") ||
			!strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Errorf("/console/: %d %v", res.StatusCode, res.Header)
		}
		if res, _ := get("/console"); res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != "/console/" {
			t.Errorf("/console: %d %s", res.StatusCode, res.Header.Get("Location"))
		}
		for path, ctype := range map[string]string{"/console/app.js": "text/javascript", "/console/style.css": "text/css"} {
			if res, _ := get(path); res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), ctype) ||
				res.Header.Get("Content-Security-Policy") == "" {
				t.Errorf("%s: %d %v", path, res.StatusCode, res.Header)
			}
		}
		if res, _ := get("/console/vendor/uPlot.iife.min.js"); (res.StatusCode == 200) != console.ChartsVendored() {
			t.Errorf("uPlot: %d, vendored %v", res.StatusCode, console.ChartsVendored())
		}
		for _, p := range []string{"/console/nope.js", "/console/../go.mod", "/console/vendor/"} {
			if res, _ := get(p); res.StatusCode != http.StatusNotFound && res.StatusCode != http.StatusMovedPermanently {
				t.Errorf("%s: %d", p, res.StatusCode)
			}
		}
	})
}

// bet2 is a bet of another client, whose history row id is returned once
// the read model has it.
func (h *csFixture) bet2(c apitest.Client) string {
	h.t.Helper()
	h.Deposit(c, "q1", "5.00", "EUR")
	b := h.bet(c, "q1", "1.00")
	h.WaitHistory(c.Key, b.position)
	type row struct {
		ID string `json:"id"`
	}
	rows := apitest.Data[[]row](h.t, h.Call(http.MethodGet, "/api/v1/transactions?type=bet", c.Key, ""))
	if len(rows) != 1 {
		h.t.Fatalf("other client's bets: %+v", rows)
	}
	return rows[0].ID
}

// csAdminToken signs the browser test in as admin.
const csAdminToken = "console-test-admin-token-0123456789abcdef"

// csFixture is the server the console reads: the whole API with the admin
// API, the read models fed through Kafka by the relay and the projectors,
// and the delivery worker sending to the operator's webhook receiver,
// which answers 500 while failing is set (so deliveries park) and 200
// otherwise. The demo provider has a game.
type csFixture struct {
	*apitest.Harness
	t        *testing.T
	receiver *httptest.Server
	failing  atomic.Bool
	received atomic.Int64
}

func newConsoleFixture(t *testing.T) *csFixture {
	t.Helper()
	h := &csFixture{t: t}
	h.failing.Store(true)
	h.receiver = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h.received.Add(1)
		if h.failing.Load() {
			http.Error(w, `{"error":"receiver down"}`, http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(h.receiver.Close) // after the server and the delivery worker stopped
	h.Harness = apitest.New(t, apitest.Options{Loopback: true, AdminToken: csAdminToken, AllowPrivateCallbacks: true,
		ReadModels: true, DeliveryWorker: true})
	h.AddProvider("demo", "Pitboss Demo Games", gateway.ProviderKindDemo)
	h.AddGame("demo-slot", "demo", "Demo Slot", "slots", true)
	return h
}

// csBet is a bet placed through the API.
type csBet struct {
	round, txID string
	position    int64
}

// bet launches demo-slot for player and places a bet of amount EUR as the
// demo provider (POST /provider/v1/wallet/bet, signed), closing the round.
func (h *csFixture) bet(c apitest.Client, player, amount string) csBet {
	h.t.Helper()
	l := apitest.Data[apitest.Launch](h.t, h.Call(http.MethodPost, "/api/v1/game/launch", c.Key,
		apitest.LaunchBody("demo", "demo-slot", player, "EUR")))
	b := csBet{round: apitest.UID("round"), txID: apitest.UID("bet")}
	rec := h.WalletCall("demo", apitest.ProviderSecret("demo"), "bet", map[string]any{"session_id": l.SessionID,
		"transaction_id": b.txID, "round_id": b.round, "amount": amount, "round_closed": true})
	if rec.Code != http.StatusOK {
		h.t.Fatalf("bet: %d %s", rec.Code, rec.Body)
	}
	b.position = h.Head()
	return b
}

// webhook subscribes the client to every kind at the receiver.
func (h *csFixture) webhook(c apitest.Client) string {
	h.t.Helper()
	w := apitest.Data[struct {
		ID string `json:"id"`
	}](h.t, h.Call(http.MethodPost, "/api/v1/webhooks", c.Key, map[string]any{
		"url": h.receiver.URL + "/wh", "kinds": []string{"*"}}))
	return w.ID
}

// park enqueues the delivery of the client's last bet event to its
// webhook endpoints (what the forwarder does from Kafka) and waits until
// the worker has parked it against the failing receiver. It returns the
// delivery's id.
func (h *csFixture) park(c apitest.Client) string {
	h.t.Helper()
	ctx := context.Background()
	var o gateway.Outgoing
	var body string
	err := h.Pool.QueryRow(ctx, `
SELECT event_id::text, event_type, stream_id, stream_version, position, occurred_at, body::text FROM events
 WHERE split_part(stream_id, ':', 2) = $1 AND event_type = $2 ORDER BY position DESC LIMIT 1`,
		c.ID, string(domain.EventBetPlaced)).Scan(&o.EventID, &o.EventType, &o.StreamID, &o.StreamVersion, &o.Position,
		&o.OccurredAt, &body)
	if err != nil {
		h.t.Fatalf("find the bet event: %v", err)
	}
	o.ClientID, o.Kind = c.ID, gateway.KindBet
	o.Webhook = []byte(`{"event_id":"` + o.EventID + `","type":"` + o.EventType + `","data":` + body + `}`)
	if n, err := h.Deliveries.Enqueue(ctx, o); err != nil || n != 1 {
		h.t.Fatalf("enqueue: %d deliveries, %v", n, err)
	}
	var id string
	eventually.True(h.t, 30*time.Second, "the delivery to park", func() bool {
		type item struct {
			ID      string `json:"id"`
			EventID string `json:"event_id"`
		}
		for _, d := range apitest.Data[[]item](h.t, h.Get("/api/v1/deliveries?status=parked", c.Key)) {
			if d.EventID == o.EventID {
				id = d.ID
				return true
			}
		}
		return false
	})
	return id
}
