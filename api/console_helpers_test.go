package api_test

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/delivery"
	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/adapters/postgres/deliverystore"
	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/postgres/readstore"
	"github.com/pitboss/pitboss/adapters/providers"
	"github.com/pitboss/pitboss/adapters/secretbox"
	"github.com/pitboss/pitboss/adapters/system"
	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/internal/eventually"
	"github.com/pitboss/pitboss/projections"
)

// Helpers of the console tests ("cs" prefix). The console harness is the
// catalog harness's server (real Postgres, the ledger writer, the relay to
// a fresh Kafka topic and the projectors, so the read models fill) plus
// what the console reads: deliveries with a running delivery worker that
// gives up after one attempt, the audit log, the console's own stores and
// the admin API.

const csAdminToken = "console-test-admin-token-0123456789abcdef"

type csHarness struct {
	*ctHarness
	deliveries *deliverystore.Deliveries
	audit      *auditstore.Audit
	// receiver is the operator's webhook receiver: 500 while failing is
	// set (so deliveries park), else 200.
	receiver *httptest.Server
	failing  atomic.Bool
	received atomic.Int64
}

func newConsoleHarness(t *testing.T) *csHarness {
	t.Helper()
	pool, _ := pgtest.NewDatabase(t)
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, cancel := context.WithCancel(context.Background())
	var runners []func(context.Context) error
	ledger, err := eventstore.NewLedger(pool, eventstore.LedgerConfig{}, logger)
	if err != nil {
		t.Fatal(err)
	}
	runners = append(runners, ledger.Run)
	key := make([]byte, secretbox.KeySize)
	_, _ = rand.Read(key)
	box, err := secretbox.New(key)
	if err != nil {
		t.Fatal(err)
	}
	deliveries, err := deliverystore.NewDeliveries(pool, box)
	if err != nil {
		t.Fatal(err)
	}
	launchClients, err := gatewaystore.NewLaunchClients(pool, box)
	if err != nil {
		t.Fatal(err)
	}
	worker, err := delivery.NewWorker(deliveries, delivery.NewSender(delivery.SenderConfig{Timeout: 10 * time.Second, AllowPrivate: true}),
		delivery.WorkerConfig{PollInterval: 50 * time.Millisecond, Logger: logger,
			Schedule: delivery.Schedule{Base: time.Second, Cap: time.Minute, MaxAttempts: 1, MaxAge: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	runners = append(runners, worker.Run)
	h := &csHarness{deliveries: deliveries, audit: auditstore.NewAudit(pool)}
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

	ts := httptest.NewUnstartedServer(nil)
	base := "http://" + ts.Listener.Addr().String()
	reg, err := providers.NewRegistryWithConfig(providers.Config{PublicURL: base, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	gw := gatewaystore.NewGateway(pool).WithSecretBox(box)
	rm := readstore.NewReadModels(pool)
	startReadModels(t, ctx, pool, rm, logger)
	srv := api.NewServer(api.Config{PublicURL: base, SessionTTL: time.Hour, DefaultEnvironment: "sandbox",
		AllowPrivateCallbacks: true, AdminToken: csAdminToken}, api.Deps{
		Admin:    api.AdminDeps{Clients: gw, Launch: launchClients, Callbacks: deliveries},
		Commands: commands.NewHandler(ledger, system.Clock{}, system.IDs{}),
		Balances: eventstore.NewAccounts(pool), Wallets: gw, Keys: gw, Catalog: gw, Sessions: gw,
		Games: gw, Launcher: reg, Clock: system.Clock{}, IDs: system.IDs{}, Logger: logger,
		Deliveries: deliveries, Webhooks: deliveries, LaunchClients: launchClients,
		Queries: &projections.Queries{Transactions: rm, Reports: rm, Positions: rm, Ledger: eventstore.NewAccounts(pool)},
		Audit:   h.audit,
		Console: api.ConsoleDeps{Lag: gatewaystore.NewLag(pool), Verifications: h.audit,
			Details: auditstore.NewConsole(pool)},
	})
	ts.Config.Handler = srv.Handler()
	ts.Start()
	done := make(chan error, len(runners))
	for _, run := range runners {
		go func() { done <- run(ctx) }()
	}
	t.Cleanup(func() {
		ts.Close()
		h.receiver.Close()
		cancel()
		for range runners {
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("runner: %v", err)
			}
		}
	})
	h.ctHarness = &ctHarness{t: t, pool: pool, gw: gw, accounts: eventstore.NewAccounts(pool), base: base,
		http: &http.Client{Timeout: 30 * time.Second}}
	h.addProvider("demo", "Pitboss Demo Games", gateway.ProviderKindDemo)
	h.addGame("demo-slot", "demo", "Demo Slot", "slots", true)
	return h
}

// csSign is the provider wallet's X-Signature of body.
func csSign(body string) string {
	m := hmac.New(sha256.New, []byte("secret-of-demo"))
	m.Write([]byte(body))
	return hex.EncodeToString(m.Sum(nil))
}

// csBet is a bet placed through the API.
type csBet struct {
	round, txID string
	position    int64
}

// bet launches demo-slot for player and places a bet of amount EUR as the
// demo provider (POST /provider/v1/wallet/bet, signed), closing the round.
func (h *csHarness) bet(c ctClient, player, amount string) csBet {
	h.t.Helper()
	l := ctOK[ctLaunch](h.t, h.do(http.MethodPost, "/api/v1/game/launch", c.key, launchBody("demo", "demo-slot", player, "EUR")))
	b := csBet{round: ctUID("round"), txID: ctUID("bet")}
	body := ctJSON(h.t, map[string]any{"session_id": l.SessionID, "transaction_id": b.txID, "round_id": b.round,
		"amount": amount, "round_closed": true})
	req, err := http.NewRequest(http.MethodPost, h.base+"/provider/v1/wallet/bet", stringsReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Provider-Id", "demo")
	req.Header.Set("X-Signature", csSign(body))
	res, err := h.http.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	out, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		h.t.Fatalf("bet: %d %s", res.StatusCode, out)
	}
	if err := h.pool.QueryRow(context.Background(), `SELECT max(position) FROM events`).Scan(&b.position); err != nil {
		h.t.Fatal(err)
	}
	return b
}

// webhook subscribes the client to every kind at the receiver.
func (h *csHarness) webhook(c ctClient) string {
	h.t.Helper()
	w := ctOK[struct {
		ID string `json:"id"`
	}](h.t, h.do(http.MethodPost, "/api/v1/webhooks", c.key, ctJSON(h.t, map[string]any{
		"url": h.receiver.URL + "/wh", "kinds": []string{"*"}})))
	return w.ID
}

// park enqueues the delivery of the client's last bet event to its
// webhook endpoints (what the forwarder does from Kafka) and waits until
// the worker has parked it against the failing receiver. It returns the
// delivery's id.
func (h *csHarness) park(c ctClient) string {
	h.t.Helper()
	ctx := context.Background()
	var o gateway.Outgoing
	var body string
	err := h.pool.QueryRow(ctx, `
SELECT event_id::text, event_type, stream_id, stream_version, position, occurred_at, body::text FROM events
 WHERE split_part(stream_id, ':', 2) = $1 AND event_type = $2 ORDER BY position DESC LIMIT 1`,
		c.id, string(domain.EventBetPlaced)).Scan(&o.EventID, &o.EventType, &o.StreamID, &o.StreamVersion, &o.Position,
		&o.OccurredAt, &body)
	if err != nil {
		h.t.Fatalf("find the bet event: %v", err)
	}
	o.ClientID, o.Kind = c.id, gateway.KindBet
	o.Webhook = []byte(`{"event_id":"` + o.EventID + `","type":"` + o.EventType + `","data":` + body + `}`)
	if n, err := h.deliveries.Enqueue(ctx, o); err != nil || n != 1 {
		h.t.Fatalf("enqueue: %d deliveries, %v", n, err)
	}
	var id string
	eventually.True(h.t, 30*time.Second, "the delivery to park", func() bool {
		type item struct {
			ID      string `json:"id"`
			EventID string `json:"event_id"`
		}
		for _, d := range ctOK[[]item](h.t, h.do(http.MethodGet, "/api/v1/deliveries?status=parked", c.key, "")) {
			if d.EventID == o.EventID {
				id = d.ID
				return true
			}
		}
		return false
	})
	return id
}

// waitHistory waits until the history read model has reached position.
func (h *csHarness) waitHistory(c ctClient, position int64) {
	h.t.Helper()
	r := h.do(http.MethodGet, "/api/v1/transactions?per_page=1&min_position="+itoa(position), c.key, "")
	for i := 0; i < 20 && r.status == http.StatusServiceUnavailable; i++ {
		r = h.do(http.MethodGet, "/api/v1/transactions?per_page=1&min_position="+itoa(position), c.key, "")
	}
	if r.status != http.StatusOK {
		h.t.Fatalf("history did not reach position %d: %s", position, r)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func stringsReader(s string) io.Reader { return strings.NewReader(s) }
