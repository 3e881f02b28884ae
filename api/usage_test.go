package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/internal/eventually"
)

type admUsage struct {
	ClientID    string  `json:"client_id"`
	KeyID       *string `json:"key_id"`
	From        string  `json:"from"`
	To          string  `json:"to"`
	Granularity string  `json:"granularity"`
	Requests    int64   `json:"requests"`
	ByStatus    struct {
		C2 int64 `json:"2xx"`
		C3 int64 `json:"3xx"`
		C4 int64 `json:"4xx"`
		C5 int64 `json:"5xx"`
	} `json:"by_status"`
	Buckets []struct {
		Start    string `json:"start"`
		Requests int64  `json:"requests"`
		C2       int64  `json:"2xx"`
		C4       int64  `json:"4xx"`
	} `json:"buckets"`
}

// bucketsOf renders buckets as "start=requests(2xx/4xx)" for comparison.
func (u admUsage) bucketsOf() []string {
	var out []string
	for _, b := range u.Buckets {
		out = append(out, fmt.Sprintf("%s=%d(%d/%d)", b.Start, b.Requests, b.C2, b.C4))
	}
	return out
}

// TestUsage: requests are counted per key, minute and status class,
// flushed, and read back by the client and by the admin API in minute,
// hour and day buckets.
func TestUsage(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{AdminToken: admToken})
	t0 := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	h.Clock.Set(t0)
	clientID, key1 := admNewClient(t, h, "sandbox", "", gateway.AllScopes...)
	key2 := admIssueKey(t, h, clientID, gateway.ScopeWalletRead)
	otherID, keyB := admNewClient(t, h, "sandbox", "", gateway.ScopeWalletRead)

	get := func(key string) { h.Call(http.MethodGet, "/api/v1/wallet/balance", key, nil) }
	// 15:09: key1 3x 200, a 404 and a 400; key2 a 403
	for range 3 {
		get(key1.Key)
	}
	h.Call(http.MethodGet, "/api/v1/nothing", key1.Key, nil)
	h.Call(http.MethodPost, "/api/v1/transactions", key1.Key, "{")
	h.Call(http.MethodPost, "/api/v1/game/launch", key2.Key, map[string]any{})
	// 15:10: key2 2x 200
	h.Clock.Advance(time.Minute)
	get(key2.Key)
	get(key2.Key)
	// 16:05: key1 once; the other client once
	h.Clock.Advance(55 * time.Minute)
	get(key1.Key)
	get(keyB.Key)
	if err := h.Meter.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}

	read := func(t *testing.T, path, key string, q url.Values) admUsage {
		t.Helper()
		if key == "" {
			return apitest.Data[admUsage](t, h.Admin(http.MethodGet, path+"?"+q.Encode(), nil))
		}
		return apitest.Data[admUsage](t, h.Call(http.MethodGet, path+"?"+q.Encode(), key, nil))
	}
	span := func(g string) url.Values {
		return url.Values{"granularity": {g}, "from": {"2026-03-14T15:00:00Z"}, "to": {"2026-03-14T17:00:00Z"}}
	}
	tests := []struct {
		name, path, key string
		q               url.Values
		want            []string
		total           int64
	}{
		{"minutes", "/api/v1/usage", key1.Key, span("minute"),
			[]string{"2026-03-14T15:09:00Z=6(3/3)", "2026-03-14T15:10:00Z=2(2/0)", "2026-03-14T16:05:00Z=1(1/0)"}, 9},
		{"hours", "/api/v1/usage", key2.Key, span("hour"),
			[]string{"2026-03-14T15:00:00Z=8(5/3)", "2026-03-14T16:00:00Z=1(1/0)"}, 9},
		{"days", "/api/v1/usage", key1.Key, span("day"), []string{"2026-03-14T00:00:00Z=9(6/3)"}, 9},
		{"one key", "/api/v1/usage", key1.Key, func() url.Values { v := span("minute"); v.Set("key_id", key2.ID); return v }(),
			[]string{"2026-03-14T15:09:00Z=1(0/1)", "2026-03-14T15:10:00Z=2(2/0)"}, 3},
		{"default range: the last 24 hours by hour", "/api/v1/usage", key1.Key, url.Values{},
			[]string{"2026-03-14T15:00:00Z=8(5/3)", "2026-03-14T16:00:00Z=1(1/0)"}, 9},
		{"another client sees its own", "/api/v1/usage", keyB.Key, span("hour"), []string{"2026-03-14T16:00:00Z=1(1/0)"}, 1},
		{"admin", "/admin/v1/clients/" + clientID + "/usage", "", span("hour"),
			[]string{"2026-03-14T15:00:00Z=8(5/3)", "2026-03-14T16:00:00Z=1(1/0)"}, 9},
		{"admin, other client", "/admin/v1/clients/" + otherID + "/usage", "", span("day"), []string{"2026-03-14T00:00:00Z=1(1/0)"}, 1},
		{"rounded to the granularity", "/api/v1/usage", key1.Key,
			url.Values{"granularity": {"hour"}, "from": {"2026-03-14T15:59:59Z"}, "to": {"2026-03-14T16:00:01Z"}},
			[]string{"2026-03-14T15:00:00Z=8(5/3)", "2026-03-14T16:00:00Z=1(1/0)"}, 9},
		{"an empty range", "/api/v1/usage", key1.Key, url.Values{"from": {"2026-03-13"}, "to": {"2026-03-14"}}, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := read(t, tc.path, tc.key, tc.q)
			got := u.bucketsOf()
			if len(got) != len(tc.want) || u.Requests != tc.total || u.ByStatus.C2+u.ByStatus.C4 != tc.total {
				t.Fatalf("buckets %v total %d %+v, want %v total %d", got, u.Requests, u.ByStatus, tc.want, tc.total)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("buckets %v, want %v", got, tc.want)
				}
			}
		})
	}

	bad := []struct {
		name  string
		q     url.Values
		field string
	}{
		{"granularity", url.Values{"granularity": {"week"}}, "granularity"},
		{"from", url.Values{"from": {"yesterday"}}, "from"},
		{"to", url.Values{"to": {"2026-13-01"}}, "to"},
		{"from after to", url.Values{"from": {"2026-03-15"}, "to": {"2026-03-14"}}, "from"},
		{"too many buckets", url.Values{"granularity": {"minute"}, "from": {"2026-03-12"}, "to": {"2026-03-14"}}, "from"},
		{"key id", url.Values{"key_id": {"a:b"}}, "key_id"},
	}
	for _, tc := range bad {
		t.Run("bad "+tc.name, func(t *testing.T) {
			e := apitest.WantError(t, h.Call(http.MethodGet, "/api/v1/usage?"+tc.q.Encode(), key1.Key, nil), http.StatusBadRequest, wire.CodeInvalidRequest)
			if e.Error.Details["field"] != tc.field {
				t.Fatalf("details %v", e.Error.Details)
			}
		})
	}
	t.Run("admin: unknown client", func(t *testing.T) {
		apitest.WantError(t, h.Admin(http.MethodGet, "/admin/v1/clients/nobody/usage", nil), http.StatusNotFound, wire.CodeNotFound)
	})
	t.Run("flushes add up", func(t *testing.T) {
		// the reads above were requests of their own
		if err := h.Meter.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		before := read(t, "/admin/v1/clients/"+otherID+"/usage", "", span("day")).Requests
		get(keyB.Key)
		get(keyB.Key)
		if err := h.Meter.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		if after := read(t, "/admin/v1/clients/"+otherID+"/usage", "", span("day")).Requests; after != before+2 {
			t.Fatalf("after another flush: %d requests, want %d", after, before+2)
		}
	})
}

// switchStore sends AddUsage to one of two real stores: the one on a
// database that does not answer, or the real one.
type switchStore struct {
	mu        sync.Mutex
	broken    bool
	bad, good gateway.UsageStore
}

func (s *switchStore) cur() gateway.UsageStore {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken {
		return s.bad
	}
	return s.good
}

func (s *switchStore) AddUsage(ctx context.Context, c []gateway.UsageCount, l map[string]time.Time) error {
	return s.cur().AddUsage(ctx, c, l)
}

func (s *switchStore) Usage(ctx context.Context, q gateway.UsageQuery) ([]gateway.UsageBucket, error) {
	return s.cur().Usage(ctx, q)
}

func unreachablePool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), "postgres://pitboss:pitboss@127.0.0.1:1/nothing?sslmode=disable&connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// TestUsageMeter: a failed flush keeps its counts for the next one; Run
// flushes periodically and once more when it stops.
func TestUsageMeter(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	good := gatewaystore.NewUsage(pool)
	minute := time.Date(2026, 3, 14, 15, 9, 0, 0, time.UTC)
	total := func(t *testing.T, client string) int64 {
		t.Helper()
		b, err := good.Usage(t.Context(), gateway.UsageQuery{ClientID: client, From: minute, To: minute.Add(time.Hour), Granularity: "hour"})
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, x := range b {
			n += x.Requests
		}
		return n
	}

	t.Run("a failed flush loses nothing", func(t *testing.T) {
		s := &switchStore{broken: true, bad: gatewaystore.NewUsage(unreachablePool(t)), good: good}
		m := api.NewUsageMeter(s, time.Hour, nil)
		m.Record("c-fail", "k1", minute.Add(time.Second), 200)
		m.Record("c-fail", "k1", minute.Add(2*time.Second), 500)
		if err := m.Flush(t.Context()); err == nil {
			t.Fatal("flush to an unreachable database succeeded")
		}
		m.Record("c-fail", "k1", minute.Add(3*time.Second), 200)
		if m.Pending() != 2 {
			t.Fatalf("pending %d, want the 2 counters (200 and 500) kept", m.Pending())
		}
		s.mu.Lock()
		s.broken = false
		s.mu.Unlock()
		if err := m.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		if n := total(t, "c-fail"); n != 3 {
			t.Fatalf("stored %d requests, want 3", n)
		}
	})
	run := func(m *api.UsageMeter) (stop func(t *testing.T)) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- m.Run(ctx) }()
		return func(t *testing.T) {
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Run("run flushes periodically", func(t *testing.T) {
		m := api.NewUsageMeter(good, 50*time.Millisecond, nil)
		stop := run(m)
		defer stop(t)
		m.Record("c-tick", "k1", minute, 200)
		eventually.True(t, 30*time.Second, "a periodic flush", func() bool { return total(t, "c-tick") == 1 })
	})
	t.Run("run flushes once more when it stops", func(t *testing.T) {
		m := api.NewUsageMeter(good, time.Hour, nil)
		stop := run(m)
		m.Record("c-stop", "k1", minute, 200)
		m.Record("c-stop", "k2", minute, 404)
		stop(t)
		if n := total(t, "c-stop"); n != 2 {
			t.Fatalf("after stop: %d requests stored, want 2", n)
		}
	})
}
