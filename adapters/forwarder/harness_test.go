package forwarder_test

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/delivery"
	"github.com/pitboss/pitboss/adapters/forwarder"
	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/adapters/kafka/kafkatest"
	"github.com/pitboss/pitboss/adapters/postgres/deliverystore"
	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/relay"
	"github.com/pitboss/pitboss/adapters/secretbox"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/schemas"
)

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

type uuids struct{}

func (uuids) NewID() string { return uuid.Must(uuid.NewV7()).String() }

// harness is the whole outbound path on real parts: commands -> ledger
// (Postgres) -> relay -> Kafka topic -> forwarder (consumer group) ->
// deliveries (Postgres) -> worker -> HTTP receivers on loopback.
type harness struct {
	ctx    context.Context
	pool   *pgxpool.Pool
	store  *deliverystore.Deliveries
	h      *commands.Handler
	worker *delivery.Worker
}

type harnessConfig struct {
	schedule delivery.Schedule
	timeout  time.Duration
	private  gateway.PrivateTargets
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

func startHarness(t *testing.T, cfg harnessConfig) *harness {
	t.Helper()
	log := testLogger(t)
	pool, _ := pgtest.NewDatabase(t)
	brokers := kafkatest.Brokers(t)
	topic := kafkatest.NewTopic(t, brokers, 3)
	key := make([]byte, secretbox.KeySize)
	_, _ = rand.Read(key)
	box, err := secretbox.New(key)
	if err != nil {
		t.Fatal(err)
	}
	store, err := deliverystore.NewDeliveries(pool, box)
	if err != nil {
		t.Fatal(err)
	}
	ledger, err := eventstore.NewLedger(pool, eventstore.LedgerConfig{}, log)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := kafka.NewBatchPublisher(brokers, log)
	if err != nil {
		t.Fatal(err)
	}
	rl, err := relay.New(pool, pub, relay.Config{Topic: topic, PollInterval: 10 * time.Millisecond}, log)
	if err != nil {
		t.Fatal(err)
	}
	fwd, err := forwarder.New(store, forwarder.Config{Brokers: brokers, Topic: topic,
		Group: "pitboss-test-forwarder-" + uuid.NewString()[:8], Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	sender := delivery.NewSender(delivery.SenderConfig{Timeout: cfg.timeout, PrivateTargets: cfg.private})
	worker, err := delivery.NewWorker(store, sender, delivery.WorkerConfig{PollInterval: 10 * time.Millisecond,
		Schedule: cfg.schedule, Logger: log})
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for name, run := range map[string]func(context.Context) error{
		"ledger": ledger.Run, "relay": rl.Run, "forwarder": fwd.Run, "worker": worker.Run,
	} {
		wg.Go(func() {
			if err := run(ctx); err != nil && ctx.Err() == nil {
				t.Errorf("%s: %v", name, err)
			}
		})
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		_ = pub.Close()
	})
	return &harness{ctx: t.Context(), pool: pool, store: store, h: commands.NewHandler(ledger, wallClock{}, uuids{}),
		worker: worker}
}

// client creates a sandbox client whose forwarded callbacks go to url and
// returns the callback signing secret.
func (h *harness) client(t *testing.T, id, url string) string {
	t.Helper()
	return h.clientIn(t, id, gateway.EnvironmentSandbox, url)
}

// clientIn is client in environment env.
func (h *harness) clientIn(t *testing.T, id, env, url string) string {
	t.Helper()
	if _, err := gatewaystore.NewGateway(h.pool).CreateClient(h.ctx, id, id, env); err != nil {
		t.Fatal(err)
	}
	if err := h.store.SetForwardCallbackURL(h.ctx, id, url); err != nil {
		t.Fatal(err)
	}
	secret, err := h.store.RotateCallbackSecret(h.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

var eur = domain.MustCurrency("EUR")

func (h *harness) money(t *testing.T, s string) domain.Money {
	t.Helper()
	m, err := domain.ParseMoney(s, eur)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (h *harness) deposit(t *testing.T, client, player, tx, amount string) {
	t.Helper()
	if _, err := h.h.Deposit(h.ctx, domain.ClientTx{Client: client, Player: player, ExternalTxID: tx, Currency: eur},
		h.money(t, amount)); err != nil {
		t.Fatal(err)
	}
}

func game(client, player, tx, round string) domain.GameTx {
	return domain.GameTx{Client: client, Player: player, Provider: "demo", Game: "book-of-tests", Round: round,
		ExternalTxID: tx, Currency: eur}
}

func (h *harness) bet(t *testing.T, client, player, tx, round, amount string) commands.Result {
	t.Helper()
	r, err := h.h.PlaceBet(h.ctx, game(client, player, tx, round), h.money(t, amount))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (h *harness) win(t *testing.T, client, player, tx, round, amount, betRef string) commands.Result {
	t.Helper()
	r, err := h.h.CreditWin(h.ctx, game(client, player, tx, round), h.money(t, amount), betRef)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (h *harness) rollback(t *testing.T, client, player, tx, round, ref string) commands.Result {
	t.Helper()
	r, err := h.h.Rollback(h.ctx, game(client, player, tx, round), ref)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// request is one request a receiver got.
type request struct {
	at     time.Time
	header http.Header
	body   []byte
	status int
}

func (r request) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(string(r.body)))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("body %s: %v", r.body, err)
	}
	return m
}

// raw returns the JSON text of a top-level field exactly as sent, so a test
// sees "10.00" and not a float.
func (r request) raw(t *testing.T, field string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body %s: %v", r.body, err)
	}
	return string(m[field])
}

// receiverServer is an operator's callback endpoint: a real HTTP server
// on loopback. answer picks the status of each request (n counts from 1).
type receiverServer struct {
	*httptest.Server
	mu     sync.Mutex
	got    []request
	answer func(n int, r request) (status int, delay time.Duration)
}

func newReceiver(t *testing.T, answer func(n int, r request) (int, time.Duration)) *receiverServer {
	t.Helper()
	rs := &receiverServer{answer: answer}
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := request{at: time.Now(), header: r.Header.Clone(), body: body}
		rs.mu.Lock()
		n := len(rs.got) + 1
		status, delay := rs.answer(n, req)
		req.status = status
		rs.got = append(rs.got, req)
		rs.mu.Unlock()
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"status":"` + strconv.Itoa(status) + `"}`))
	}))
	t.Cleanup(rs.Close)
	return rs
}

func (rs *receiverServer) requests() []request {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return append([]request(nil), rs.got...)
}

// succeeded returns the requests answered 2xx, in arrival order.
func (rs *receiverServer) succeeded() []request {
	var out []request
	for _, r := range rs.requests() {
		if r.status >= 200 && r.status < 300 {
			out = append(out, r)
		}
	}
	return out
}

// verifySignature checks X-Pitboss-Signature by hand, as a receiver would:
// HMAC-SHA256 over "<t>.<raw body>" keyed with the secret, and t recent.
func verifySignature(t *testing.T, r request, secret string) {
	t.Helper()
	h := r.header.Get("X-Pitboss-Signature")
	ts, sig, ok := strings.Cut(h, ",")
	if !ok || !strings.HasPrefix(ts, "t=") || !strings.HasPrefix(sig, "v1=") {
		t.Fatalf("signature header %q", h)
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts[2:] + "." + string(r.body)))
	if want := hex.EncodeToString(m.Sum(nil)); !hmac.Equal([]byte(want), []byte(sig[3:])) {
		t.Fatalf("signature %s does not verify over %s", sig, r.body)
	}
	sec, err := strconv.ParseInt(ts[2:], 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)).Abs() > time.Minute {
		t.Fatalf("signature time %s is not now", ts)
	}
}

// fast is a schedule that retries within milliseconds.
func fast(maxAttempts int) delivery.Schedule {
	return delivery.Schedule{Base: 5 * time.Millisecond, Factor: 2, Cap: 40 * time.Millisecond, MaxAttempts: maxAttempts,
		MaxAge: time.Hour}
}

func clientCall(client, player, tx string) domain.ClientTx {
	return domain.ClientTx{Client: client, Player: player, ExternalTxID: tx, Currency: eur}
}

var compiledSchemas = sync.OnceValues(schemas.Compile)

// conforms checks body against a published JSON Schema (schemas/).
func conforms(t *testing.T, schema string, body []byte) {
	t.Helper()
	set, err := compiledSchemas()
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Validate(schema, body); err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
}
