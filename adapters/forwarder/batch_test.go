package forwarder

import (
	"context"
	"crypto/rand"
	"fmt"
	"maps"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/deliverystore"
	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/secretbox"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// countingStore counts the calls on the forwarder's port.
type countingStore struct {
	gateway.DeliveryEnqueuer
	calls, events atomic.Int64
}

func (s *countingStore) EnqueueBatch(ctx context.Context, outs []gateway.Outgoing) (gateway.Enqueued, error) {
	s.calls.Add(1)
	s.events.Add(int64(len(outs)))
	return s.DeliveryEnqueuer.EnqueueBatch(ctx, outs)
}

// fixture is a delivery store on a fresh database whose pool counts round
// trips, behind a counting port, and a forwarder on it (never Run: tests
// call handleBatch).
type fixture struct {
	trips *pgtest.StatementCounter
	pool  *pgxpool.Pool
	store *deliverystore.Deliveries
	port  *countingStore
	fwd   *Forwarder
	gw    *gatewaystore.Gateway
}

func newFixture(t testing.TB, cfg Config) *fixture {
	t.Helper()
	_, dsn := pgtest.NewDatabase(t)
	pcfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	trips := &pgtest.StatementCounter{}
	pcfg.ConnConfig.Tracer = trips
	pool, err := pgxpool.NewWithConfig(context.Background(), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	key := make([]byte, secretbox.KeySize)
	_, _ = rand.Read(key)
	box, _ := secretbox.New(key)
	store, err := deliverystore.NewDeliveries(pool, box)
	if err != nil {
		t.Fatal(err)
	}
	port := &countingStore{DeliveryEnqueuer: store}
	cfg.Brokers = []string{"unused:9092"}
	fwd, err := New(port, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{trips: trips, pool: pool, store: store, port: port, fwd: fwd, gw: gatewaystore.NewGateway(pool)}
}

func (f *fixture) client(t testing.TB, id string) {
	t.Helper()
	if _, err := f.gw.CreateClient(context.Background(), id, id, "sandbox"); err != nil {
		t.Fatal(err)
	}
}

// record is a Kafka record of a bet of client's player, occurred at at.
func record(t testing.TB, client, player string, version int64, at time.Time) *sarama.ConsumerMessage {
	t.Helper()
	e := domain.Event{ID: uuid.NewString(), Type: domain.EventBetPlaced,
		StreamID: domain.AccountID(fmt.Sprintf("player:%s:%s:EUR", client, player)), Version: version, Position: version,
		OccurredAt: at, Data: domain.EventData{ClientID: client, PlayerID: player, Currency: "EUR", Amount: "1.00",
			BalanceAfter: "9.00", ExternalTxID: uuid.NewString(), RoundID: "r1", GameID: "g1", Provider: "p1"}}
	raw, err := domain.EncodeBody(e)
	if err != nil {
		t.Fatal(err)
	}
	return &sarama.ConsumerMessage{Value: raw, Offset: version}
}

// BenchmarkBatchWithoutTargets measures one partition batch (DefaultMaxBatch
// records, 64 clients) whose clients have no forward callback URL and no
// webhook endpoint: ns/op is per batch; also reported, the Postgres round
// trips and statements per batch and the enqueue calls on the port.
func BenchmarkBatchWithoutTargets(b *testing.B) {
	f := newFixture(b, Config{})
	const clients = 64
	for c := range clients {
		f.client(b, fmt.Sprintf("c%d", c))
	}
	batch := make([]*sarama.ConsumerMessage, DefaultMaxBatch)
	now := time.Now()
	for i := range batch {
		batch[i] = record(b, fmt.Sprintf("c%d", i%clients), fmt.Sprintf("p%d", i), int64(i+1), now)
	}
	ctx := context.Background()
	f.trips.Take()
	b.ResetTimer()
	for range b.N {
		if !f.fwd.handleBatch(ctx, batch) {
			b.Fatal("batch not handled")
		}
	}
	b.StopTimer()
	trips, statements := f.trips.Take()
	b.ReportMetric(float64(trips)/float64(b.N), "round-trips/batch")
	b.ReportMetric(float64(statements)/float64(b.N), "statements/batch")
	b.ReportMetric(float64(f.port.calls.Load())/float64(b.N), "enqueues/batch")
}

// handle runs one batch through the forwarder and returns the enqueue
// calls on the port and the round trips it cost.
func (f *fixture) handle(t *testing.T, batch ...*sarama.ConsumerMessage) (calls, trips int64) {
	t.Helper()
	f.trips.Take()
	before := f.port.calls.Load()
	if !f.fwd.handleBatch(t.Context(), batch) {
		t.Fatal("batch not handled")
	}
	trips, _ = f.trips.Take()
	return f.port.calls.Load() - before, trips
}

// deliveries returns the number of deliveries of each event, by target.
func (f *fixture) deliveries(t *testing.T, batch ...*sarama.ConsumerMessage) map[string]int {
	t.Helper()
	ids := make([]string, len(batch))
	for i, m := range batch {
		e, err := domain.DecodeBody(m.Value)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = e.ID
	}
	rows, _ := f.pool.Query(t.Context(), `SELECT event_id::text || '/' || target, count(*) FROM deliveries
		WHERE event_id::text = ANY($1) GROUP BY 1`, ids)
	got := map[string]int{}
	var (
		k string
		n int
	)
	if _, err := pgx.ForEachRow(rows, []any{&k, &n}, func() error { got[k] = n; return nil }); err != nil {
		t.Fatal(err)
	}
	f.trips.Take()
	return got
}

func eventID(t *testing.T, m *sarama.ConsumerMessage) string {
	t.Helper()
	e, err := domain.DecodeBody(m.Value)
	if err != nil {
		t.Fatal(err)
	}
	return e.ID
}

// dbNow is Postgres's clock, the one gateway.Enqueued.AsOf and a webhook
// endpoint's created_at are read on.
func (f *fixture) dbNow(t *testing.T) time.Time {
	t.Helper()
	var now time.Time
	if err := f.pool.QueryRow(t.Context(), `SELECT clock_timestamp()`).Scan(&now); err != nil {
		t.Fatal(err)
	}
	f.trips.Take()
	return now
}

func TestClientWithoutTargetsCostsNoEnqueue(t *testing.T) {
	t.Parallel()
	// given a client without a forward callback URL or a webhook endpoint,
	// and the store's answer about its bets (the first batch asks)
	f := newFixture(t, Config{NoTargetsFor: time.Hour})
	f.client(t, "quiet")
	at := time.Now().Add(-time.Second)
	if calls, _ := f.handle(t, record(t, "quiet", "p1", 1, at), record(t, "quiet", "p2", 1, at)); calls != 1 {
		t.Fatalf("first batch: %d enqueue calls, want 1 (the store is asked once)", calls)
	}
	// when more of its bets come
	batch := make([]*sarama.ConsumerMessage, 50)
	for i := range batch {
		batch[i] = record(t, "quiet", fmt.Sprintf("p%d", i%5), int64(i+2), at)
	}
	calls, trips := f.handle(t, batch...)
	// then they cost no enqueue call and no round trip, and are counted
	if calls != 0 || trips != 0 {
		t.Fatalf("events of a client without targets: %d enqueue calls, %d round trips; want none", calls, trips)
	}
	if st := f.fwd.Stats(); st.Untargeted != 50 || st.Events != 2 {
		t.Fatalf("stats %+v, want 50 untargeted after 2 events", st)
	}
}

func TestTargetRegisteredReceivesEventsFromTheBound(t *testing.T) {
	t.Parallel()
	// given two clients without targets the forwarder was told so about
	const bound = time.Hour
	f := newFixture(t, Config{NoTargetsFor: bound})
	f.client(t, "late")
	f.client(t, "hooked")
	at := time.Now().Add(-time.Second)
	if calls, _ := f.handle(t, record(t, "late", "p", 1, at), record(t, "hooked", "p", 1, at)); calls != 1 {
		t.Fatalf("first batch: %d enqueue calls, want 1", calls)
	}
	// when one registers a forward callback URL, the other a webhook
	// endpoint for bets, at T
	if err := f.store.SetForwardCallbackURL(t.Context(), "late", "https://late.example/cb"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.store.CreateWebhook(t.Context(), gateway.WebhookEndpoint{ClientID: "hooked",
		URL: "https://hooked.example/wh", Kinds: []string{gateway.KindBet}, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	registered := f.dbNow(t)
	// then events that occur from T+bound on are enqueued and delivered
	lateAfter, hookedAfter := record(t, "late", "p", 2, registered.Add(bound)), record(t, "hooked", "p", 2, registered.Add(bound))
	if calls, _ := f.handle(t, lateAfter, hookedAfter); calls != 1 {
		t.Fatalf("events after the bound: %d enqueue calls, want 1", calls)
	}
	got := f.deliveries(t, lateAfter, hookedAfter)
	want := map[string]int{eventID(t, lateAfter) + "/callback": 1, eventID(t, hookedAfter) + "/webhook": 1}
	if !maps.Equal(got, want) {
		t.Fatalf("deliveries %v, want %v", got, want)
	}
	// and from then on every event of theirs is (the store said they have
	// targets), even one that occurred inside the window
	inside := record(t, "late", "p", 3, at)
	if calls, _ := f.handle(t, inside); calls != 1 {
		t.Fatalf("an event of a client known to have a target: %d enqueue calls, want 1", calls)
	}
	if got := f.deliveries(t, inside); got[eventID(t, inside)+"/callback"] != 1 {
		t.Fatalf("deliveries of an event inside the window, once the target is known: %v", got)
	}
}

func TestMixedBatchIsOneRoundTripAndSkipsOnlyClientsWithoutTargets(t *testing.T) {
	t.Parallel()
	// given a client with a callback URL, one with a webhook endpoint for
	// bets, one with a webhook endpoint for wins only, and one with none
	f := newFixture(t, Config{NoTargetsFor: time.Hour})
	for _, c := range []string{"cb", "hook", "winonly", "none"} {
		f.client(t, c)
	}
	if err := f.store.SetForwardCallbackURL(t.Context(), "cb", "https://cb.example/cb"); err != nil {
		t.Fatal(err)
	}
	for c, kind := range map[string]string{"hook": gateway.KindBet, "winonly": gateway.KindWin} {
		if _, _, err := f.store.CreateWebhook(t.Context(), gateway.WebhookEndpoint{ClientID: c,
			URL: "https://" + c + ".example/wh", Kinds: []string{kind}, Enabled: true}); err != nil {
			t.Fatal(err)
		}
	}
	at := f.dbNow(t)
	mixed := func(version int64) []*sarama.ConsumerMessage {
		var batch []*sarama.ConsumerMessage
		for _, p := range []string{"p1", "p2"} {
			for _, c := range []string{"cb", "hook", "winonly", "none"} {
				batch = append(batch, record(t, c, p, version, at))
			}
		}
		return batch
	}
	// when a batch of bets of all four comes
	first := mixed(1)
	calls, trips := f.handle(t, first...)
	// then it is one enqueue call and one round trip, with the deliveries
	// of the first two clients only
	if calls != 1 || trips != 1 {
		t.Fatalf("mixed batch: %d enqueue calls, %d round trips; want 1 and 1", calls, trips)
	}
	want := map[string]int{}
	for _, m := range first {
		e, _ := domain.DecodeBody(m.Value)
		switch e.Data.ClientID {
		case "cb":
			want[e.ID+"/callback"] = 1
		case "hook":
			want[e.ID+"/webhook"] = 1
		}
	}
	if got := f.deliveries(t, first...); !maps.Equal(got, want) {
		t.Fatalf("deliveries %v, want %v", got, want)
	}
	// and the next batch sends only the events of the first two clients,
	// again in one round trip
	events := f.port.events.Load()
	second := mixed(2)
	if calls, trips := f.handle(t, second...); calls != 1 || trips != 1 {
		t.Fatalf("second batch: %d enqueue calls, %d round trips; want 1 and 1", calls, trips)
	}
	if sent := f.port.events.Load() - events; sent != 4 {
		t.Fatalf("second batch: %d events sent to the store, want 4 (cb's and hook's)", sent)
	}
	if got := f.deliveries(t, second...); len(got) != 4 {
		t.Fatalf("second batch: deliveries %v, want 4", got)
	}
}

// BenchmarkMixedBatch measures one partition batch (DefaultMaxBatch bets of
// new events, 64 clients): 16 clients with a forward callback URL, 16 with
// a webhook endpoint for bets, 32 with no target. ns/op is per batch; also
// reported, the round trips and statements per batch and the deliveries
// added per batch.
func BenchmarkMixedBatch(b *testing.B) {
	f := newFixture(b, Config{})
	ctx := context.Background()
	const clients = 64
	for c := range clients {
		id := fmt.Sprintf("c%d", c)
		f.client(b, id)
		switch {
		case c < 16:
			if err := f.store.SetForwardCallbackURL(ctx, id, "https://"+id+".example/cb"); err != nil {
				b.Fatal(err)
			}
		case c < 32:
			if _, _, err := f.store.CreateWebhook(ctx, gateway.WebhookEndpoint{ClientID: id,
				URL: "https://" + id + ".example/wh", Kinds: []string{gateway.KindBet}, Enabled: true}); err != nil {
				b.Fatal(err)
			}
		}
	}
	at := time.Now().Add(time.Second) // after the endpoints' creation
	batches := make([][]*sarama.ConsumerMessage, b.N)
	for n := range batches {
		batches[n] = make([]*sarama.ConsumerMessage, DefaultMaxBatch)
		for i := range batches[n] {
			batches[n][i] = record(b, fmt.Sprintf("c%d", i%clients), fmt.Sprintf("p%d", i), int64(n*DefaultMaxBatch+i+1), at)
		}
	}
	f.trips.Take()
	b.ResetTimer()
	for n := range b.N {
		if !f.fwd.handleBatch(ctx, batches[n]) {
			b.Fatal("batch not handled")
		}
	}
	b.StopTimer()
	trips, statements := f.trips.Take()
	b.ReportMetric(float64(trips)/float64(b.N), "round-trips/batch")
	b.ReportMetric(float64(statements)/float64(b.N), "statements/batch")
	b.ReportMetric(float64(f.fwd.Stats().Enqueued)/float64(b.N), "deliveries/batch")
}
