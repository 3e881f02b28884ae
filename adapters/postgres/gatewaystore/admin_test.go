package gatewaystore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// TestRotateAPIKeyConcurrently: of concurrent rotations of one key exactly
// one issues a replacement; the others are told it was rotated.
func TestRotateAPIKeyConcurrently(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	gw := gatewaystore.NewGateway(pool)
	ctx := context.Background()
	if _, _, err := gw.AddClient(ctx, gateway.Client{ID: "c1", Name: "C", Environment: "production", Plan: "standard"}); err != nil {
		t.Fatal(err)
	}
	k, err := gw.IssueAPIKey(ctx, gateway.KeySpec{ClientID: "c1", Scopes: []string{gateway.ScopeLaunch}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		ok, dups int
	)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := gw.RotateAPIKey(ctx, gateway.RotateSpec{ClientID: "c1", KeyID: k.ID, Grace: time.Hour})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, gateway.ErrKeyAlreadyRotated):
				dups++
			default:
				t.Errorf("rotate: %v", err)
			}
		}()
	}
	wg.Wait()
	if ok != 1 || dups != n-1 {
		t.Fatalf("%d rotations succeeded and %d were refused, want 1 and %d", ok, dups, n-1)
	}
	keys, err := gw.ListAPIKeys(ctx, "c1")
	if err != nil || len(keys) != 2 {
		t.Fatalf("keys %+v (%v), want the old one and one replacement", keys, err)
	}
}

// TestAPIKeyLifecycle: given a key, when it expires or is revoked, then it
// no longer authenticates; a key of another client is not found. Keys
// expire on the gateway's key clock, which moves only when the test moves
// it, so the expiry is checked to the microsecond however slow the machine.
func TestAPIKeyLifecycle(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	now := time.Now().Truncate(time.Second) // a whole second: the database keeps microseconds
	gw := gatewaystore.NewGateway(pool).WithKeyClock(func() time.Time { return now })
	ctx := context.Background()
	for _, id := range []string{"a", "b"} {
		if _, _, err := gw.AddClient(ctx, gateway.Client{ID: id, Name: id, Environment: "sandbox", Plan: "sandbox"}); err != nil {
			t.Fatal(err)
		}
	}
	const ttl = 1500 * time.Millisecond
	soon := now.Add(ttl)
	expiring, err := gw.IssueAPIKey(ctx, gateway.KeySpec{ClientID: "a", Scopes: []string{gateway.ScopeLaunch}, ExpiresAt: &soon})
	if err != nil {
		t.Fatal(err)
	}
	p, err := gw.AuthenticateKey(ctx, gateway.HashKey(expiring.Secret))
	if err != nil || p.ClientID != "a" || p.Plan != "sandbox" || p.Environment != "sandbox" || p.KeyID != expiring.ID {
		t.Fatalf("principal %+v (%v)", p, err)
	}
	now = now.Add(ttl - time.Microsecond)
	if _, err := gw.AuthenticateKey(ctx, gateway.HashKey(expiring.Secret)); err != nil {
		t.Fatalf("the key stopped working a microsecond before its expiry: %v", err)
	}
	now = now.Add(time.Microsecond)
	if _, err := gw.AuthenticateKey(ctx, gateway.HashKey(expiring.Secret)); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("the key at its expiry: %v, want ErrNotFound", err)
	}
	if _, err := gw.GetAPIKey(ctx, "b", expiring.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("another client's key: %v", err)
	}
	if _, err := gw.RevokeAPIKey(ctx, "b", expiring.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("revoke another client's key: %v", err)
	}
	if _, _, err := gw.RotateAPIKey(ctx, gateway.RotateSpec{ClientID: "a", KeyID: expiring.ID}); !errors.Is(err, gateway.ErrKeyNotActive) {
		t.Fatalf("rotate an expired key: %v", err)
	}
}

// TestUsageConcurrentFlushes: flushes of several processes for the same
// rows add up.
func TestUsageConcurrentFlushes(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	u := gatewaystore.NewUsage(pool)
	ctx := context.Background()
	minute := time.Date(2026, 3, 14, 15, 9, 0, 0, time.UTC)
	rows := []gateway.UsageCount{
		{ClientID: "c", KeyID: "k1", Minute: minute, StatusClass: 2, Requests: 3},
		{ClientID: "c", KeyID: "k2", Minute: minute, StatusClass: 4, Requests: 1},
		{ClientID: "c", KeyID: "k1", Minute: minute.Add(time.Minute), StatusClass: 5, Requests: 2},
	}
	const flushes = 6
	var wg sync.WaitGroup
	for range flushes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := u.AddUsage(ctx, rows, map[string]time.Time{"k1": minute}); err != nil {
				t.Errorf("add usage: %v", err)
			}
		}()
	}
	wg.Wait()
	b, err := u.Usage(ctx, gateway.UsageQuery{ClientID: "c", From: minute, To: minute.Add(time.Hour), Granularity: gateway.GranularityHour})
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 1 || b[0].Requests != 6*flushes || b[0].ByClass[2] != 3*flushes || b[0].ByClass[4] != flushes ||
		b[0].ByClass[5] != 2*flushes {
		t.Fatalf("buckets %+v", b)
	}
	k2, err := u.Usage(ctx, gateway.UsageQuery{ClientID: "c", KeyID: "k2", From: minute, To: minute.Add(time.Hour), Granularity: gateway.GranularityMinute})
	if err != nil || len(k2) != 1 || k2[0].Requests != flushes {
		t.Fatalf("k2 %+v %v", k2, err)
	}
}
