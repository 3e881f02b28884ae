package catalogsync_test

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/catalogsync"
	"github.com/pitboss/pitboss/gateway"
)

type fakeStore struct {
	held   bool
	provs  []gateway.Provider
	kinds  map[string]string
	listed error
}

func (f *fakeStore) ExclusiveCatalogSync(ctx context.Context, fn func(context.Context) error) (bool, error) {
	if f.held {
		return false, nil
	}
	return true, fn(ctx)
}

func (f *fakeStore) AllProviders(context.Context) ([]gateway.Provider, error) {
	return f.provs, f.listed
}

func (f *fakeStore) ProviderRoute(_ context.Context, id string) (gateway.ProviderRoute, error) {
	return gateway.ProviderRoute{ProviderID: id, Kind: f.kinds[id]}, nil
}

type fakeSyncer struct {
	mu    sync.Mutex
	calls []string
	fail  map[string]bool
	ticks chan struct{}
}

func (f *fakeSyncer) Sync(_ context.Context, id string, dryRun bool) (gateway.CatalogSyncPlan, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if dryRun {
		return gateway.CatalogSyncPlan{}, errors.New("the job never dry-runs")
	}
	f.calls = append(f.calls, id)
	if f.ticks != nil {
		f.ticks <- struct{}{}
	}
	if f.fail[id] {
		return gateway.CatalogSyncPlan{}, errors.New("provider down")
	}
	return gateway.CatalogSyncPlan{Provider: id, Listed: 3, Added: []gateway.GameChange{{}}}, nil
}

func newStore() *fakeStore {
	return &fakeStore{
		provs: []gateway.Provider{{ID: "cal-a", Enabled: true}, {ID: "cal-down", Enabled: true}, {ID: "cal-off"},
			{ID: "acme", Enabled: true}, {ID: "demo", Enabled: true}},
		kinds: map[string]string{"cal-a": gateway.ProviderKindCaleta, "cal-down": gateway.ProviderKindCaleta,
			"cal-off": gateway.ProviderKindCaleta, "acme": gateway.ProviderKindJSON, "demo": gateway.ProviderKindDemo},
	}
}

// TestTick: one tick syncs every enabled provider whose kind has a game
// list, a failing one not holding back the next; another instance holding
// the lock makes it skip.
func TestTick(t *testing.T) {
	t.Parallel()
	store, syncer := newStore(), &fakeSyncer{fail: map[string]bool{"cal-down": true}}
	job, err := catalogsync.NewWithConfig(store, syncer, catalogsync.Config{Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	res, err := job.Tick(t.Context())
	if err != nil || !res.Ran || !reflect.DeepEqual(res.Synced, []string{"cal-a"}) || !reflect.DeepEqual(res.Failed, []string{"cal-down"}) {
		t.Fatalf("tick %+v, %v", res, err)
	}
	if !reflect.DeepEqual(syncer.calls, []string{"cal-a", "cal-down"}) {
		t.Fatalf("synced %v", syncer.calls)
	}
	store.held = true
	if res, err := job.Tick(t.Context()); err != nil || res.Ran || len(syncer.calls) != 2 {
		t.Fatalf("with the lock held elsewhere: %+v, %v, %d syncs", res, err, len(syncer.calls))
	}
	store.held, store.listed = false, errors.New("database down")
	if _, err := job.Tick(t.Context()); err == nil {
		t.Fatal("a tick that could not list the providers succeeded")
	}
}

// TestRun: the job syncs at once, then every interval, until its context
// ends.
func TestRun(t *testing.T) {
	t.Parallel()
	store := newStore()
	store.provs = store.provs[:1]
	syncer := &fakeSyncer{ticks: make(chan struct{})}
	job, err := catalogsync.NewWithConfig(store, syncer, catalogsync.Config{Interval: catalogsync.MinInterval})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- job.Run(ctx) }()
	<-syncer.ticks // the first tick, at once
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
}

func TestConfig(t *testing.T) {
	t.Parallel()
	for _, d := range []time.Duration{0, time.Minute, 8 * 24 * time.Hour} {
		if _, err := catalogsync.NewWithConfig(newStore(), &fakeSyncer{}, catalogsync.Config{Interval: d}); err == nil {
			t.Errorf("interval %s accepted", d)
		}
	}
	if _, err := catalogsync.NewWithConfig(nil, &fakeSyncer{}, catalogsync.Config{Interval: time.Hour}); err == nil {
		t.Error("no store accepted")
	}
}
