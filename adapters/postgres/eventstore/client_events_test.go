package eventstore_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/postgres/storetest"
	"github.com/pitboss/pitboss/commands"
)

// TestClientEventsReadOneIndexRange: a client's head and a page of its
// events are read by an ordered scan of events_client_position_idx that
// stops after the rows it returns — no bitmap scan of the client's whole
// history and no sort of it, whatever Postgres estimates (this table was never
// analysed, the case that made the plain form read every event of a busy
// client on every read; see adapters/postgres/clientevents.go).
func TestClientEventsReadOneIndexRange(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	_, h := storetest.StartLedger(t, pool, eventstore.LedgerConfig{})
	quiet, busy := seedQuietAndBusy(t, h, 320)
	deposit(t, h, quiet, storetest.UID("p"), "1.00")
	ctx := context.Background()
	accounts := eventstore.NewAccounts(pool)
	head, _, err := accounts.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}

	queries := []struct {
		name, sql string
		args      []any
		rows      int
	}{
		{"the busy client's head", postgres.ClientEventAtOrBefore("position", "$1", "$2::bigint"), []any{busy, head}, 1},
		{"the busy client's head below the quiet one's last event", postgres.ClientEventAtOrBefore("position", "$1", "$2::bigint"), []any{busy, head - 1}, 1},
		{"the quiet client's head", postgres.ClientEventAtOrBefore("position", "$1", "$2::bigint"), []any{quiet, head}, 1},
		{"a page of the busy client", postgres.ClientEventsAfter("position", "$1", "$2::bigint", "$3"), []any{busy, 0, 10}, 10},
		{"a client without events", postgres.ClientEventAtOrBefore("position", "$1", "$2::bigint"), []any{"nobody", head}, 0},
	}
	for _, q := range queries {
		t.Run(q.name, func(t *testing.T) {
			var plan []struct{ Plan planNode }
			var raw string
			if err := pool.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+q.sql, q.args...).Scan(&raw); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(raw), &plan); err != nil {
				t.Fatal(err)
			}
			var scans []planNode
			plan[0].Plan.walk(func(n planNode) {
				if strings.Contains(n.NodeType, "Bitmap") || n.NodeType == "Seq Scan" {
					t.Errorf("plan has a %s node: %s", n.NodeType, raw)
				}
				if n.RelationName == "events" {
					scans = append(scans, n)
				}
			})
			if len(scans) != 1 || scans[0].IndexName != "events_client_position_idx" {
				t.Fatalf("events read by %+v, want one scan of events_client_position_idx: %s", scans, raw)
			}
			// The scan stops after the rows the query returns (plus one
			// row of another client when the range ends there).
			if got := scans[0].ActualRows; got > float64(q.rows)+1 {
				t.Errorf("the scan read %v rows for %d returned: %s", got, q.rows, raw)
			}
			rows, err := pool.Query(ctx, q.sql, q.args...)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for rows.Next() {
				n++
			}
			if rows.Close(); rows.Err() != nil || n != q.rows {
				t.Fatalf("%d rows (%v), want %d", n, rows.Err(), q.rows)
			}
		})
	}
}

// seedQuietAndBusy deposits once for a quiet client, then busyEvents times
// (from eight players at once) for a busy one, and returns both ids.
func seedQuietAndBusy(t testing.TB, h *commands.Handler, busyEvents int) (quiet, busy string) {
	t.Helper()
	quiet, busy = storetest.UID("quiet"), storetest.UID("busy")
	deposit(t, h, quiet, storetest.UID("p"), "1.00")
	var wg sync.WaitGroup
	for range 8 {
		player := storetest.UID("p")
		wg.Go(func() {
			for range busyEvents / 8 {
				deposit(t, h, busy, player, "1.00")
			}
		})
	}
	wg.Wait()
	return quiet, busy
}

type planNode struct {
	NodeType     string     `json:"Node Type"`
	RelationName string     `json:"Relation Name"`
	IndexName    string     `json:"Index Name"`
	ActualRows   float64    `json:"Actual Rows"`
	Plans        []planNode `json:"Plans"`
}

func (n planNode) walk(f func(planNode)) {
	f(n)
	for _, c := range n.Plans {
		c.walk(f)
	}
}
