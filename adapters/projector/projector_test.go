package projector_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/adapters/kafka/kafkatest"
	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/postgres/readstore"
	"github.com/pitboss/pitboss/adapters/projector"
	"github.com/pitboss/pitboss/adapters/projector/projectortest"
	"github.com/pitboss/pitboss/adapters/relay"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/internal/eventually"
	"github.com/pitboss/pitboss/projections"
)

func testLogger(t testing.TB) *slog.Logger {
	level := slog.LevelError
	if os.Getenv("PITBOSS_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: level}))
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// rig is the whole write path on real Postgres and Kafka: the ledger
// writer behind the command handler, and the relay publishing the event
// store to a topic of the test's own.
type rig struct {
	pool    *pgxpool.Pool
	url     string
	brokers []string
	topic   string
	store   *readstore.ReadModels
	h       *commands.Handler
	clock   *projectortest.Clock
}

func newRig(t *testing.T) *rig {
	t.Helper()
	return newRigOf(t, 3)
}

// newRigOf is a rig whose topic has the given number of partitions.
func newRigOf(t *testing.T, partitions int32) *rig {
	t.Helper()
	pool, url := pgtest.NewDatabase(t)
	brokers := kafkatest.Brokers(t)
	topic := kafkatest.NewTopic(t, brokers, partitions)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dlq := projector.DeadLetterTopic(topic)
	if err := kafka.EnsureTopic(ctx, brokers, dlq, 1, 1); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = kafka.DeleteTopic(ctx, brokers, dlq)
	})
	ledger, err := eventstore.NewLedger(pool, eventstore.LedgerConfig{}, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	background(t, ledger.Run)
	pub, err := kafka.NewBatchPublisher(brokers, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pub.Close() })
	rl, err := relay.New(pool, pub, relay.Config{Topic: topic, PollInterval: 20 * time.Millisecond}, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	background(t, rl.Run)
	clock := &projectortest.Clock{}
	return &rig{pool: pool, url: url, brokers: brokers, topic: topic, store: readstore.NewReadModels(pool),
		h: commands.NewHandler(ledger, clock, projectortest.IDs{}), clock: clock}
}

// background runs f until the test ends.
func background(t *testing.T, f func(context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("background run: %v", err)
		}
	})
}

// worker is a projector started by start.
type worker struct {
	*projector.Worker
	stop func()
}

func (r *rig) start(t *testing.T, store projector.Store, n projections.Name, group string, tweak func(*projector.Config)) *worker {
	t.Helper()
	cfg := projector.Config{Brokers: r.brokers, Topic: r.topic, Projection: n, ConsumerGroup: group,
		RetryBackoff: 10 * time.Millisecond, MaxRetryBackoff: 200 * time.Millisecond, WatermarkInterval: 5 * time.Millisecond}
	if tweak != nil {
		tweak(&cfg)
	}
	w, err := projector.New(store, cfg, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("worker %s: %v", n, err)
				}
			case <-time.After(30 * time.Second):
				t.Errorf("worker %s did not stop within 30s", n)
			}
		})
	}
	t.Cleanup(stop)
	return &worker{Worker: w, stop: stop}
}

// startBoth starts a worker per projection in fresh consumer groups.
func (r *rig) startBoth(t *testing.T, store projector.Store, suffix string, tweak func(*projector.Config)) []*worker {
	var ws []*worker
	for _, n := range projections.All {
		ws = append(ws, r.start(t, store, n, n.ConsumerGroup()+"-"+suffix, tweak))
	}
	return ws
}

func (r *rig) head(t *testing.T) int64 {
	t.Helper()
	var head int64
	if err := r.pool.QueryRow(context.Background(), `SELECT coalesce(max(position), 0) FROM events`).Scan(&head); err != nil {
		t.Fatal(err)
	}
	return head
}

// waitCaughtUp waits until both watermarks are at the head.
func (r *rig) waitCaughtUp(t *testing.T, timeout time.Duration) int64 {
	t.Helper()
	head := r.head(t)
	eventually.True(t, timeout, fmt.Sprintf("both projections to reach position %d", head), func() bool {
		for _, n := range projections.All {
			pos, err := r.store.Position(context.Background(), n)
			if err != nil {
				t.Fatal(err)
			}
			if pos < head {
				return false
			}
		}
		return true
	})
	return head
}

// dump is every read-model table as text, to see that nothing changed.
func dump(t *testing.T, pool *pgxpool.Pool) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, table := range []string{"transactions", "tx_order", "tx_counts", "tx_days", "balances", "ggr_daily", "ggr_players",
		"ggr_player_months", "ggr_rounds", "tx_filter_counts", "tx_filter_marks", "checkpoints", "positions"} {
		var s string
		err := pool.QueryRow(context.Background(), `SELECT coalesce(string_agg(t::text, E'\n' ORDER BY t::text), '')
			FROM readmodels.`+table+` t`).Scan(&s)
		if err != nil {
			t.Fatalf("dump %s: %v", table, err)
		}
		out[table] = s
	}
	return out
}

func balances(t *testing.T, pool *pgxpool.Pool) map[string]string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT account_id, balance, scale FROM readmodels.balances`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var (
			id      string
			balance int64
			scale   int16
		)
		if err := rows.Scan(&id, &balance, &scale); err != nil {
			t.Fatal(err)
		}
		out[id] = domain.FormatMinor(balance, int(scale))
	}
	return out
}

func historyLines(t *testing.T, store *readstore.ReadModels, f projections.TransactionFilter, p projections.Page) ([]string, projections.TransactionPage) {
	t.Helper()
	page, err := store.Transactions(context.Background(), f, p)
	if err != nil {
		t.Fatalf("transactions: %v", err)
	}
	var lines []string
	for _, r := range page.Rows {
		lines = append(lines, strings.TrimSpace(fmt.Sprintf("%s %s %s %s %s", r.Type, domain.FormatMinor(r.Amount, r.Scale),
			r.Status, r.PlayerID, r.RoundID)))
	}
	return lines, page
}

// The history of the session, newest first: every event a row, each round
// a game_result row placed with the round's first event.
var sessionHistory = []string{
	"transfer -50.00 settled p1",
	"withdrawal -10.00 settled p2",
	"rollback -25.00 settled p1 r1",
	"win 4.00 settled p1 r5",
	"game_result 4.00 settled p1 r5",
	"bet 0.00 settled p1 r5",
	"game_result -7.00 pending p2 r4",
	"bet -7.00 settled p2 r4",
	"win 0.00 settled p2 r3",
	"bet -5.00 settled p2 r3",
	"game_result -10.00 settled p2 r3",
	"bet -5.00 settled p2 r3",
	"rollback 20.00 settled p1 r2",
	"game_result 0.00 rolled_back p1 r2",
	"bet -20.00 rolled_back p1 r2",
	"win 25.00 rolled_back p1 r1",
	"game_result -10.00 settled p1 r1",
	"bet -10.00 settled p1 r1",
	"transfer 100.00 settled p2",
	"transfer 200.00 settled p1",
	"deposit 1000.00 settled",
}

func ggrLines(t *testing.T, store *readstore.ReadModels, group ...projections.Dimension) []string {
	t.Helper()
	rows, err := store.GGR(context.Background(), projections.ReportQuery{ClientID: projectortest.Client,
		From: projectortest.Day1, To: projectortest.Day2, GroupBy: group})
	if err != nil {
		t.Fatalf("ggr: %v", err)
	}
	var lines []string
	f := func(v int64) string { return domain.FormatMinor(v, 2) }
	for _, r := range rows {
		day := ""
		if !r.Period.IsZero() {
			day = r.Period.Format(time.DateOnly) + " "
		}
		lines = append(lines, fmt.Sprintf("%s%s/%s %s bets %s refunds %s wins %s reversals %s ggr %s promo %s/%s/%s rounds %d players %d",
			day, r.Provider, r.Game, r.Currency, f(r.Bets), f(r.BetRefunds), f(r.Wins), f(r.WinReversals), f(r.GGR()),
			f(r.PromoBets), f(r.PromoWins), f(r.PromoGGR()), r.Rounds, r.Players))
	}
	return lines
}

func checkLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\ngot\n  %s\nwant\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// A scripted session goes through the commands, the ledger, the relay and
// Kafka into both projections, and comes out as the figures worked out by
// hand. Consuming it all again in new consumer groups changes nothing.
func TestProjectorScriptedSession(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	if _, err := projectortest.Session(ctx, r.h, r.clock); err != nil {
		t.Fatal(err)
	}
	ws := r.startBoth(t, r.store, randomSuffix(), nil)
	if head := r.waitCaughtUp(t, 60*time.Second); head != projectortest.Events {
		t.Fatalf("head = %d, want %d", head, projectortest.Events)
	}

	wantBalances := map[string]string{"client:acme:EUR": "750.00", "player:acme:p1:EUR": "144.00", "player:acme:p2:EUR": "73.00"}
	if got := balances(t, r.pool); fmt.Sprint(got) != fmt.Sprint(wantBalances) {
		t.Errorf("balances = %v, want %v", got, wantBalances)
	}
	all := projections.TransactionFilter{ClientID: projectortest.Client}
	got, page := historyLines(t, r.store, all, projections.Page{Number: 1, Size: 50})
	checkLines(t, "history", got, sessionHistory)
	if page.Total != 21 || !page.TotalExact {
		t.Errorf("total = %d (exact %v), want 21", page.Total, page.TotalExact)
	}
	checkLines(t, "GGR by day and game", ggrLines(t, r.store, projections.DimDay, projections.DimGame), []string{
		"2025-03-01 prov-a/slot-1 EUR bets 30.00 refunds 20.00 wins 25.00 reversals 0.00 ggr -15.00 promo 0.00/0.00/0.00 rounds 2 players 1",
		"2025-03-01 prov-a/slot-2 EUR bets 10.00 refunds 0.00 wins 0.00 reversals 0.00 ggr 10.00 promo 0.00/0.00/0.00 rounds 1 players 1",
		"2025-03-02 prov-a/slot-1 EUR bets 7.00 refunds 0.00 wins 0.00 reversals 25.00 ggr 32.00 promo 0.00/0.00/0.00 rounds 1 players 1",
		"2025-03-02 prov-a/slot-2 EUR bets 0.00 refunds 0.00 wins 0.00 reversals 0.00 ggr 0.00 promo 0.00/4.00/-4.00 rounds 1 players 1",
	})
	checkLines(t, "GGR by provider", ggrLines(t, r.store, projections.DimProvider), []string{
		"prov-a/ EUR bets 47.00 refunds 20.00 wins 25.00 reversals 25.00 ggr 27.00 promo 0.00/4.00/-4.00 rounds 5 players 2",
	})

	// Redelivery: new consumer groups read the topic from the start.
	before := dump(t, r.pool)
	for _, w := range ws {
		w.stop()
	}
	again := r.startBoth(t, r.store, randomSuffix(), nil)
	eventually.True(t, 60*time.Second, "the new groups to see every event", func() bool {
		return again[0].Stats().Skipped >= projectortest.Events && again[1].Stats().Skipped >= projectortest.Events
	})
	for _, w := range again {
		if s := w.Stats(); s.Applied != 0 || s.DeadLettered != 0 {
			t.Errorf("redelivery applied %d and dead-lettered %d events, want none", s.Applied, s.DeadLettered)
		}
	}
	if after := dump(t, r.pool); fmt.Sprint(after) != fmt.Sprint(before) {
		for k := range before {
			if before[k] != after[k] {
				t.Errorf("redelivery changed %s:\nbefore\n%s\nafter\n%s", k, before[k], after[k])
			}
		}
	}
}

// A projector killed mid-way (its connections cut, then its process
// stopped) and started again converges on exactly what a rebuild from the
// event store computes.
func TestProjectorKilledMidBatchConverges(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	if _, err := eventstore.SeedEvents(ctx, r.pool, eventstore.SeedOptions{Events: 1500, Clients: 2, PlayersPerClient: 30, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	// The workers' own pool, so its connections can be cut.
	cfg, err := pgxpool.ParseConfig(r.url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "projector-under-test"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	store := readstore.NewReadModels(pool)
	group := randomSuffix()
	ws := r.startBoth(t, store, group, nil)
	eventually.True(t, 60*time.Second, "the projectors to be under way", func() bool { return ws[0].Stats().Applied >= 200 })
	var cut int
	if err := r.pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = 'projector-under-test'`).Scan(&cut); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, 60*time.Second, "the projectors to go on after the cut", func() bool { return ws[0].Stats().Applied >= 500 })
	for _, w := range ws {
		w.stop()
	}
	applied := ws[0].Stats().Applied
	if applied >= 1500 {
		t.Fatalf("history applied all %d events before the kill; the test proves nothing", applied)
	}
	t.Logf("killed after %d events (cut %d connections on the way)", applied, cut)

	ws = r.startBoth(t, store, group, nil) // same groups: resume
	r.waitCaughtUp(t, 120*time.Second)
	for _, opts := range []readstore.ReplayOptions{{}, {Full: true}} {
		rep, err := r.store.Compare(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Differences() != 0 || rep.Events != 1500 {
			for _, d := range rep.Tables {
				t.Logf("%s: missing %d extra %d changed %d %v", d.Table, d.Missing, d.Extra, d.Changed, d.Examples)
			}
			t.Fatalf("after the restart (full %v): %d differences from a rebuild of %d events", opts.Full, rep.Differences(), rep.Events)
		}
	}
	if s := ws[0].Stats(); s.Applied == 0 || s.Applied >= 1500 {
		t.Errorf("after the restart history applied %d events; want it to resume, neither idle nor from scratch", s.Applied)
	}
}

// Poison messages go to the dead-letter topic with their reason, and the
// projector goes on with the events after them.
func TestProjectorDeadLetters(t *testing.T) {
	t.Parallel()
	testDeadLetters(t, func(r *rig, tweak func(*projector.Config)) []*worker {
		return r.startBoth(t, r.store, randomSuffix(), tweak)
	})
}

// The combined worker dead-letters a poison message for each projection,
// as the separate workers do.
func TestCombinedDeadLetters(t *testing.T) {
	t.Parallel()
	testDeadLetters(t, func(r *rig, tweak func(*projector.Config)) []*worker {
		return []*worker{r.startCombined(t, r.store, projector.CombinedConsumerGroup+"-"+randomSuffix(), tweak)}
	})
}

func testDeadLetters(t *testing.T, start func(r *rig, tweak func(*projector.Config)) []*worker) {
	r := newRig(t)
	ctx := context.Background()
	pub, err := kafka.NewPublisher(r.brokers, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	poison := func(id, stream, version string, payload []byte) *message.Message {
		m := message.NewMessage(id, payload)
		m.Metadata.Set(kafka.HeaderEventID, id)
		m.Metadata.Set(kafka.HeaderStreamID, stream)
		m.Metadata.Set(kafka.HeaderStreamVersion, version)
		return m
	}
	body := func(stream domain.AccountID, version int64, currency string) []byte {
		b, err := domain.EncodeBody(domain.Event{ID: projectortest.IDs{}.NewID(), Type: domain.EventDeposited,
			StreamID: stream, Version: version, Position: 999, OccurredAt: projectortest.Day1,
			Data: domain.EventData{ClientID: "acme", Currency: currency, Amount: "1.00", Postings: []domain.Posting{}}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	msgs := []*message.Message{
		poison("00000000-0000-4000-8000-000000000001", "client:poison:EUR", "1", []byte(`{"not": "an event"`)),
		poison("00000000-0000-4000-8000-000000000002", "client:bad:ZZZQ", "1", body("client:bad:ZZZQ", 1, "ZZZQ")),
		poison("00000000-0000-4000-8000-000000000003", "client:gap:EUR", "2", body("client:gap:EUR", 2, "EUR")),
	}
	if err := pub.Publish(r.topic, msgs...); err != nil {
		t.Fatal(err)
	}
	if _, err := projectortest.Session(ctx, r.h, r.clock); err != nil {
		t.Fatal(err)
	}
	ws := start(r, func(c *projector.Config) {
		c.MaxInvalidAttempts, c.GapTimeout = 2, 300*time.Millisecond
	})
	r.waitCaughtUp(t, 60*time.Second)
	eventually.True(t, 30*time.Second, "six dead letters", func() bool {
		var n int64
		for _, w := range ws {
			n += w.Stats().DeadLettered
		}
		return n >= 6
	})
	wantBalances := map[string]string{"client:acme:EUR": "750.00", "player:acme:p1:EUR": "144.00", "player:acme:p2:EUR": "73.00"}
	if got := balances(t, r.pool); fmt.Sprint(got) != fmt.Sprint(wantBalances) {
		t.Errorf("balances after the poison = %v, want %v", got, wantBalances)
	}

	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	recs, err := kafkatest.ReadUntil(rctx, r.brokers, projector.DeadLetterTopic(r.topic), func(r []kafkatest.Record) bool { return len(r) >= 6 })
	if err != nil {
		t.Fatalf("read the dead-letter topic: %v (%d records)", err, len(recs))
	}
	got := map[string]string{}
	for _, rec := range recs {
		got[rec.Headers[kafka.HeaderEventID]+" "+rec.Headers[projector.HeaderDLQProjection]] = rec.Headers[projector.HeaderDLQReason]
		if rec.Headers[projector.HeaderDLQTopic] != r.topic || rec.Headers[projector.HeaderDLQGroup] == "" {
			t.Errorf("dead letter %s lacks its origin: %v", rec.Headers[kafka.HeaderEventID], rec.Headers)
		}
	}
	for _, n := range projections.All {
		for id, reason := range map[string]string{
			"00000000-0000-4000-8000-000000000001": "undecodable event body",
			"00000000-0000-4000-8000-000000000002": `currency "ZZZQ"`,
			"00000000-0000-4000-8000-000000000003": "versions 1..1 are missing",
		} {
			if r := got[id+" "+string(n)]; !strings.Contains(r, reason) {
				t.Errorf("%s dead letter of %s: reason %q, want it to say %q", n, id, r, reason)
			}
		}
	}
	var recorded int
	if err := r.pool.QueryRow(ctx, `SELECT count(*) FROM projection_dead_letters`).Scan(&recorded); err != nil || recorded != 6 {
		t.Errorf("projection_dead_letters has %d rows (%v), want 6", recorded, err)
	}
	var version int64
	if err := r.pool.QueryRow(ctx, `SELECT version FROM readmodels.checkpoints WHERE projection = 'history' AND stream_id = 'client:gap:EUR'`).Scan(&version); err != nil || version != 2 {
		t.Errorf("the gap stream's checkpoint = %d (%v), want 2 (moved past the dead letter)", version, err)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     projector.Config
		wantErr string
	}{
		{name: "defaults", cfg: projector.Config{Brokers: []string{"b:9092"}, Projection: projections.History}},
		{name: "no brokers", cfg: projector.Config{Projection: projections.History}, wantErr: "no brokers"},
		{name: "unknown projection", cfg: projector.Config{Brokers: []string{"b"}, Projection: "ledger"}, wantErr: "unknown projection"},
		{name: "dead letters into the ledger topic", cfg: projector.Config{Brokers: []string{"b"}, Projection: projections.Balances,
			Topic: "t", DeadLetterTopic: "t"}, wantErr: "must be set and differ"},
		{name: "negative backoff", cfg: projector.Config{Brokers: []string{"b"}, Projection: projections.Balances,
			RetryBackoff: -time.Second}, wantErr: "retry backoff"},
		{name: "combined", cfg: projector.Config{Brokers: []string{"b"}, Combined: true}},
		{name: "combined with a projection", cfg: projector.Config{Brokers: []string{"b"}, Combined: true,
			Projection: projections.History}, wantErr: "must be empty"},
		{name: "neither", cfg: projector.Config{Brokers: []string{"b"}}, wantErr: "unknown projection"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := projector.New(readstore.NewReadModels(nil), tc.cfg, nil)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("err = %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
	if got := projections.History.ConsumerGroup(); got != "pitboss.projection.history.v1" {
		t.Errorf("consumer group = %q", got)
	}
	for mode, want := range map[string][]string{projector.ModeCombined: {projector.CombinedConsumerGroup},
		projector.ModeSeparate: {projections.History.ConsumerGroup(), projections.Balances.ConsumerGroup()}} {
		cfgs, err := projector.RoleConfigs(mode, []string{"b"}, "")
		var groups []string
		for _, c := range cfgs {
			w, err := projector.New(readstore.NewReadModels(nil), c, nil)
			if err != nil {
				t.Fatalf("%s: %v", mode, err)
			}
			groups = append(groups, w.ConsumerGroup())
		}
		if err != nil || fmt.Sprint(groups) != fmt.Sprint(want) {
			t.Errorf("mode %s: groups %v (%v), want %v", mode, groups, err, want)
		}
	}
	if _, err := projector.RoleConfigs("both", []string{"b"}, ""); err == nil {
		t.Error("mode both accepted")
	}
	if projector.CombinedConsumerGroup != "pitboss.projector.v1" {
		t.Errorf("combined consumer group = %q: frozen, a new name reads the whole topic again", projector.CombinedConsumerGroup)
	}
}
