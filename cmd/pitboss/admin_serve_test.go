package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/adapters/kafka/kafkatest"
	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/internal/eventually"
)

// Component tests of `pitboss serve`: the whole service on real Postgres
// and Kafka, reached over TCP.

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// freeAddr finds a loopback port nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// testConfig is the configuration of the environment, pointed at a fresh
// database, a free port and a data folder of the test's own.
func testConfig(t *testing.T) (config, *pgxpool.Pool) {
	t.Helper()
	cfg, err := loadConfig()
	if err != nil {
		t.Fatalf("configuration: %v", err)
	}
	pool, dsn := pgtest.NewDatabase(t)
	cfg.DatabaseURL = dsn
	cfg.KafkaBrokers = kafkatest.Brokers(t)
	cfg.HTTPAddr = freeAddr(t)
	cfg.PublicURL = "http://" + cfg.HTTPAddr
	cfg.DataDir = t.TempDir()
	cfg.LogLevel = slog.LevelWarn
	cfg.ShutdownTimeout = 30 * time.Second
	cfg.AdaptiveProcs = false // the test process's Ps are its tests'
	cfg.Admin.Token = "test-admin-token-" + randomHex(16)
	return cfg, pool
}

// running is a serve call in the background.
type running struct {
	cancel context.CancelFunc
	done   chan error
	base   string
}

func startServe(t *testing.T, cfg config, roles string) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan error, 1), base: "http://" + cfg.HTTPAddr}
	go func() { r.done <- serve(ctx, cfg, []string{"--roles", roles}) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(60 * time.Second):
			t.Error("serve did not stop within 60 s")
		}
	})
	eventually.NoError(t, 60*time.Second, "serve to answer /healthz", func() error {
		resp, err := http.Get(r.base + "/healthz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		select {
		case err := <-r.done:
			t.Fatalf("serve stopped before answering: %v", err)
		default:
		}
		return err
	})
	return r
}

// stop cancels serve and waits for it to return.
func (r *running) stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		r.done <- err // for the cleanup
		return err
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not stop within 60 s")
		return nil
	}
}

// newKey makes a sandbox client with a key of every scope.
func newKey(t *testing.T, pool *pgxpool.Pool) (clientID, key string) {
	t.Helper()
	gw := gatewaystore.NewGateway(pool)
	clientID = "client-" + randomHex(4)
	if _, _, err := gw.AddClient(t.Context(), gateway.Client{ID: clientID, Name: "C", Environment: "sandbox", Plan: "standard"}); err != nil {
		t.Fatal(err)
	}
	k, err := gw.IssueAPIKey(t.Context(), gateway.KeySpec{ClientID: clientID, Scopes: gateway.AllScopes})
	if err != nil {
		t.Fatal(err)
	}
	return clientID, k.Secret
}

func depositBody(txID, player string) string {
	return fmt.Sprintf(`{"type":"deposit","transaction_id":%q,"player_id":%q,"amount":"12.50","currency":"EUR"}`, txID, player)
}

// TestServeGracefulShutdown: a request still in flight when shutdown
// starts (its body half sent) is answered and committed; the server takes
// no new connection meanwhile; the usage it made is flushed on the way out.
func TestServeGracefulShutdown(t *testing.T) {
	t.Parallel()
	cfg, pool := testConfig(t)
	srv := startServe(t, cfg, "api")
	clientID, key := newKey(t, pool)

	body := depositBody("slow-deposit", "p1")
	conn, err := net.Dial("tcp", cfg.HTTPAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(90 * time.Second))
	// Expect: 100-continue makes the server say when the handler first
	// reads the body: from then on the request is in flight, the handler
	// waiting for the rest of the body.
	head := "POST /api/v1/transactions HTTP/1.1\r\nHost: " + cfg.HTTPAddr + "\r\nAuthorization: Bearer " + key +
		"\r\nContent-Type: application/json\r\nX-Request-Id: slow-1\r\nExpect: 100-continue\r\nContent-Length: " +
		fmt.Sprint(len(body)) + "\r\n\r\n"
	half := len(body) / 2
	if _, err := io.WriteString(conn, head+body[:half]); err != nil {
		t.Fatal(err)
	}
	answers := bufio.NewReader(conn)
	if resp, err := http.ReadResponse(answers, nil); err != nil || resp.StatusCode != http.StatusContinue {
		t.Fatalf("want 100 Continue once the handler reads the body: %v %v", resp, err)
	}

	stopped := make(chan error, 1)
	go func() { stopped <- srv.stop(t) }()
	// Shutdown has begun once the listener refuses new connections.
	eventually.True(t, 30*time.Second, "the listener to refuse connections after shutdown began", func() bool {
		c, err := net.DialTimeout("tcp", cfg.HTTPAddr, time.Second)
		if err != nil {
			return true
		}
		_ = c.Close()
		return false
	})
	select {
	case err := <-stopped:
		t.Fatalf("serve returned (%v) while a request was in flight", err)
	default:
	}

	if _, err := io.WriteString(conn, body[half:]); err != nil {
		t.Fatalf("finish the body: %v", err)
	}
	resp, err := http.ReadResponse(answers, nil)
	if err != nil {
		t.Fatalf("read the answer: %v", err)
	}
	answer, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Request-Id") != "slow-1" {
		t.Fatalf("in-flight request answered %d: %s", resp.StatusCode, answer)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("serve: %v", err)
	}

	// The deposit is committed and the request's usage was flushed on stop.
	eur, err := domain.ParseCurrency("EUR")
	if err != nil {
		t.Fatal(err)
	}
	var balance int64
	if err := pool.QueryRow(t.Context(), `SELECT balance FROM accounts WHERE account_id = $1`,
		string(domain.PlayerWallet(clientID, "p1", eur))).Scan(&balance); err != nil || balance != 1250 {
		t.Fatalf("player balance %d (%v), want 1250", balance, err)
	}
	var requests int64
	if err := pool.QueryRow(t.Context(), `SELECT COALESCE(sum(requests), 0) FROM api_usage WHERE client_id = $1`,
		clientID).Scan(&requests); err != nil || requests != 1 {
		t.Fatalf("usage rows sum to %d (%v), want the 1 request flushed at shutdown", requests, err)
	}
}

// TestServeRequestIDReachesKafka: the X-Request-Id of an HTTP request is
// in the event's metadata in the store and in the request_id header of the
// Kafka record the relay publishes; /readyz checks both Postgres and Kafka;
// /metrics shows the relay caught up.
func TestServeRequestIDReachesKafka(t *testing.T) {
	t.Parallel()
	cfg, pool := testConfig(t)
	cfg.Topic = kafkatest.NewTopic(t, cfg.KafkaBrokers, 1)
	srv := startServe(t, cfg, "api,relay")
	_, key := newKey(t, pool)
	rid := "rid-e2e-" + randomHex(6)

	req, err := http.NewRequest(http.MethodPost, srv.base+"/api/v1/transactions", strings.NewReader(depositBody("dep-rid", "p1")))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", rid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("deposit %d: %s", resp.StatusCode, answer)
	}

	var body []byte
	if err := pool.QueryRow(t.Context(), `SELECT body::text FROM events ORDER BY position DESC LIMIT 1`).Scan(&body); err != nil {
		t.Fatal(err)
	}
	ev, err := domain.DecodeBody(body)
	if err != nil || ev.Meta.RequestID != rid {
		t.Fatalf("event meta %+v (%v), want request id %s", ev.Meta, err, rid)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	recs, err := kafkatest.ReadUntil(ctx, cfg.KafkaBrokers, cfg.Topic, func(rs []kafkatest.Record) bool {
		for _, r := range rs {
			if r.Headers[kafka.HeaderRequestID] == rid {
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("read %s: %v (read %d records)", cfg.Topic, err, len(recs))
	}
	for _, r := range recs {
		if r.Headers[kafka.HeaderRequestID] != rid {
			continue
		}
		kev, err := domain.DecodeBody(r.Value)
		if err != nil || kev.Meta.RequestID != rid || r.Headers[kafka.HeaderEventID] != ev.ID {
			t.Fatalf("kafka record %+v: body meta %+v (%v)", r.Headers, kev.Meta, err)
		}
	}

	t.Run("readyz checks postgres and kafka", func(t *testing.T) {
		resp, err := http.Get(srv.base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got struct {
			Status string                       `json:"status"`
			Checks map[string]struct{ OK bool } `json:"checks"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || !got.Checks["postgres"].OK || !got.Checks["kafka"].OK {
			t.Fatalf("readyz %d %+v", resp.StatusCode, got)
		}
	})
	t.Run("metrics show the relay caught up", func(t *testing.T) {
		eventually.NoError(t, 60*time.Second, "the relay series to catch up", func() error {
			resp, err := http.Get(srv.base + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			text, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			s := string(text)
			if strings.Contains(s, "\npitboss_relay_lag_events{relay=\"kafka\"} 0\n") && strings.Contains(s, "\npitboss_relay_leader 1\n") &&
				strings.Contains(s, "\npitboss_relay_published_events_total 1\n") {
				return nil
			}
			return fmt.Errorf("relay series:\n%s", grepPitboss(s, "relay"))
		})
	})
	if err := srv.stop(t); err != nil {
		t.Fatalf("serve: %v", err)
	}
}

func grepPitboss(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "pitboss_") && strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestKafkaReady: the readiness probe answers for the real broker and
// fails within its deadline for an address nothing listens on.
func TestKafkaReady(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := kafkaReady(ctx, kafkatest.Brokers(t)); err != nil {
		t.Fatalf("real broker: %v", err)
	}
	ctx, cancel = context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	start := time.Now()
	err := kafkaReady(ctx, []string{freeAddr(t)})
	if err == nil {
		t.Fatal("a broker address nothing listens on was ready")
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("the failing probe took %s", took)
	}
}
