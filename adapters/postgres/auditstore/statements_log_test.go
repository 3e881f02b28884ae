package auditstore_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/logstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/ledgerlog"
	"github.com/pitboss/pitboss/ledgerlog/ledgerlogtest"
)

// TestClientLogAt states a client's log at a statement's position — its
// events at or below it and their tree's root, as tlog computes them from
// the bodies — whether the builder has not run yet, has reached the
// position (the root read from the stored tiles) or has not (the events
// after its tree appended to it).
func TestClientLogAt(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	ctx := t.Context()
	if _, err := eventstore.SeedEvents(ctx, pool, eventstore.SeedOptions{Events: 3000, Clients: 2, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	var client string
	if err := pool.QueryRow(ctx, `SELECT min(split_part(stream_id, ':', 2)) FROM events`).Scan(&client); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, `SELECT position, body::text FROM events WHERE split_part(stream_id, ':', 2) = $1
		ORDER BY position`, client)
	if err != nil {
		t.Fatal(err)
	}
	var positions []int64
	var bodies [][]byte
	for rows.Next() {
		var p int64
		var b string
		if err := rows.Scan(&p, &b); err != nil {
			t.Fatal(err)
		}
		positions, bodies = append(positions, p), append(bodies, []byte(b))
	}
	if rows.Err() != nil || len(positions) < 1000 {
		t.Fatalf("%d events of %s (%v)", len(positions), client, rows.Err())
	}
	st := auditstore.NewStatements(pool)
	check := func(t *testing.T, leaf int) {
		t.Helper()
		size, root, err := st.ClientLogAt(ctx, client, positions[leaf])
		want := ledgerlogtest.RootOf(t, bodies[:leaf+1])
		if err != nil || size != int64(leaf+1) || !bytes.Equal(root, want[:]) {
			t.Fatalf("at %d: size %d root %x (%v), want %d %x", positions[leaf], size, root, err, leaf+1, want)
		}
	}
	leaves := []int{0, 255, 256, 600, len(positions) - 1}
	t.Run("no tree yet", func(t *testing.T) {
		for _, l := range leaves {
			check(t, l)
		}
	})
	growLogs(t, logstore.NewBuilder(pool, 1000, nil), 1000, func() {})
	tree, err := logstore.New(pool).Tree(ctx, ledgerlog.ClientLog(client))
	if err != nil || tree.Size < 256 || tree.Size >= int64(len(positions)) {
		t.Fatalf("the client's tree %+v (%v)", tree, err)
	}
	for _, l := range append(leaves, int(tree.Size)-1, int(tree.Size)) {
		t.Run(fmt.Sprintf("leaf %d of a tree of %d", l, tree.Size), func(t *testing.T) { check(t, l) })
	}
	if size, root, err := st.ClientLogAt(ctx, "nobody", 10); err != nil || size != 0 || root != nil {
		t.Fatalf("a client without events: %d %x %v", size, root, err)
	}
}
