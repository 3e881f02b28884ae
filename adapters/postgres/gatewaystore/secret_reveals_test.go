package gatewaystore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// TestClientSecretReveals: a reveal answers the sealed secret unchanged and
// records who, from where, when and why; the trail is the client's own,
// newest first, paged; a reveal that shows nothing records nothing; the
// trail cannot be changed or emptied.
func TestClientSecretReveals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pgtest.NewDatabase(t)
	gw := gatewaystore.NewGateway(pool)
	lc, err := gatewaystore.NewLaunchClients(pool, slBox(t, 3))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"acme", "beta", "bare"} {
		if _, err := gw.CreateClient(ctx, id, id, "production"); err != nil {
			t.Fatal(err)
		}
	}
	secret, err := lc.IssueClientSecret(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lc.IssueClientSecret(ctx, "beta"); err != nil {
		t.Fatal(err)
	}
	count := func(client string) int64 {
		t.Helper()
		var n int64
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM client_secret_reveals WHERE client_id = $1`, client).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	t0 := time.Date(2030, 1, 2, 3, 4, 5, 678_000_000, time.UTC)
	want := gateway.SecretReveal{ClientID: "acme", RevealedAt: t0, Actor: "admin-token:0123456789ab",
		RemoteAddr: "198.51.100.4", UserAgent: "curl/8.5", Reason: "support ticket 7"}
	got, rec, err := lc.RevealClientSecret(ctx, want)
	if err != nil || got != secret {
		t.Fatalf("reveal: %q, %v; want %q", got, err, secret)
	}
	if rec.ID == 0 || !rec.RevealedAt.Equal(t0) {
		t.Fatalf("record %+v", rec)
	}
	want.ID, want.RevealedAt = rec.ID, rec.RevealedAt
	if rec != want {
		t.Fatalf("record %+v, want %+v", rec, want)
	}
	got, second, err := lc.RevealClientSecret(ctx, gateway.SecretReveal{ClientID: "acme", RevealedAt: t0.Add(time.Hour), Actor: want.Actor})
	if err != nil || got != secret {
		t.Fatalf("second reveal: %q, %v", got, err)
	}
	if _, _, err := lc.RevealClientSecret(ctx, gateway.SecretReveal{ClientID: "beta", RevealedAt: t0, Actor: want.Actor}); err != nil {
		t.Fatal(err)
	}
	if l, err := lc.LaunchClient(ctx, "acme"); err != nil || string(l.Secret) != secret {
		t.Fatalf("after revealing, the secret is %q (%v)", l.Secret, err)
	}

	t.Run("trail", func(t *testing.T) {
		list, total, err := lc.ClientSecretReveals(ctx, "acme", 1, 50)
		if err != nil || total != 2 || len(list) != 2 || list[0].ID != second.ID || list[1] != rec {
			t.Fatalf("trail %+v (total %d, %v)", list, total, err)
		}
		list, total, err = lc.ClientSecretReveals(ctx, "acme", 2, 1)
		if err != nil || total != 2 || len(list) != 1 || list[0] != rec {
			t.Fatalf("page 2: %+v (total %d, %v)", list, total, err)
		}
		list, total, err = lc.ClientSecretReveals(ctx, "bare", 1, 50)
		if err != nil || total != 0 || len(list) != 0 {
			t.Fatalf("a client never revealed: %+v (total %d, %v)", list, total, err)
		}
		if _, _, err := lc.ClientSecretReveals(ctx, "nobody", 1, 50); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("unknown client: %v", err)
		}
	})

	t.Run("nothing shown, nothing recorded", func(t *testing.T) {
		if _, _, err := lc.RevealClientSecret(ctx, gateway.SecretReveal{ClientID: "bare", RevealedAt: t0, Actor: "a"}); !errors.Is(err, gateway.ErrNoClientSecret) {
			t.Fatalf("client without a secret: %v", err)
		}
		if _, _, err := lc.RevealClientSecret(ctx, gateway.SecretReveal{ClientID: "nobody", RevealedAt: t0, Actor: "a"}); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("unknown client: %v", err)
		}
		// Under another master key the secret does not open.
		other, err := gatewaystore.NewLaunchClients(pool, slBox(t, 4))
		if err != nil {
			t.Fatal(err)
		}
		before := count("acme")
		if s, _, err := other.RevealClientSecret(ctx, gateway.SecretReveal{ClientID: "acme", RevealedAt: t0, Actor: "a"}); err == nil {
			t.Fatalf("opened under another key: %q", s)
		}
		if n := count("acme"); n != before || count("bare") != 0 {
			t.Fatalf("refused reveals were recorded: acme has %d (was %d), bare %d", n, before, count("bare"))
		}
	})

	t.Run("append-only", func(t *testing.T) {
		for _, stmt := range []string{
			`UPDATE client_secret_reveals SET reason = 'rewritten' WHERE client_id = 'acme'`,
			`DELETE FROM client_secret_reveals WHERE client_id = 'acme'`,
			`TRUNCATE client_secret_reveals`,
		} {
			if _, err := pool.Exec(ctx, stmt); err == nil {
				t.Errorf("%s: accepted", stmt)
			}
		}
		if n := count("acme"); n != 2 {
			t.Fatalf("acme's trail has %d rows, want 2", n)
		}
	})
}
