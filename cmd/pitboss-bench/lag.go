package main

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/IBM/sarama"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/kafka"
)

// Lag is measured from the moment the wallet answered — the event was
// committed before the answer was sent, so this is the commit plus at most
// the answer's way back over loopback:
//
//   - relay lag: until the event arrives at a consumer of the ledger topic
//     (a plain consumer of every partition, started before the load);
//   - projection lag: until the projection's watermark (readmodels.positions,
//     polled every 10 ms) reaches the event's position — from then on a
//     read with ?min_position= that position is answered without waiting.

type lagWatch struct {
	// projections is false when the service runs no projector: measure
	// then waits for Kafka only, and the projection lags stay empty.
	projections bool
	topic       string
	consumer    sarama.Consumer
	parts       []sarama.PartitionConsumer
	db          *pgxpool.Pool // two connections: the watermark poll, the position lookups

	mu   sync.Mutex
	recv map[string]int64 // event id → unix ns of arrival

	wmMu sync.Mutex
	wm   []wmSample
	// oldestXact is the age of the oldest transaction with a transaction
	// id anywhere in the cluster, the most seen since the last measure:
	// the relay reads only below the cluster's xmin, so such a
	// transaction (anyone's, in any database) holds it back.
	oldestXact float64

	stop context.CancelFunc
	wg   sync.WaitGroup
}

type wmSample struct {
	at                int64 // unix ns, after the answer arrived
	history, balances int64
}

// startLagWatch starts consuming every partition of topic from its end
// and polling the projections' watermarks in dbURL.
func startLagWatch(ctx context.Context, brokers []string, topic, dbURL string) (*lagWatch, error) {
	c := kafka.SaramaSubscriberConfig(false)
	c.ClientID = "pitboss-bench"
	consumer, err := sarama.NewConsumer(brokers, c)
	if err != nil {
		return nil, fmt.Errorf("kafka consumer: %w", err)
	}
	parts, err := consumer.Partitions(topic)
	if err != nil {
		consumer.Close()
		return nil, fmt.Errorf("partitions of %s: %w", topic, err)
	}
	pcfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		consumer.Close()
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	pcfg.MaxConns = 2
	db, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		consumer.Close()
		return nil, fmt.Errorf("connect for watermarks: %w", err)
	}
	wctx, cancel := context.WithCancel(ctx)
	w := &lagWatch{projections: true, topic: topic, consumer: consumer, db: db, recv: map[string]int64{}, stop: cancel}
	for _, p := range parts {
		pc, err := consumer.ConsumePartition(topic, p, sarama.OffsetNewest)
		if err != nil {
			w.close()
			return nil, fmt.Errorf("consume %s/%d: %w", topic, p, err)
		}
		w.parts = append(w.parts, pc)
		w.wg.Go(func() {
			for m := range pc.Messages() {
				at := time.Now().UnixNano()
				for _, h := range m.Headers {
					if string(h.Key) == kafka.HeaderEventID {
						w.mu.Lock()
						w.recv[string(h.Value)] = at
						w.mu.Unlock()
						break
					}
				}
			}
		})
		w.wg.Go(func() {
			for range pc.Errors() {
			}
		})
	}
	w.wg.Go(func() { every(wctx, 10*time.Millisecond, w.pollWatermarks) })
	w.wg.Go(func() { every(wctx, 200*time.Millisecond, w.pollXmin) })
	return w, nil
}

// every calls poll at each tick of interval until ctx ends.
func every(ctx context.Context, interval time.Duration, poll func(context.Context)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		poll(ctx)
	}
}

// pollWatermarks samples the projections' watermarks.
func (w *lagWatch) pollWatermarks(ctx context.Context) {
	var s wmSample
	rows, err := w.db.Query(ctx, `SELECT projection, position FROM readmodels.positions`)
	if err != nil {
		return
	}
	for rows.Next() {
		var name string
		var pos int64
		if rows.Scan(&name, &pos) == nil {
			switch name {
			case "history":
				s.history = pos
			case "balances":
				s.balances = pos
			}
		}
	}
	rows.Close()
	s.at = time.Now().UnixNano()
	w.wmMu.Lock()
	w.wm = append(w.wm, s)
	w.wmMu.Unlock()
}

// pollXmin samples the age of the oldest transaction holding an xid.
func (w *lagWatch) pollXmin(ctx context.Context) {
	var age float64
	if err := w.db.QueryRow(ctx, `SELECT coalesce(extract(epoch FROM max(clock_timestamp() - xact_start)), 0)::float8
		FROM pg_stat_activity WHERE backend_xid IS NOT NULL`).Scan(&age); err == nil {
		w.wmMu.Lock()
		w.oldestXact = max(w.oldestXact, age)
		w.wmMu.Unlock()
	}
}

func (w *lagWatch) close() {
	w.stop()
	for _, p := range w.parts {
		p.AsyncClose()
	}
	w.wg.Wait()
	w.consumer.Close()
	w.db.Close()
}

// LagStats is one lag's distribution over a step's events.
type LagStats struct {
	Events  int64   `json:"events"`
	Missing int64   `json:"missing"` // not seen within the drain time
	P50ms   float64 `json:"p50_ms"`
	P99ms   float64 `json:"p99_ms"`
	Maxms   float64 `json:"max_ms"`
}

// StepLag is the lags of one step.
type StepLag struct {
	Relay              LagStats `json:"relay"`
	ProjectionBalances LagStats `json:"projection_balances"`
	ProjectionHistory  LagStats `json:"projection_history"`
	Drain              float64  `json:"drain_seconds"` // how long after the load everything was in
	// OldestXact is the oldest transaction holding a transaction id in
	// the whole cluster while the step ran, in seconds (see lagWatch).
	OldestXact float64 `json:"oldest_write_transaction_seconds"`
}

// measure waits (up to drain) until every event answered in the step has
// arrived on Kafka and both watermarks have passed the step's last
// position, then computes the lags and forgets what it has seen.
func (w *lagWatch) measure(ctx context.Context, answers []answerAt, drain time.Duration) (StepLag, error) {
	var out StepLag
	if len(answers) == 0 {
		return out, nil
	}
	pos, err := w.positions(ctx, answers)
	if err != nil {
		return out, err
	}
	var head int64
	for _, p := range pos {
		head = max(head, p)
	}
	start := time.Now()
	deadline := start.Add(drain)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		w.mu.Lock()
		missing := 0
		for _, a := range answers {
			if _, ok := w.recv[a.eventID]; !ok {
				missing++
			}
		}
		w.mu.Unlock()
		w.wmMu.Lock()
		var last wmSample
		if len(w.wm) > 0 {
			last = w.wm[len(w.wm)-1]
		}
		w.wmMu.Unlock()
		if missing == 0 && (!w.projections || last.history >= head && last.balances >= head) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	out.Drain = time.Since(start).Seconds()

	relay, bal, hist := newHist(), newHist(), newHist()
	w.mu.Lock()
	for _, a := range answers {
		if at, ok := w.recv[a.eventID]; ok {
			_ = relay.RecordValue(max((at-a.at)/1000, 1))
		} else {
			out.Relay.Missing++
		}
	}
	clear(w.recv)
	w.mu.Unlock()

	w.wmMu.Lock()
	wm := slices.Clone(w.wm)
	w.wm = w.wm[:0]
	out.OldestXact, w.oldestXact = w.oldestXact, 0
	w.wmMu.Unlock()
	for _, a := range answers {
		p, ok := pos[a.eventID]
		if !ok {
			continue
		}
		if t, ok := firstAt(wm, a.at, func(s wmSample) bool { return s.balances >= p }); ok {
			_ = bal.RecordValue(max((t-a.at)/1000, 1))
		} else {
			out.ProjectionBalances.Missing++
		}
		if t, ok := firstAt(wm, a.at, func(s wmSample) bool { return s.history >= p }); ok {
			_ = hist.RecordValue(max((t-a.at)/1000, 1))
		} else {
			out.ProjectionHistory.Missing++
		}
	}
	out.Relay = fill(out.Relay, relay)
	out.ProjectionBalances = fill(out.ProjectionBalances, bal)
	out.ProjectionHistory = fill(out.ProjectionHistory, hist)
	return out, nil
}

// firstAt is the time of the first sample at or after from that holds
// (the watermarks only grow, so the holding samples are a suffix).
func firstAt(wm []wmSample, from int64, holds func(wmSample) bool) (int64, bool) {
	lo := sort.Search(len(wm), func(i int) bool { return wm[i].at >= from })
	i := lo + sort.Search(len(wm)-lo, func(i int) bool { return holds(wm[lo+i]) })
	if i >= len(wm) {
		return 0, false
	}
	return wm[i].at, true
}

func fill(s LagStats, h *hdrhistogram.Histogram) LagStats {
	s.Events = h.TotalCount()
	s.P50ms = float64(h.ValueAtQuantile(50)) / 1000
	s.P99ms = float64(h.ValueAtQuantile(99)) / 1000
	s.Maxms = float64(h.Max()) / 1000
	return s
}

// positions reads the events' positions from the event store.
func (w *lagWatch) positions(ctx context.Context, answers []answerAt) (map[string]int64, error) {
	out := make(map[string]int64, len(answers))
	for i := 0; i < len(answers); i += 20_000 {
		ids := make([]string, 0, 20_000)
		for _, a := range answers[i:min(i+20_000, len(answers))] {
			ids = append(ids, a.eventID)
		}
		rows, err := w.db.Query(ctx, `SELECT event_id::text, position FROM events WHERE event_id = ANY($1::uuid[])`, ids)
		if err != nil {
			return nil, fmt.Errorf("positions of %d events: %w", len(ids), err)
		}
		var id string
		var p int64
		_, err = pgx.ForEachRow(rows, []any{&id, &p}, func() error {
			out[id] = p
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("positions: %w", err)
		}
	}
	return out, nil
}
