package readstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/postgres/readstore"
)

var errStopped = errors.New("stopped by the test")

// resumeOpts is a resumable rebuild of every event in slices of 700 events
// (15 slices of the 10,000 seeded).
func resumeOpts() readstore.ReplayOptions {
	return readstore.ReplayOptions{Full: true, Shadow: true, SliceEvents: 700, Examples: 3, Resumable: true,
		Fingerprint: "pitboss test"}
}

// resumeLedger seeds 10,000 events of two clients, rebuilds them once
// uninterrupted (kept in the schema "uninterrupted") and returns its report.
func resumeLedger(t *testing.T) (*pgxpool.Pool, *readstore.ReadModels, readstore.ReplayReport) {
	t.Helper()
	pool, _ := pgtest.NewDatabase(t)
	if _, err := eventstore.SeedEvents(context.Background(), pool, eventstore.SeedOptions{Events: 10000, Clients: 2,
		PlayersPerClient: 2, Seed: 21}); err != nil {
		t.Fatalf("seed: %v", err)
	}
	rm := readstore.NewReadModels(pool).WithCountBudget(testCountBudget)
	whole := rmCompare(t, rm, resumeOpts())
	if whole.Slices != 15 || whole.Resume.From != 0 || whole.Resume.Reason != "" {
		t.Fatalf("uninterrupted rebuild: %d slices, resume %+v; want 15 slices, afresh", whole.Slices, whole.Resume)
	}
	keepShadow(t, pool, "uninterrupted")
	return pool, rm, whole
}

// interrupt runs a rebuild with opts that stops once slice pass is written,
// before it is recorded: with an error, or by cancelling its context.
func interrupt(t *testing.T, rm *readstore.ReadModels, opts readstore.ReplayOptions, pass int, cancel bool) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	opts.AfterWrite = func(n int) error {
		if n != pass {
			return nil
		}
		if cancel {
			stop()
			return nil
		}
		return errStopped
	}
	_, err := rm.Compare(ctx, opts)
	if want := map[bool]error{false: errStopped, true: context.Canceled}[cancel]; !errors.Is(err, want) {
		t.Fatalf("interrupted rebuild: %v, want %v", err, want)
	}
}

// sameAsUninterrupted checks that the shadow tables and the report of rep
// are those of the uninterrupted rebuild.
func sameAsUninterrupted(t *testing.T, pool *pgxpool.Pool, rep, whole readstore.ReplayReport) {
	t.Helper()
	for _, table := range rebuiltTables {
		missing, extra, rows := sameRows(t, pool, "uninterrupted", table)
		if missing != 0 || extra != 0 {
			t.Errorf("%s: the resumed rebuild lacks %d rows of the uninterrupted one and has %d it lacks", table, missing, extra)
		}
		if rows == 0 && table != "positions" {
			t.Errorf("%s: no rows rebuilt; the comparison proves nothing", table)
		}
		if rep.Rebuilt[table] != whole.Rebuilt[table] {
			t.Errorf("%s: %d rows reported rebuilt, %d uninterrupted", table, rep.Rebuilt[table], whole.Rebuilt[table])
		}
	}
	if rep.Events != whole.Events || rep.Skipped != whole.Skipped || rep.Slices != whole.Slices ||
		rep.LateChanges != whole.LateChanges || rep.Head != whole.Head || rep.Differences() != whole.Differences() || !rep.Shadowed {
		t.Errorf("report: %d events, %d skipped, %d slices, %d late changes, head %d, %d differences, shadowed %t; "+
			"uninterrupted %d, %d, %d, %d, %d, %d", rep.Events, rep.Skipped, rep.Slices, rep.LateChanges, rep.Head,
			rep.Differences(), rep.Shadowed, whole.Events, whole.Skipped, whole.Slices, whole.LateChanges, whole.Head, whole.Differences())
	}
}

// An interrupted rebuild (stopped by an error or a cancelled context once a
// slice was written, before it was recorded: its rows are in the shadow
// and staging tables, its record is not) resumes after the last slice
// recorded, and ends with the shadow tables and report of an uninterrupted
// rebuild. The rebuild after it, finding no interrupted one, starts afresh.
func TestInterruptedRebuildResumes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		pass   int
		cancel bool
	}{
		{name: "an error once slice 6 is written", pass: 6},
		{name: "a cancelled context once slice 11 is written", pass: 11, cancel: true},
		{name: "an error once the first slice is written", pass: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pool, rm, whole := resumeLedger(t)
			interrupt(t, rm, resumeOpts(), tc.pass, tc.cancel)
			rep := rmCompare(t, rm, resumeOpts())
			want := readstore.ResumeReport{From: tc.pass - 1, Passes: 15}
			if tc.pass == 1 {
				want.Reason = "it completed no pass"
			}
			if got := rep.Resume; got.From != want.From || got.Passes != want.Passes || got.Reason != want.Reason ||
				(got.From > 0) != (got.Position > 0) {
				t.Errorf("resume %+v, want %+v", got, want)
			}
			sameAsUninterrupted(t, pool, rep, whole)
			if again := rmCompare(t, rm, resumeOpts()); again.Resume.From != 0 || again.Resume.Reason != "" {
				t.Errorf("the rebuild after a finished one: resume %+v, want afresh", again.Resume)
			}
		})
	}
}

// An interrupted rebuild is not resumed, and the rebuild starts over (and
// says why), when its arguments differ, when --restart says so, and when
// the shadow tables no longer hold what its slices wrote; the result is
// still the uninterrupted one.
func TestInterruptedRebuildStartsOver(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(*readstore.ReplayOptions)
		break_ string // SQL run after the interruption
		reason string
	}{
		{name: "another memory budget", change: func(o *readstore.ReplayOptions) { o.SliceEvents = 900 },
			reason: "it ran with other arguments or another version (full slice=700 pitboss test; now full slice=900 pitboss test)"},
		{name: "another version", change: func(o *readstore.ReplayOptions) { o.Fingerprint = "pitboss test 2" },
			reason: "it ran with other arguments or another version"},
		{name: "--restart", change: func(o *readstore.ReplayOptions) { o.Restart = true }, reason: "--restart"},
		{name: "changed shadow history", break_: `DELETE FROM readmodels_shadow.transactions WHERE position > 3000`,
			reason: "the shadow history holds"},
		// What a PostgreSQL crash does: the logged shadow tables and pass
		// records stay, every unlogged table is emptied.
		{name: "a crash", break_: `DO $$ DECLARE r record; BEGIN
				FOR r IN SELECT c.oid::regclass AS t FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
				         WHERE n.nspname = 'readmodels_replay' AND c.relkind = 'r' AND c.relpersistence = 'u' LOOP
					EXECUTE 'TRUNCATE ' || r.t;
				END LOOP; END $$`,
			reason: "its record is empty (PostgreSQL empties the unlogged staging tables after a crash)"},
		{name: "another ledger", break_: `UPDATE readmodels_replay.passes SET hash = '\x00'`,
			reason: "the event at position 4200 is not the one its pass 6 read (the ledger changed)"},
		{name: "interrupted while finishing", break_: `UPDATE readmodels_replay.run SET finishing = true`,
			reason: "it was interrupted after its last pass, while finishing the shadow tables"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pool, rm, whole := resumeLedger(t)
			interrupt(t, rm, resumeOpts(), 7, false)
			if tc.break_ != "" {
				rmExec(t, pool, tc.break_)
			}
			opts := resumeOpts()
			if tc.change != nil {
				tc.change(&opts)
			}
			rep := rmCompare(t, rm, opts)
			if rep.Resume.From != 0 || !strings.Contains(rep.Resume.Reason, tc.reason) {
				t.Errorf("resume %+v, want a start over because %q", rep.Resume, tc.reason)
			}
			if opts.SliceEvents == 700 {
				sameAsUninterrupted(t, pool, rep, whole)
			}
		})
	}
}
