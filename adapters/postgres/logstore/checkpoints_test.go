package logstore_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/logstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/ledgerlog"
)

type key struct{ priv ed25519.PrivateKey }

func (k key) SigningKey(context.Context) (string, ed25519.PrivateKey, error) {
	return "k1", k.priv, nil
}

// TestSignDue signs each grown log's checkpoint once per interval: a C2SP
// note under the log's origin that opens with the key's verifier key and
// states the stored tree.
func TestSignDue(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	ctx := context.Background()
	if _, err := eventstore.SeedEvents(ctx, pool, eventstore.SeedOptions{Events: 3000, Clients: 2, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	b := logstore.NewBuilder(pool, 1000, nil)
	if _, err := b.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	st := logstore.New(pool)
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	n, err := st.SignDue(ctx, "pitboss.test/ledger", key{priv}, time.Minute, now)
	if err != nil || n != 3 { // the platform's and two clients'
		t.Fatalf("signed %d (%v), want 3", n, err)
	}
	if n, _ := st.SignDue(ctx, "pitboss.test/ledger", key{priv}, time.Minute, now); n != 0 {
		t.Fatalf("signed %d again with nothing new", n)
	}
	for {
		m, err := b.Pass(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m == 0 {
			break
		}
	}
	if n, _ := st.SignDue(ctx, "pitboss.test/ledger", key{priv}, time.Minute, now.Add(30*time.Second)); n != 0 {
		t.Fatalf("signed %d within the interval", n)
	}
	if n, _ := st.SignDue(ctx, "pitboss.test/ledger", key{priv}, time.Minute, now.Add(time.Minute)); n != 3 {
		t.Fatalf("signed %d after the interval, want 3", n)
	}
	tree, err := st.Tree(ctx, ledgerlog.PlatformLog)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := st.LatestCheckpoint(ctx, ledgerlog.PlatformLog)
	if err != nil {
		t.Fatal(err)
	}
	vkey, err := ledgerlog.VerifierKey("pitboss.test/ledger", pub)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := ledgerlog.Open(cp.Note, vkey)
	if err != nil {
		t.Fatal(err)
	}
	if got.Size != tree.Size || got.Root != tree.Root || cp.Size != tree.Size || got.Origin != "pitboss.test/ledger" {
		t.Fatalf("checkpoint %+v, tree %+v", got, tree)
	}
	if _, err := st.CheckpointOfSize(ctx, ledgerlog.PlatformLog, 1000); err != nil {
		t.Fatalf("the first checkpoint: %v", err)
	}
}
