package api_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/api/apitest"
	"github.com/pitboss/pitboss/gateway"
)

// The cost of counting one request, per store: `go test -run XXX -bench
// RateStore ./api/` (docs/keys-and-admin.md has the numbers). keys spreads
// the requests over that many API keys (1: one hot key).
func benchmarkRateStore(b *testing.B, s gateway.RateStore, keys int) {
	tier := gateway.RateTier{Name: "b", Limit: 1 << 30, Window: time.Hour}
	var n atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			key := "key-" + strconv.FormatInt(n.Add(1)%int64(keys), 10)
			if _, err := s.Take(ctx, key, tier, time.Now()); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkRateStore(b *testing.B) {
	pool, _ := pgtest.NewDatabase(b)
	for _, keys := range []int{1, 100} {
		b.Run("memory/keys="+strconv.Itoa(keys), func(b *testing.B) { benchmarkRateStore(b, gateway.NewMemoryRateStore(), keys) })
		b.Run("postgres/keys="+strconv.Itoa(keys), func(b *testing.B) { benchmarkRateStore(b, gatewaystore.NewRateWindows(pool), keys) })
	}
}

// BenchmarkAPIRequest is one authenticated, rate-limited and metered
// request (GET /api/v1/wallet/balance) through the real server, with each
// rate store: what the shared window adds to a whole request.
func BenchmarkAPIRequest(b *testing.B) {
	for _, name := range []string{"memory", "postgres"} {
		b.Run(name, func(b *testing.B) {
			h := apitest.New(b, apitest.Options{AdminToken: admToken, RateTiers: "huge:1000000000/1h", PostgresRateStore: name == "postgres"})
			_, key := admNewClient(b, h, "sandbox", "huge", gateway.ScopeWalletRead)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if rec := h.Call("GET", "/api/v1/wallet/balance", key.Key, nil); rec.Code != 200 {
						b.Errorf("status %d", rec.Code)
						return
					}
				}
			})
		})
	}
}
