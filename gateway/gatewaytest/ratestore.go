// Package gatewaytest holds the contract suites of package gateway's ports:
// one suite per port, run by every implementation's own tests (the memory
// store in package gateway, the Postgres store in
// adapters/postgres/gatewaystore), so
// that each behaves as the port documents.
package gatewaytest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/pitboss/pitboss/gateway"
)

// RunRateStore runs the gateway.RateStore contract against the stores
// newStore returns: one new store per test, which may share its backing
// (a database) with the others, since every test counts keys of its own.
func RunRateStore(t *testing.T, newStore func(t *testing.T) gateway.RateStore) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, s gateway.RateStore)
	}{
		{"WindowCountsDownThenRefuses", rateWindowCountsDownThenRefuses},
		{"KeysHaveTheirOwnWindows", rateKeysHaveTheirOwnWindows},
		{"NextWindowStartsAtNextRequest", rateNextWindowStartsAtNextRequest},
		{"ShortenedTierEndsWindowEarly", rateShortenedTierEndsWindowEarly},
		{"LengthenedTierKeepsWindowEnd", rateLengthenedTierKeepsWindowEnd},
		{"ConcurrentRequestsCountedOnce", rateConcurrentRequestsCountedOnce},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, newStore(t))
		})
	}
}

// t0 is the start of every test's first window; tier allows 3 a minute.
var (
	t0   = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	tier = gateway.RateTier{Name: "t", Limit: 3, Window: time.Minute}
)

// newKey is a key id no other test (or run sharing the database) uses.
func newKey(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "ratekey-" + hex.EncodeToString(b)
}

func take(t *testing.T, s gateway.RateStore, key string, tr gateway.RateTier, at time.Time) gateway.RateDecision {
	t.Helper()
	d, err := s.Take(context.Background(), key, tr, at)
	if err != nil {
		t.Fatalf("take %s at %s: %v", key, at, err)
	}
	return d
}

func want(t *testing.T, d gateway.RateDecision, tr gateway.RateTier, allowed bool, remaining int, reset time.Time) {
	t.Helper()
	if d.Allowed != allowed || d.Remaining != remaining || !d.ResetAt.Equal(reset) || d.Limit != tr.Limit {
		t.Fatalf("decision %+v, want allowed %v, remaining %d, limit %d, reset %s", d, allowed, remaining, tr.Limit, reset)
	}
}

// Given a new key, when requests come within a minute, then the window
// starts at the first, counts down to the limit, and refuses every request
// after it until the window ends.
func rateWindowCountsDownThenRefuses(t *testing.T, s gateway.RateStore) {
	key, reset := newKey(t), t0.Add(time.Minute)
	want(t, take(t, s, key, tier, t0), tier, true, 2, reset)
	want(t, take(t, s, key, tier, t0.Add(10*time.Second)), tier, true, 1, reset)
	want(t, take(t, s, key, tier, t0.Add(20*time.Second)), tier, true, 0, reset)
	for i := range 5 {
		want(t, take(t, s, key, tier, t0.Add(time.Duration(30+i)*time.Second)), tier, false, 0, reset)
	}
}

// Given a key whose window is used up, when another key makes a request,
// then it has a window of its own, starting at its own first request.
func rateKeysHaveTheirOwnWindows(t *testing.T, s gateway.RateStore) {
	used := newKey(t)
	for i := range tier.Limit + 1 {
		take(t, s, used, tier, t0.Add(time.Duration(i)*time.Second))
	}
	want(t, take(t, s, newKey(t), tier, t0.Add(30*time.Second)), tier, true, 2, t0.Add(90*time.Second))
	want(t, take(t, s, used, tier, t0.Add(31*time.Second)), tier, false, 0, t0.Add(time.Minute))
}

// Given a used-up window, when a request comes at or after its end, then a
// new window starts at that request, not at the old window's end.
func rateNextWindowStartsAtNextRequest(t *testing.T, s gateway.RateStore) {
	key := newKey(t)
	for i := range tier.Limit + 2 {
		take(t, s, key, tier, t0.Add(time.Duration(i)*time.Second))
	}
	t1 := t0.Add(time.Minute) // the first window ends exactly here
	want(t, take(t, s, key, tier, t1), tier, true, 2, t1.Add(time.Minute))
	t2 := t1.Add(3 * time.Minute) // long after the second one ended
	want(t, take(t, s, key, tier, t2), tier, true, 2, t2.Add(time.Minute))
}

// Given a running window, when the key's tier is shortened, then the
// window ends no later than the new length allows from now.
func rateShortenedTierEndsWindowEarly(t *testing.T, s gateway.RateStore) {
	key := newKey(t)
	want(t, take(t, s, key, tier, t0), tier, true, 2, t0.Add(time.Minute))
	short := gateway.RateTier{Name: "t", Limit: 3, Window: 10 * time.Second}
	want(t, take(t, s, key, short, t0.Add(time.Second)), short, true, 1, t0.Add(11*time.Second))
}

// Given a running window, when the key's tier is lengthened, then the
// window still ends when it was due to.
func rateLengthenedTierKeepsWindowEnd(t *testing.T, s gateway.RateStore) {
	key := newKey(t)
	want(t, take(t, s, key, tier, t0), tier, true, 2, t0.Add(time.Minute))
	long := gateway.RateTier{Name: "t", Limit: 3, Window: time.Hour}
	want(t, take(t, s, key, long, t0.Add(time.Second)), long, true, 1, t0.Add(time.Minute))
}

// Given a new key, when many requests arrive at once, then each is counted
// once: exactly the limit are allowed.
func rateConcurrentRequestsCountedOnce(t *testing.T, s gateway.RateStore) {
	const n = 16
	key := newKey(t)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		allowed int
		errs    []error
	)
	for range n {
		wg.Go(func() {
			d, err := s.Take(context.Background(), key, tier, t0)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			}
			if d.Allowed {
				allowed++
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("take: %v", errs)
	}
	if allowed != tier.Limit {
		t.Fatalf("%d of %d concurrent requests allowed, want the limit %d", allowed, n, tier.Limit)
	}
	want(t, take(t, s, key, tier, t0.Add(time.Second)), tier, false, 0, t0.Add(time.Minute))
}
