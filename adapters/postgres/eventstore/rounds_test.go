package eventstore_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/postgres/storetest"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/commands/ledgertest"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// setClock is a commands.Clock the test moves.
type setClock struct{ now atomic.Pointer[time.Time] }

func (c *setClock) Now() time.Time  { return *c.now.Load() }
func (c *setClock) set(t time.Time) { c.now.Store(&t) }

// The stale-round finder returns the open rounds past their provider's
// protocol limit, oldest first, and nothing else; its lock lets one job
// work at a time.
func TestStaleRounds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDatabase(t)
	if _, err := pool.Exec(ctx, `INSERT INTO providers (id, name, secret, wallet_protocol, wallet_public_key)
		VALUES ('cal', 'Caleta', 's', 'caleta', 'key'), ('own', 'Own', 's', 'pitboss', '')`); err != nil {
		t.Fatal(err)
	}
	l, _ := storetest.StartLedger(t, pool, eventstore.LedgerConfig{})
	clock := &setClock{}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock.set(t0)
	h := commands.NewHandler(l, clock, ledgertest.UUIDs{})
	client := storetest.UID("c")
	deposit(t, h, client, "p1", "100.00")
	bet := func(provider, tx, round string, closed bool) {
		t.Helper()
		g := domain.GameTx{Client: client, Player: "p1", Provider: provider, Round: round, ExternalTxID: tx,
			Currency: eur, RoundClosed: closed}
		if _, err := h.PlaceBet(ctx, g, domain.FromMinor(100, eur)); err != nil {
			t.Fatal(err)
		}
	}
	bet("cal", "b1", "r1", false)
	bet("own", "b2", "r2", false)
	bet("cal", "b3", "r3", true)
	clock.set(t0.Add(47 * time.Hour))
	bet("cal", "b4", "r4", false)

	s := eventstore.NewRounds(pool)
	rounds := func(ages map[string]time.Duration, now time.Time) []string {
		t.Helper()
		got, err := s.StaleRounds(ctx, ages, now, 10)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range got {
			if r.Client != client || r.Wallet != domain.PlayerWallet(client, "p1", eur) {
				t.Fatalf("round %+v", r)
			}
			out = append(out, r.Provider+"/"+r.Round+"/"+r.After.String())
		}
		return out
	}
	tests := []struct {
		name string
		ages map[string]time.Duration
		now  time.Time
		want []string
	}{
		{"Caleta's 48 hours, the others off", gateway.RoundAutoCloseAges(0), t0.Add(48 * time.Hour), []string{"cal/r1/48h0m0s"}},
		{"a second short", gateway.RoundAutoCloseAges(0), t0.Add(48*time.Hour - time.Second), nil},
		{"a default for the others", gateway.RoundAutoCloseAges(24 * time.Hour), t0.Add(48 * time.Hour),
			[]string{"cal/r1/48h0m0s", "own/r2/24h0m0s"}},
		{"all due, oldest first", gateway.RoundAutoCloseAges(0), t0.Add(96 * time.Hour), []string{"cal/r1/48h0m0s", "cal/r4/48h0m0s"}},
		{"no limit at all", map[string]time.Duration{}, t0.Add(96 * time.Hour), nil},
	}
	for _, tc := range tests {
		if got := rounds(tc.ages, tc.now); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}

	// Closed, r1 is not found again.
	clock.set(t0.Add(48 * time.Hour))
	stale, err := s.StaleRounds(ctx, gateway.RoundAutoCloseAges(0), clock.Now(), 10)
	if err != nil || len(stale) != 1 {
		t.Fatalf("%v %v", stale, err)
	}
	if _, err := h.CloseRound(ctx, stale[0]); err != nil {
		t.Fatal(err)
	}
	if got := rounds(gateway.RoundAutoCloseAges(0), t0.Add(96*time.Hour)); !slices.Equal(got, []string{"cal/r4/48h0m0s"}) {
		t.Errorf("after the close: %v", got)
	}

	ran, err := s.Exclusive(ctx, func(ctx context.Context) error {
		again, err := s.Exclusive(ctx, func(context.Context) error { t.Error("ran while the lock was held"); return nil })
		if err != nil || again {
			t.Errorf("second Exclusive: ran %v, %v", again, err)
		}
		return nil
	})
	if err != nil || !ran {
		t.Fatalf("Exclusive: ran %v, %v", ran, err)
	}
	if ran, err := s.Exclusive(ctx, func(context.Context) error { return nil }); err != nil || !ran {
		t.Fatalf("Exclusive after release: ran %v, %v", ran, err)
	}
}
