package projector_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/readstore"
	"github.com/pitboss/pitboss/adapters/projector"
	"github.com/pitboss/pitboss/adapters/projector/projectortest"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/internal/eventually"
	"github.com/pitboss/pitboss/projections"
)

// startCombined starts a combined worker (every projection, one group).
func (r *rig) startCombined(t *testing.T, store projector.Store, group string, tweak func(*projector.Config)) *worker {
	t.Helper()
	return r.start(t, store, "", group, func(c *projector.Config) {
		c.Combined = true
		if tweak != nil {
			tweak(c)
		}
	})
}

// seedAndSession writes a generated ledger and the scripted session.
func (r *rig) seedAndSession(t *testing.T, events int) {
	t.Helper()
	ctx := context.Background()
	if _, err := eventstore.SeedEvents(ctx, r.pool, eventstore.SeedOptions{Events: events, Clients: 2, PlayersPerClient: 30, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	if _, err := projectortest.Session(ctx, r.h, r.clock); err != nil {
		t.Fatal(err)
	}
}

// eventIDs are the ids of every event in the event store.
func (r *rig) eventIDs(t *testing.T) []string {
	t.Helper()
	rows, err := r.pool.Query(context.Background(), `SELECT event_id::text FROM events ORDER BY position`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// checkOnce checks that every event of the event store was applied to each
// projection exactly once, counted over the workers' stores.
func (r *rig) checkOnce(t *testing.T, stores ...*recordingStore) {
	t.Helper()
	ids := r.eventIDs(t)
	for _, p := range projections.All {
		n := map[string]int{}
		for _, s := range stores {
			for id, k := range s.ids(p) {
				n[id] += k
			}
		}
		bad := 0
		for _, id := range ids {
			if n[id] != 1 {
				if bad++; bad <= 5 {
					t.Errorf("%s: event %s applied %d times, want once", p, id, n[id])
				}
			}
		}
		if len(n) != len(ids) {
			t.Errorf("%s: %d events applied, %d in the event store", p, len(n), len(ids))
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d events not applied exactly once", p, bad, len(ids))
		}
	}
}

// checkRebuild compares the live read models with a rebuild from the event
// store.
func (r *rig) checkRebuild(t *testing.T) {
	t.Helper()
	for _, opts := range []readstore.ReplayOptions{{}, {Full: true}} {
		rep, err := r.store.Compare(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Differences() != 0 {
			for _, d := range rep.Tables {
				t.Logf("%s: missing %d extra %d changed %d %v", d.Table, d.Missing, d.Extra, d.Changed, d.Examples)
			}
			t.Fatalf("(full %v) %d differences from a rebuild of %d events", opts.Full, rep.Differences(), rep.Events)
		}
	}
}

// resetReadModels empties the read models (the watermarks back to 0), as
// before any projector ran.
func (r *rig) resetReadModels(t *testing.T) {
	t.Helper()
	_, err := r.pool.Exec(context.Background(), `TRUNCATE readmodels.transactions, readmodels.tx_order,
		readmodels.tx_counts, readmodels.tx_days, readmodels.balances, readmodels.ggr_daily, readmodels.ggr_players,
		readmodels.ggr_player_months, readmodels.ggr_rounds, readmodels.tx_filter_counts, readmodels.tx_filter_marks,
		readmodels.checkpoints;
		UPDATE readmodels.positions SET position = 0`)
	if err != nil {
		t.Fatal(err)
	}
}

// The combined worker leaves every read-model table (checkpoints and
// watermarks included) exactly as the two separate workers do on the same
// event stream, and as a rebuild from the event store does.
func TestCombinedMatchesSeparateWorkers(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.seedAndSession(t, 1500)
	w := r.startCombined(t, r.store, projector.CombinedConsumerGroup+"-"+randomSuffix(), nil)
	r.waitCaughtUp(t, 120*time.Second)
	w.stop()
	if s := w.Stats(); s.Applied != 2*r.head(t) || s.Skipped != 0 || s.DeadLettered != 0 {
		t.Errorf("combined worker stats %+v, want %d applications (2 projections × %d events)", s, 2*r.head(t), r.head(t))
	}
	r.checkRebuild(t)
	combined := dump(t, r.pool)

	r.resetReadModels(t)
	ws := r.startBoth(t, r.store, randomSuffix(), nil)
	r.waitCaughtUp(t, 120*time.Second)
	for _, w := range ws {
		w.stop()
	}
	separate := dump(t, r.pool)
	for table, want := range separate {
		if want == "" && table != "positions" && table != "tx_filter_marks" {
			t.Errorf("table %s is empty after the separate workers: the comparison proves nothing", table)
		}
		if got := combined[table]; got != want {
			t.Errorf("table %s differs: the combined worker wrote %d bytes, the separate workers %d", table, len(got), len(want))
		}
	}
}

// crashingStore commits the crashAt-th batch and then hangs as a process
// would that died before committing the batch's offsets: the batch is
// neither acknowledged nor failed until the worker is stopped.
type crashingStore struct {
	*recordingStore
	crashAt int64
	calls   atomic.Int64
	crashed chan struct{}
	once    sync.Once
}

func (s *crashingStore) ApplyProjections(ctx context.Context, ps []projections.Projection, events []domain.Event) ([][]projections.ApplyResult, error) {
	res, err := s.recordingStore.ApplyProjections(ctx, ps, events)
	if err != nil || s.calls.Add(1) < s.crashAt {
		return res, err
	}
	s.once.Do(func() { close(s.crashed) })
	<-ctx.Done()
	return nil, errors.Join(errors.New("crashed after the commit"), ctx.Err())
}

// A combined worker that dies after a batch's transaction commits but
// before the batch's offsets do gets the batch again when it restarts, and
// applies none of it twice.
func TestCombinedRedeliveryAfterCrashAppliesNothingTwice(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.seedAndSession(t, 1500)
	group := projector.CombinedConsumerGroup + "-" + randomSuffix()
	first := &crashingStore{recordingStore: newRecordingStore(r.store), crashAt: 3, crashed: make(chan struct{})}
	w := r.startCombined(t, first, group, nil)
	select {
	case <-first.crashed:
	case <-time.After(60 * time.Second):
		t.Fatal("the worker never got to its third batch")
	}
	w.stop()
	if n := len(first.ids(projections.History)); n == 0 || int64(n) >= r.head(t) {
		t.Fatalf("the first worker applied %d events of %d before the crash; the test proves nothing", n, r.head(t))
	}

	second := newRecordingStore(r.store)
	w = r.startCombined(t, second, group, nil) // the same group: resume
	r.waitCaughtUp(t, 120*time.Second)
	if s := w.Stats(); s.Skipped == 0 {
		t.Errorf("after the restart nothing was skipped (%+v): the crashed batch was not redelivered", s)
	}
	r.checkOnce(t, first.recordingStore, second)
	r.checkRebuild(t)
}

// stallingStore stops applying (it waits for the worker to stop) once each
// projection asked for has applied at least after events: a projector
// stopped part of the way through the topic.
type stallingStore struct {
	*recordingStore
	after int
}

func (s *stallingStore) stalled(ps ...projections.Projection) bool {
	for _, p := range ps {
		if len(s.ids(p.Name())) < s.after {
			return false
		}
	}
	return true
}

func (s *stallingStore) Apply(ctx context.Context, p projections.Projection, e domain.Event) (bool, error) {
	if s.stalled(p) {
		<-ctx.Done()
		return false, ctx.Err()
	}
	return s.recordingStore.Apply(ctx, p, e)
}

func (s *stallingStore) ApplyProjections(ctx context.Context, ps []projections.Projection, events []domain.Event) ([][]projections.ApplyResult, error) {
	if s.stalled(ps...) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.recordingStore.ApplyProjections(ctx, ps, events)
}

// Switching from the separate workers (one group per projection) to the
// combined worker (a new group, reading from the oldest offset) applies
// nothing twice: the per-projection checkpoints make every event already
// applied a skip.
func TestSwitchFromSeparateToCombinedAppliesNothingTwice(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.seedAndSession(t, 1500)
	sep := newRecordingStore(r.store)
	ws := r.startBoth(t, &stallingStore{recordingStore: sep, after: 300}, randomSuffix(), nil)
	eventually.True(t, 60*time.Second, "the separate workers to be under way", func() bool {
		return len(sep.ids(projections.History)) >= 300 && len(sep.ids(projections.Balances)) >= 300
	})
	for _, w := range ws {
		w.stop()
	}
	head := r.head(t)
	for _, p := range projections.All {
		if n := int64(len(sep.ids(p))); n >= head {
			t.Fatalf("%s applied all %d events before the switch; the test proves nothing", p, n)
		}
	}

	comb := newRecordingStore(r.store)
	w := r.startCombined(t, comb, projector.CombinedConsumerGroup+"-"+randomSuffix(), nil)
	r.waitCaughtUp(t, 120*time.Second)
	if s := w.Stats(); s.Skipped == 0 || s.Applied == 0 {
		t.Errorf("the combined worker applied %d and skipped %d; want both (it starts from the oldest offset)", s.Applied, s.Skipped)
	}
	r.checkOnce(t, sep, comb)
	r.checkRebuild(t)
}
