package forwarder_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pitboss/pitboss/adapters/delivery"
	"github.com/pitboss/pitboss/adapters/postgres/deliverystore"
	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/secretbox"
	"github.com/pitboss/pitboss/gateway"
)

// BenchmarkEnqueueAndDeliver measures the Postgres queue and the worker
// without Kafka: b.N callbacks over 100 players are enqueued, then sent by
// one worker (concurrency 32) to a receiver on loopback that answers 200 at
// once. Reported: enqueues/s and deliveries/s.
func BenchmarkEnqueueAndDeliver(b *testing.B) {
	pool, _ := pgtest.NewDatabase(b)
	key := make([]byte, secretbox.KeySize)
	_, _ = rand.Read(key)
	box, _ := secretbox.New(key)
	store, err := deliverystore.NewDeliveries(pool, box)
	if err != nil {
		b.Fatal(err)
	}
	var got atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		got.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	ctx := context.Background()
	if _, err := gatewaystore.NewGateway(pool).CreateClient(ctx, "acme", "acme", "sandbox"); err != nil {
		b.Fatal(err)
	}
	if err := store.SetForwardCallbackURL(ctx, "acme", srv.URL); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()

	start := time.Now()
	var wg sync.WaitGroup
	const enqueuers = 8
	for w := range enqueuers {
		wg.Go(func() {
			for i := w; i < b.N; i += enqueuers {
				id := uuid.NewString()
				_, err := store.Enqueue(ctx, gateway.Outgoing{EventID: id, EventType: "wallet.bet_placed.v1", Kind: gateway.KindBet,
					ClientID: "acme", StreamID: fmt.Sprintf("player:acme:p%d:EUR", i%100), StreamVersion: int64(i + 1),
					Position: int64(i + 1), OccurredAt: time.Now(), Callback: []byte(`{"event_id":"` + id + `"}`), Webhook: []byte(`{}`)})
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	enqueued := time.Since(start)

	worker, err := delivery.NewWorker(store, delivery.NewSender(delivery.SenderConfig{PrivateTargets: gateway.PrivateTargetsAll}),
		delivery.WorkerConfig{PollInterval: 5 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	start = time.Now()
	go func() { done <- worker.Run(wctx) }()
	for worker.Stats().Succeeded.Load() < int64(b.N) {
		time.Sleep(2 * time.Millisecond)
	}
	delivered := time.Since(start)
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/enqueued.Seconds(), "enqueues/s")
	b.ReportMetric(float64(b.N)/delivered.Seconds(), "deliveries/s")
}
