package gateway

import (
	"context"
	"hash/maphash"
	"sync"
	"time"
)

// MemoryRateStore keeps every key's window in this process's memory: the
// default store. With N API processes a key may make up to N times its
// limit; PITBOSS_RATE_LIMIT_STORE=postgres shares the windows instead.
// Memory is bounded by the number of keys in use: ended windows are swept
// as shards grow, without a goroutine of their own.
type MemoryRateStore struct {
	seed   maphash.Seed
	shards [64]rateShard
}

type rateShard struct {
	mu        sync.Mutex
	windows   map[string]rateWindow
	nextSweep int
}

type rateWindow struct {
	resetAt time.Time
	count   int
}

var _ RateStore = (*MemoryRateStore)(nil)

// NewMemoryRateStore returns an empty store.
func NewMemoryRateStore() *MemoryRateStore {
	m := &MemoryRateStore{seed: maphash.MakeSeed()}
	for i := range m.shards {
		m.shards[i].windows = map[string]rateWindow{}
		m.shards[i].nextSweep = 1024
	}
	return m
}

// Take counts one request of key at now. It never fails.
func (m *MemoryRateStore) Take(_ context.Context, key string, tier RateTier, now time.Time) (RateDecision, error) {
	sh := &m.shards[maphash.String(m.seed, key)%uint64(len(m.shards))]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	w, ok := sh.windows[key]
	switch {
	case !ok || !w.resetAt.After(now):
		w = rateWindow{resetAt: now.Add(tier.Window), count: 1}
		if !ok && len(sh.windows) >= sh.nextSweep {
			sh.sweep(now)
		}
	default:
		// A tier whose window was shortened since the window began ends
		// it no later than the new length allows.
		if end := now.Add(tier.Window); w.resetAt.After(end) {
			w.resetAt = end
		}
		if w.count <= tier.Limit { // stop counting past the limit: no overflow
			w.count++
		}
	}
	sh.windows[key] = w
	return tier.Decide(w.count, w.resetAt), nil
}

// sweep drops ended windows, and sweeps again only when the shard has
// doubled: amortised constant time per request.
func (sh *rateShard) sweep(now time.Time) {
	for k, w := range sh.windows {
		if !w.resetAt.After(now) {
			delete(sh.windows, k)
		}
	}
	sh.nextSweep = max(1024, 2*len(sh.windows))
}
