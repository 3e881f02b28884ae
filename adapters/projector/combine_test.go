package projector

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/internal/eventually"
	"github.com/pitboss/pitboss/projections"
)

// fakeApply records each transaction's events and answers each event
// with Applied, its Err set when the event's id says so.
type fakeApply struct {
	mu   sync.Mutex
	txs  [][]string // event ids per transaction
	fail bool
}

func (f *fakeApply) apply(_ context.Context, events []domain.Event) ([][]projections.ApplyResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := make([]string, len(events))
	for i, e := range events {
		ids[i] = e.ID
	}
	f.txs = append(f.txs, ids)
	if f.fail {
		return nil, errors.New("database down")
	}
	res := make([][]projections.ApplyResult, 2) // two projections
	for j := range res {
		res[j] = make([]projections.ApplyResult, len(events))
		for k, e := range events {
			res[j][k] = projections.ApplyResult{Applied: true}
			if j == 1 && e.ID[0] == 'x' {
				res[j][k] = projections.ApplyResult{Err: fmt.Errorf("invalid %s", e.ID)}
			}
		}
	}
	return res, nil
}

func ev(id, stream string) domain.Event {
	return domain.Event{ID: id, StreamID: domain.AccountID(stream)}
}

func TestCombinerResults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		rounds [][]domain.Event
		fail   bool
		// the transactions, as event ids, when every round is queued
		// before the first is applied
		wantTxs [][]string
	}{
		{name: "distinct streams share one transaction",
			rounds:  [][]domain.Event{{ev("a1", "A"), ev("b1", "B")}, {ev("c1", "C")}, {ev("xd", "D")}},
			wantTxs: [][]string{{"a1", "b1", "c1", "xd"}}},
		{name: "a stream met again waits for the next transaction, and so do the rounds after it that share its streams",
			rounds:  [][]domain.Event{{ev("a1", "A")}, {ev("a2", "A"), ev("b1", "B")}, {ev("b2", "B")}, {ev("c1", "C")}},
			wantTxs: [][]string{{"a1", "c1"}, {"a2", "b1"}, {"b2"}}},
		{name: "a failed transaction fails every round in it",
			rounds: [][]domain.Event{{ev("a1", "A")}, {ev("b1", "B")}}, fail: true,
			wantTxs: [][]string{{"a1", "b1"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeApply{fail: tc.fail}
			c := &combiner{lock: make(chan struct{}, 1), apply: f.apply}
			// Hold the lock while every round queues, then let them go.
			c.lock <- struct{}{}
			type out struct {
				res [][]projections.ApplyResult
				err error
			}
			outs := make([]out, len(tc.rounds))
			var wg sync.WaitGroup
			for i, r := range tc.rounds {
				wg.Go(func() {
					res, err := c.Apply(context.Background(), r)
					outs[i] = out{res, err}
				})
				eventually.True(t, 10*time.Second, "the round queued", func() bool { c.mu.Lock(); defer c.mu.Unlock(); return len(c.queue) == i+1 })
			}
			<-c.lock
			wg.Wait()
			if fmt.Sprint(f.txs) != fmt.Sprint(tc.wantTxs) {
				t.Errorf("transactions %v, want %v", f.txs, tc.wantTxs)
			}
			for i, r := range tc.rounds {
				o := outs[i]
				if tc.fail {
					if o.err == nil {
						t.Errorf("round %d: no error", i)
					}
					continue
				}
				if o.err != nil || len(o.res) != 2 || len(o.res[0]) != len(r) || len(o.res[1]) != len(r) {
					t.Fatalf("round %d: %v, results %v", i, o.err, o.res)
				}
				for k, e := range r {
					if bad := o.res[1][k].Err != nil; bad != (e.ID[0] == 'x') || !o.res[0][k].Applied {
						t.Errorf("round %d event %s: results %+v / %+v", i, e.ID, o.res[0][k], o.res[1][k])
					}
				}
			}
		})
	}
}

// Rounds that arrive within the gather of a small one share its
// transaction; without a gather, a lone round goes at once.
func TestCombinerGather(t *testing.T) {
	t.Parallel()
	f := &fakeApply{}
	c := &combiner{lock: make(chan struct{}, 1), apply: f.apply, gather: 300 * time.Millisecond, small: 10}
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = c.Apply(context.Background(), []domain.Event{ev("a1", "A")}) })
	eventually.True(t, 10*time.Second, "the first round to hold the lock", func() bool { return len(c.lock) == 1 }) // gathering
	for i, s := range []string{"B", "C"} {
		wg.Go(func() { _, _ = c.Apply(context.Background(), []domain.Event{ev(fmt.Sprint(i), s)}) })
	}
	wg.Wait()
	if txs, rounds := c.stats(); txs != 1 || rounds != 3 {
		t.Errorf("three rounds within the gather: %d transactions of %d rounds (%v), want 1 of 3", txs, rounds, f.txs)
	}
}

func TestWatermarkPause(t *testing.T) {
	t.Parallel()
	c := Config{Brokers: []string{"b"}, Combined: true}
	c.setDefaults()
	tests := []struct {
		moved int64
		want  time.Duration
	}{
		{0, DefaultLightWatermark}, // idle tick
		{1, DefaultLightWatermark}, // a light load's move
		{LightMove - 1, DefaultLightWatermark},
		{LightMove, DefaultWatermarkInterval}, // under load
		{5000, DefaultWatermarkInterval},
	}
	for _, tc := range tests {
		if got := c.watermarkPause(tc.moved); got != tc.want {
			t.Errorf("moved %d: pause %v, want %v", tc.moved, got, tc.want)
		}
	}
	// A configured interval above the light one raises it.
	slow := Config{Brokers: []string{"b"}, Combined: true, WatermarkInterval: 200 * time.Millisecond}
	slow.setDefaults()
	if got := slow.watermarkPause(0); got != 200*time.Millisecond {
		t.Errorf("interval 200ms: light pause %v, want 200ms", got)
	}
}
