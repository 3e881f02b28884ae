package eventstore_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/postgres/storetest"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/commands/ledgertest"
	"github.com/pitboss/pitboss/domain"
)

// TestLedgerContract pins the Postgres writer to the contract every
// commands.Ledger keeps (commands/ledgertest; the memory ledger runs it
// too). Each test gets a fresh database, audited with SQL at its end: the
// hash chain, double entry, account rows against the events, commit order.
func TestLedgerContract(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  eventstore.LedgerConfig
	}{
		{name: "default", cfg: eventstore.LedgerConfig{}},
		// Concurrent operations wait a little for each other, so they share
		// batches: what one does must not leak into another.
		{name: "lingering batches", cfg: eventstore.LedgerConfig{Linger: 5 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ledgertest.Run(t, func(t *testing.T) commands.Ledger {
				pool, _ := pgtest.NewDatabase(t)
				l, err := eventstore.NewLedger(pool, tc.cfg, storetest.Logger(t))
				if err != nil {
					t.Fatal(err)
				}
				storetest.RunLedger(t, l)
				// Registered last, so it runs first: the writer and the
				// database are still there.
				t.Cleanup(func() { checkLedger(t, pool) })
				return l
			})
		})
	}
}

// checkLedger audits the whole store: the hash chain, double entry per
// currency, account rows explained by postings and stream versions, and
// commit order equal to position order.
func checkLedger(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	checkChain(t, pool)
	checkDoubleEntry(t, pool)
	checkAccountsMatchEvents(t, pool)
	checkCommitOrder(t, pool)
}

func checkChain(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	rows, err := pool.Query(context.Background(),
		`SELECT position, body::text, prev_hash, hash, stream_id, stream_version FROM events ORDER BY position`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	prev, want := domain.GenesisHash, int64(1)
	for rows.Next() {
		var (
			pos, version   int64
			body           string
			prevHash, hash []byte
			stream         string
		)
		if err := rows.Scan(&pos, &body, &prevHash, &hash, &stream, &version); err != nil {
			t.Fatal(err)
		}
		if pos != want {
			t.Fatalf("position %d follows %d: a hole in the chain", pos, want-1)
		}
		if !bytes.Equal(prevHash, prev) {
			t.Fatalf("position %d: prev_hash does not match the hash of %d", pos, pos-1)
		}
		if got := domain.ChainHash(prev, []byte(body)); !bytes.Equal(got, hash) {
			t.Fatalf("position %d: hash does not match sha256(prev || body)", pos)
		}
		ev, err := domain.DecodeBody([]byte(body))
		if err != nil {
			t.Fatalf("position %d: %v", pos, err)
		}
		if ev.Position != pos || string(ev.StreamID) != stream || ev.Version != version {
			t.Fatalf("position %d: body says position %d, stream %s v%d; row says %s v%d",
				pos, ev.Position, ev.StreamID, ev.Version, stream, version)
		}
		prev, want = hash, want+1
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// The same check in SQL, as an auditor without our code would run it.
	var bad int
	if err := pool.QueryRow(context.Background(), `
SELECT count(*) FROM events
 WHERE hash <> sha256(prev_hash || convert_to(body::text, 'UTF8'))`).Scan(&bad); err != nil {
		t.Fatal(err)
	}
	if bad != 0 {
		t.Fatalf("%d events fail sha256(prev_hash || body) in SQL", bad)
	}
}

func checkDoubleEntry(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	if storetest.EventCount(t, pool) == 0 {
		return // a contract test that committed nothing
	}
	rows, err := pool.Query(context.Background(), `
SELECT body->'data'->>'currency', sum((p->>'amount')::numeric)::text, count(*)
  FROM events, json_array_elements(body->'data'->'postings') AS p
 GROUP BY 1 ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	currencies := 0
	for rows.Next() {
		var (
			cur, sum string
			n        int
		)
		if err := rows.Scan(&cur, &sum, &n); err != nil {
			t.Fatal(err)
		}
		currencies++
		if m, err := domain.ParseMoney(sum, domain.MustCurrency(cur)); err != nil || !m.IsZero() {
			t.Errorf("%s: %d postings sum to %s, want 0", cur, n, sum)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if currencies == 0 {
		t.Error("no postings at all: the double-entry check checked nothing")
	}
}

func checkAccountsMatchEvents(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
WITH p AS (
  SELECT p->>'account' AS account, (p->>'amount')::numeric AS amount, e.position
    FROM events e, json_array_elements(e.body->'data'->'postings') AS p
), touched AS (
  SELECT account, position FROM p
  UNION ALL SELECT stream_id, position FROM events
), s AS (
  SELECT stream_id, count(*) AS n, max(stream_version) AS top FROM events GROUP BY stream_id
)
SELECT coalesce(a.account_id, x.account), a.currency, a.balance, a.version, a.last_position,
       coalesce((SELECT sum(amount) FROM p WHERE p.account = x.account), 0)::text,
       coalesce(s.n, 0), coalesce(s.top, 0), x.last
  FROM (SELECT account, max(position) AS last FROM touched GROUP BY account) x
  FULL JOIN accounts a ON a.account_id = x.account
  LEFT JOIN s ON s.stream_id = x.account`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id, sum                 string
			cur                     *string
			balance, version, lastP *int64
			n, top                  int64
			last                    *int64
		)
		if err := rows.Scan(&id, &cur, &balance, &version, &lastP, &sum, &n, &top, &last); err != nil {
			t.Fatal(err)
		}
		if cur == nil {
			t.Errorf("%s has postings or events but no account row", id)
			continue
		}
		if last == nil {
			t.Errorf("account row %s has no events at all", id)
			continue
		}
		m, err := domain.ParseMoney(sum, domain.MustCurrency(*cur))
		if err != nil {
			t.Fatal(err)
		}
		if m.Minor() != *balance {
			t.Errorf("%s: balance %d, postings sum to %s", id, *balance, sum)
		}
		if *version != n || n != top {
			t.Errorf("%s: version %d, stream holds %d events up to version %d", id, *version, n, top)
		}
		if *lastP != *last {
			t.Errorf("%s: last_position %d, last event touching it is %d", id, *lastP, *last)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// checkCommitOrder: the writer's advisory lock makes the transaction id
// order the position order.
func checkCommitOrder(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	var bad int
	if err := pool.QueryRow(context.Background(), `
SELECT count(*) FROM (SELECT tx_id, lag(tx_id) OVER (ORDER BY position) AS prev FROM events) x
 WHERE tx_id < prev`).Scan(&bad); err != nil {
		t.Fatal(err)
	}
	if bad != 0 {
		t.Errorf("%d events have a smaller tx_id than the event before them", bad)
	}
}

func checkStreamVersions(t testing.TB, pool *pgxpool.Pool, stream domain.AccountID, want int64) {
	t.Helper()
	rows, err := pool.Query(context.Background(),
		`SELECT stream_version FROM events WHERE stream_id = $1 ORDER BY stream_version`, string(stream))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	next := int64(1)
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		if v != next {
			t.Fatalf("%s: version %d where %d was due", stream, v, next)
		}
		next++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if next-1 != want {
		t.Errorf("%s holds versions 1..%d, want 1..%d", stream, next-1, want)
	}
}
