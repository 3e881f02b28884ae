package readstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/postgres/readstore"
	"github.com/pitboss/pitboss/adapters/postgres/storetest"
)

// rebuiltTables are the tables a rebuild writes to the shadow schema.
var rebuiltTables = []string{"transactions", "tx_order", "tx_counts", "tx_days", "tx_filter_counts", "tx_filter_marks",
	"balances", "ggr_daily", "ggr_players", "ggr_player_months", "ggr_rounds", "checkpoints", "positions"}

// keepShadow copies every shadow table into the schema named to, so a
// later rebuild (which drops the shadow schema) can be held against it.
func keepShadow(t *testing.T, pool *pgxpool.Pool, to string) {
	t.Helper()
	rmExec(t, pool, `DROP SCHEMA IF EXISTS `+to+` CASCADE`)
	rmExec(t, pool, `CREATE SCHEMA `+to)
	for _, table := range rebuiltTables {
		rmExec(t, pool, `CREATE TABLE `+to+`.`+table+` AS TABLE readmodels_shadow.`+table)
	}
}

// sameRows counts the rows of the shadow table that the kept one lacks and
// the other way round (as multisets: EXCEPT ALL), and the kept rows.
func sameRows(t *testing.T, pool *pgxpool.Pool, kept, table string) (missing, extra, rows int64) {
	t.Helper()
	err := pool.QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM (TABLE readmodels_shadow.`+table+` EXCEPT ALL TABLE `+kept+`.`+table+`) a),
		(SELECT count(*) FROM (TABLE `+kept+`.`+table+` EXCEPT ALL TABLE readmodels_shadow.`+table+`) b),
		(SELECT count(*) FROM `+kept+`.`+table+`)`).Scan(&extra, &missing, &rows)
	if err != nil {
		t.Fatalf("compare %s: %v", table, err)
	}
	return missing, extra, rows
}

// A rebuild in bounded memory (compareSliced: position slices written out
// one by one, the numbering, game results, rounds and members finished
// set-based) writes exactly the shadow tables the rebuild held whole in
// memory writes, row for row: on a ledger of one client cut into many
// slices (every type and every player past a mark), of two client by
// client as of a live watermark (rows above it not numbered), and of
// three in one slice. The comparison with the live tables (read back from
// the shadow schema) finds what it found before.
func TestSlicedRebuildMatchesInMemory(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		clients    int
		live       int // events the live projector applied first
		full       bool
		passEvents int64
		slice      int64
		slices     int
	}{
		{name: "one client in many slices, every event", clients: 1, full: true, slice: 700, slices: 15},
		{name: "two clients, as of a live watermark", clients: 2, live: 7000, passEvents: 1, slice: 1500, slices: 7},
		{name: "three clients in one slice, every event", clients: 3, full: true, slices: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			pool, _ := pgtest.NewDatabase(t)
			if _, err := eventstore.SeedEvents(ctx, pool, eventstore.SeedOptions{Events: 10000, Clients: tc.clients,
				PlayersPerClient: 2, Seed: 21}); err != nil {
				t.Fatalf("seed: %v", err)
			}
			rm := readstore.NewReadModels(pool).WithCountBudget(testCountBudget)
			if tc.live > 0 {
				// The first events, and the later ones of one stream: the
				// watermark stops below them, and their rows are not
				// numbered.
				evs := storetest.StoredEvents(t, pool, 0)
				live := evs[:tc.live]
				for _, e := range evs[tc.live:] {
					if e.StreamID == evs[tc.live].StreamID {
						live = append(live, e)
					}
				}
				storetest.ApplyLive(t, rm, live, 3)
			}
			opts := readstore.ReplayOptions{Full: tc.full, Shadow: true, PassEvents: tc.passEvents, Examples: 3}
			inMemory := rmCompare(t, readstore.InMemory(rm), opts)
			keepShadow(t, pool, "rebuilt_in_memory")
			opts.SliceEvents = tc.slice
			sliced := rmCompare(t, rm, opts)
			if sliced.Slices != tc.slices || sliced.Events != inMemory.Events || sliced.Skipped != inMemory.Skipped {
				t.Errorf("sliced: %d slices, %d events, %d skipped; want %d slices, %d events, %d skipped", sliced.Slices,
					sliced.Events, sliced.Skipped, tc.slices, inMemory.Events, inMemory.Skipped)
			}
			if (tc.slices > 1) != (sliced.LateChanges > 0) {
				t.Errorf("%d late changes in %d slices; want some exactly when there are several slices", sliced.LateChanges, sliced.Slices)
			}
			if !sliced.Shadowed {
				t.Error("the sliced rebuild did not mark the shadow schema written")
			}

			for _, table := range rebuiltTables {
				missing, extra, rows := sameRows(t, pool, "rebuilt_in_memory", table)
				if missing != 0 || extra != 0 {
					t.Errorf("%s: the sliced rebuild lacks %d rows of the rebuild in memory and has %d it lacks",
						table, missing, extra)
				}
				if rows == 0 && table != "positions" {
					t.Errorf("%s: no rows rebuilt; the comparison proves nothing", table)
				}
				if sliced.Rebuilt[table] != inMemory.Rebuilt[table] {
					t.Errorf("%s: %d rows reported rebuilt in slices, %d in memory", table, sliced.Rebuilt[table], inMemory.Rebuilt[table])
				}
			}
			for i, d := range sliced.Tables {
				if m := inMemory.Tables[i]; d.Live != m.Live || d.Missing != m.Missing || d.Extra != m.Extra || d.Changed != m.Changed ||
					!slices.Equal(d.Examples, m.Examples) {
					t.Errorf("%s: compared with the live table, rebuilt in slices %+v, in memory %+v", d.Table, d, m)
				}
				// A table of clients is settled by digest exactly when it
				// has no difference (the global positions never are).
				same := d.Missing+d.Extra+d.Changed == 0 && d.Table != "positions"
				if d.ByDigest != same {
					t.Errorf("%s: compared by digest = %v with %d differences", d.Table, d.ByDigest, d.Missing+d.Extra+d.Changed)
				}
			}
			if tc.live == 0 && sliced.Differences() == 0 {
				t.Error("no differences from empty live tables")
			}
			// Marks of both filters, and a watermark below the head when
			// the live projector applied only some events.
			var typeMarks, playerMarks, unnumbered int64
			if err := pool.QueryRow(ctx, `SELECT
				(SELECT count(*) FROM readmodels_shadow.tx_filter_marks WHERE filter = 'type'),
				(SELECT count(*) FROM readmodels_shadow.tx_filter_marks WHERE filter = 'player'),
				(SELECT count(*) FROM readmodels_shadow.transactions t
				 WHERE NOT EXISTS (SELECT 1 FROM readmodels_shadow.tx_order o WHERE o.id = t.id))`).
				Scan(&typeMarks, &playerMarks, &unnumbered); err != nil {
				t.Fatal(err)
			}
			if typeMarks == 0 || playerMarks == 0 {
				t.Errorf("marks: %d of types, %d of players; want both", typeMarks, playerMarks)
			}
			if (tc.live > 0) != (unnumbered > 0) {
				t.Errorf("%d history rows left unnumbered; want some exactly when the live watermark is below the head", unnumbered)
			}
		})
	}
}

// After a rebuild in slices is swapped in, the next one finds a row someone
// altered, deleted or added, in the numbering and elsewhere: the shadow's
// own rows, read back, are what the comparison reads.
func TestSlicedRebuildFindsChanges(t *testing.T) {
	t.Parallel()
	pool, rm := rmSeeded(t, 3000)
	if rep := rmCompare(t, rm, readstore.ReplayOptions{Full: true, Shadow: true}); rep.Rebuilt["tx_order"] == 0 {
		t.Fatalf("no rows numbered:\n%s", rmDiffSummary(rep))
	}
	if _, err := rm.Swap(context.Background(), readstore.SwapOptions{}); err != nil {
		t.Fatalf("swap: %v", err)
	}
	rmExec(t, pool, `UPDATE readmodels.tx_order SET id = gen_random_uuid() WHERE rn = 7
		AND client_id = (SELECT min(client_id) FROM readmodels.tx_order)`)
	rmExec(t, pool, `DELETE FROM readmodels.tx_days WHERE ctid = (SELECT ctid FROM readmodels.tx_days LIMIT 1)`)
	rmExec(t, pool, `INSERT INTO readmodels.tx_counts (client_id, rows) VALUES ('ghost', 3)`)
	rmExec(t, pool, `UPDATE readmodels.transactions SET wins = wins + 1
		WHERE id = (SELECT id FROM readmodels.transactions WHERE type = 'game_result' ORDER BY seq LIMIT 1)`)
	rmExec(t, pool, `DELETE FROM readmodels.ggr_rounds WHERE ctid = (SELECT ctid FROM readmodels.ggr_rounds LIMIT 1)`)
	rep := rmCompare(t, rm, readstore.ReplayOptions{Shadow: true, Examples: 3, SliceEvents: 500})
	want := map[string][3]int64{"tx_order": {0, 0, 1}, "tx_days": {1, 0, 0}, "tx_counts": {0, 1, 0},
		"transactions": {0, 0, 1}, "ggr_rounds": {1, 0, 0}}
	for _, d := range rep.Tables {
		if got := [3]int64{d.Missing, d.Extra, d.Changed}; got != want[d.Table] {
			t.Errorf("%s: missing/extra/changed = %v, want %v (%v)", d.Table, got, want[d.Table], d.Examples)
		}
		// The tables nobody touched are found equal by their digests,
		// without their rows read out; the altered ones are not.
		_, altered := want[d.Table]
		if global := d.Table == "positions"; !global && d.ByDigest == altered {
			t.Errorf("%s: compared by digest = %v; want %v", d.Table, d.ByDigest, !altered)
		}
	}
}

// A rebuild in slices, its swap and verify's form of it (scratch schemas)
// all complete on the smallest pool a rebuild accepts, 3 connections: no
// step holds a connection while it waits for more than the pool has left.
// (The one-pass numbering once copied its last tables while it still held
// its two connections, and verify, on a pool of 4, waited for ever.)
func TestSlicedRebuildOnTheSmallestPool(t *testing.T) {
	t.Parallel()
	pool, _ := rmSeeded(t, 3000)
	cfg := pool.Config()
	cfg.MaxConns = 3
	small, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rm := readstore.NewReadModels(small).WithCountBudget(testCountBudget)
	rep, err := rm.Compare(ctx, readstore.ReplayOptions{Full: true, Shadow: true, SliceEvents: 500})
	if err != nil {
		t.Fatalf("rebuild on 3 connections: %v", err)
	}
	if rep.Slices < 2 || rep.Rebuilt["tx_order"] == 0 {
		t.Fatalf("%d slices, %d rows numbered: want several slices and numbered rows", rep.Slices, rep.Rebuilt["tx_order"])
	}
	if _, err := rm.Swap(ctx, readstore.SwapOptions{}); err != nil {
		t.Fatalf("swap on 3 connections: %v", err)
	}
	scratch := rm.WithScratch(readstore.VerifyShadowSchema, readstore.VerifyStagingSchema)
	defer func() { _ = scratch.DropScratch(context.Background()) }()
	rep, err = scratch.Compare(ctx, readstore.ReplayOptions{Shadow: true, SliceEvents: 500})
	if err != nil {
		t.Fatalf("verify's rebuild on 3 connections: %v", err)
	}
	if n := rep.Differences(); n != 0 {
		t.Errorf("verify's rebuild after the swap: %d differences, want none", n)
	}
}
