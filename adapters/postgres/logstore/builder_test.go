package logstore_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/logstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/ledgerlog"
	"github.com/pitboss/pitboss/ledgerlog/ledgerlogtest"
)

// tree is the tree tlog grows alone (ledgerlogtest.Tree) and the records
// the proofs check.
type tree struct {
	ledgerlogtest.Tree
	kept map[int64][]byte
}

func (tr *tree) add(t *testing.T, record []byte) {
	if tr.kept == nil {
		tr.kept = map[int64][]byte{}
	}
	if n := tr.Size(); n < 3 || n%9973 == 0 {
		tr.kept[n] = record
	}
	tr.Add(t, record)
}

// TestBuilderRootsEqualTlogs builds the logs of a ledger made by the
// benchmark's generator (1,000,000 events; PITBOSS_LOG_TEST_EVENTS
// changes it) in passes of a batch, and
// checks every tree's root against the root Go's tlog computes alone over
// the exported events — the platform's over every body in position order,
// each client's over its own — and that the stored tiles prove an event's
// inclusion to a reader that checks them against the root.
func TestBuilderRootsEqualTlogs(t *testing.T) {
	t.Parallel()
	events := 1_000_000
	if v := os.Getenv("PITBOSS_LOG_TEST_EVENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("PITBOSS_LOG_TEST_EVENTS=%q", v)
		}
		events = n
	}
	pool, _ := pgtest.NewDatabase(t)
	ctx := context.Background()
	if _, err := eventstore.SeedEvents(ctx, pool, eventstore.SeedOptions{Events: events, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	b := logstore.NewBuilder(pool, 4096, nil)
	for {
		n, err := b.Pass(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}

	// The export: every body in position order.
	rows, err := pool.Query(ctx, `SELECT position, stream_id, body::text FROM events ORDER BY position`)
	if err != nil {
		t.Fatal(err)
	}
	all := &tree{}
	var positions []int64
	byClient := map[string]*tree{}
	for rows.Next() {
		var pos int64
		var stream, body string
		if err := rows.Scan(&pos, &stream, &body); err != nil {
			t.Fatal(err)
		}
		id, err := domain.ParseAccountID(stream)
		if err != nil {
			t.Fatal(err)
		}
		all.add(t, []byte(body))
		positions = append(positions, pos)
		c := byClient[id.Client()]
		if c == nil {
			c = &tree{}
			byClient[id.Client()] = c
		}
		c.add(t, []byte(body))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}

	st := logstore.New(pool)
	check := func(log string, want *tree) {
		t.Helper()
		got, err := st.Tree(ctx, log)
		if err != nil {
			t.Fatal(err)
		}
		if got.Size != want.Size() {
			t.Fatalf("%s: size %d, %d events", log, got.Size, want.Size())
		}
		if root := want.Root(t); got.Root != root {
			t.Fatalf("%s: root %s, tlog's %s", log, got.Root, root)
		}
		hr := tlog.TileHashReader(tlog.Tree{N: got.Size, Hash: got.Root}, st.TileReader(ctx, log))
		for n, rec := range want.kept {
			p, err := tlog.ProveRecord(got.Size, n, hr)
			if err != nil {
				t.Fatalf("%s: prove %d: %v", log, n, err)
			}
			if err := tlog.CheckRecord(p, got.Size, got.Root, n, tlog.RecordHash(rec)); err != nil {
				t.Fatalf("%s: record %d: %v", log, n, err)
			}
		}
	}
	check(ledgerlog.PlatformLog, all)
	if len(byClient) < 2 {
		t.Fatalf("the ledger has %d clients", len(byClient))
	}
	for client, c := range byClient {
		check(ledgerlog.ClientLog(client), c)
	}
	// Leaves map to positions and back.
	for _, leaf := range []int64{0, all.Size() / 2, all.Size() - 1} {
		pos, err := st.Leaf(ctx, ledgerlog.PlatformLog, leaf)
		if err != nil || pos != positions[leaf] {
			t.Fatalf("leaf %d: position %d (%v), want %d", leaf, pos, err, positions[leaf])
		}
		back, err := st.LeafOf(ctx, ledgerlog.PlatformLog, pos)
		if err != nil || back != leaf {
			t.Fatalf("position %d: leaf %d (%v), want %d", pos, back, err, leaf)
		}
	}
	entries, err := st.Entries(ctx, ledgerlog.PlatformLog, 250, 10)
	if err != nil || len(entries) != 10 {
		t.Fatalf("entries: %d (%v)", len(entries), err)
	}
	for i, e := range entries {
		var body string
		if err := pool.QueryRow(ctx, `SELECT body::text FROM events WHERE position = $1`, positions[250+i]).Scan(&body); err != nil {
			t.Fatal(err)
		}
		if string(e) != body {
			t.Fatalf("entry %d is not the event at position %d", 250+i, positions[250+i])
		}
	}
}
