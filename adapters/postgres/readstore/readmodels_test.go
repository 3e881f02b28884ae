package readstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/postgres/readstore"
	"github.com/pitboss/pitboss/adapters/postgres/storetest"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
)

// testCountBudget replaces the 250 ms bound on a filtered page's count in
// the tests that check exact totals: under go test -race with every
// package running at once on two cores, a count that takes 20 ms alone
// ran past 250 ms, and the total came back as a lower bound.
const testCountBudget = time.Minute

func rmSeeded(t testing.TB, events int) (*pgxpool.Pool, *readstore.ReadModels) {
	t.Helper()
	pool, _ := pgtest.NewDatabase(t)
	if _, err := eventstore.SeedEvents(context.Background(), pool, eventstore.SeedOptions{Events: events, Clients: 2,
		PlayersPerClient: 40, Seed: 7}); err != nil {
		t.Fatalf("seed: %v", err)
	}
	return pool, readstore.NewReadModels(pool).WithCountBudget(testCountBudget)
}

func rmCompare(t testing.TB, rm *readstore.ReadModels, opts readstore.ReplayOptions) readstore.ReplayReport {
	t.Helper()
	rep, err := rm.Compare(context.Background(), opts)
	if err != nil {
		t.Fatalf("compare: %v", err)
	}
	return rep
}

func rmDiffSummary(rep readstore.ReplayReport) string {
	var b strings.Builder
	for _, d := range rep.Tables {
		fmt.Fprintf(&b, "%s: live %d rebuilt %d missing %d extra %d changed %d %v\n", d.Table, d.Live, d.Rebuilt,
			d.Missing, d.Extra, d.Changed, d.Examples)
	}
	return b.String()
}

func rmExec(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) int64 {
	t.Helper()
	tag, err := pool.Exec(context.Background(), sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return tag.RowsAffected()
}

// The projector's path (Postgres, streams interleaved, concurrent) and the
// rebuild's (memory, position order) agree on every row of every table;
// applying everything again changes nothing; and the comparison finds a
// row someone altered, deleted or added.
func TestReadModelsLiveAndRebuildAgree(t *testing.T) {
	t.Parallel()
	pool, rm := rmSeeded(t, 2000)
	evs := storetest.StoredEvents(t, pool, 0)
	storetest.ApplyLive(t, rm, evs, 4)

	rep := rmCompare(t, rm, readstore.ReplayOptions{})
	if rep.Differences() != 0 || rep.Events != 2000 || rep.Skipped != 0 {
		t.Fatalf("live and rebuild differ (%d events, %d skipped):\n%s", rep.Events, rep.Skipped, rmDiffSummary(rep))
	}
	for _, table := range []string{"transactions", "tx_order", "balances", "ggr_daily", "ggr_players", "ggr_player_months",
		"ggr_rounds", "checkpoints"} {
		if rep.Rebuilt[table] == 0 {
			t.Errorf("rebuilt %s is empty: the comparison proves nothing", table)
		}
	}
	full := rmCompare(t, rm, readstore.ReplayOptions{Full: true})
	if full.Differences() != 0 || full.Passes != 1 {
		t.Fatalf("full rebuild differs from a caught-up live model (%d passes):\n%s", full.Passes, rmDiffSummary(full))
	}
	// Client by client (a pass per client) gives the same rows.
	perClient := rmCompare(t, rm, readstore.ReplayOptions{Full: true, PassEvents: 1})
	if perClient.Differences() != 0 || perClient.Passes != 2 || perClient.Events != 2000 {
		t.Fatalf("rebuild client by client (%d passes, %d events) differs:\n%s", perClient.Passes, perClient.Events,
			rmDiffSummary(perClient))
	}
	for table, n := range full.Rebuilt {
		if perClient.Rebuilt[table] != n {
			t.Errorf("%s: %d rows rebuilt client by client, %d at once", table, perClient.Rebuilt[table], n)
		}
	}

	// Redelivery: every event again, in another interleaving.
	storetest.ApplyLive(t, rm, evs, 3)
	if rep := rmCompare(t, rm, readstore.ReplayOptions{}); rep.Differences() != 0 {
		t.Fatalf("redelivery changed the read models:\n%s", rmDiffSummary(rep))
	}

	rmExec(t, pool, `UPDATE readmodels.transactions SET amount = amount - 1
		WHERE id = (SELECT id FROM readmodels.transactions WHERE type = 'bet' ORDER BY seq LIMIT 1)`)
	rmExec(t, pool, `DELETE FROM readmodels.ggr_players WHERE ctid = (SELECT ctid FROM readmodels.ggr_players LIMIT 1)`)
	rmExec(t, pool, `UPDATE readmodels.ggr_player_months SET days = days # (1::bigint << 30)
		WHERE ctid = (SELECT ctid FROM readmodels.ggr_player_months WHERE days <> 1::bigint << 30 LIMIT 1)`)
	rmExec(t, pool, `INSERT INTO readmodels.balances (account_id, kind, client_id, currency, scale, balance, position)
		VALUES ('client:ghost:EUR', 'client', 'ghost', 'EUR', 2, 100, 1)`)
	// (The rebuild goes client by client: rows of a client without events
	// are found too, in tables keyed by client and by stream.)
	rmExec(t, pool, `INSERT INTO readmodels.checkpoints (projection, stream_id, version, position)
		VALUES ('history', 'player:ghost:p1:EUR', 3, 9)`)
	rep = rmCompare(t, rm, readstore.ReplayOptions{Examples: 3, PassEvents: 1})
	want := map[string][3]int64{"transactions": {0, 0, 1}, "ggr_players": {1, 0, 0}, "ggr_player_months": {0, 0, 1},
		"balances": {0, 1, 0}, "checkpoints": {0, 1, 0}}
	for _, d := range rep.Tables {
		w := want[d.Table]
		if got := [3]int64{d.Missing, d.Extra, d.Changed}; got != w {
			t.Errorf("%s: missing/extra/changed = %v, want %v (%v)", d.Table, got, w, d.Examples)
		}
	}
	if rep.Differences() != 5 {
		t.Errorf("differences = %d, want 5", rep.Differences())
	}
	if ex := rep.Tables[0].Examples; len(ex) != 1 || !strings.Contains(ex[0], "amount live=") {
		t.Errorf("transactions example = %v, want the amount named", ex)
	}
}

// A rebuild written to the shadow schema and swapped in replaces altered
// live rows, and catches up on what the projector applied after the
// rebuild's snapshot.
func TestReadModelsSwap(t *testing.T) {
	t.Parallel()
	pool, rm := rmSeeded(t, 2000)
	evs := storetest.StoredEvents(t, pool, 0)
	storetest.ApplyLive(t, rm, evs[:1200], 2)
	rmExec(t, pool, `UPDATE readmodels.balances SET balance = balance + 500
		WHERE account_id = (SELECT account_id FROM readmodels.balances ORDER BY account_id LIMIT 1)`)

	rep := rmCompare(t, rm, readstore.ReplayOptions{Shadow: true})
	if rep.Differences() != 1 {
		t.Fatalf("differences before the swap = %d, want the altered balance:\n%s", rep.Differences(), rmDiffSummary(rep))
	}
	storetest.ApplyLive(t, rm, evs[1200:], 2) // the projector goes on meanwhile

	sw, err := rm.Swap(context.Background(), readstore.SwapOptions{})
	if err != nil {
		t.Fatalf("swap: %v", err)
	}
	if sw.CaughtUp == 0 {
		t.Error("swap caught up on nothing; the live projector had applied 800 more events")
	}
	var lagged time.Duration
	if err := pool.QueryRow(context.Background(), `SELECT (SELECT occurred_at FROM events WHERE position = 2000) -
		(SELECT occurred_at FROM events WHERE position = 1200)`).Scan(&lagged); err != nil {
		t.Fatal(err)
	}
	if sw.RebuiltHead != 1200 || sw.LiveHead != 2000 || sw.Behind != 800 || sw.BehindTime != lagged || lagged <= 0 {
		t.Errorf("lag at the swap: rebuilt head %d, live head %d, %d events, %s behind; want 1200, 2000, 800, %s",
			sw.RebuiltHead, sw.LiveHead, sw.Behind, sw.BehindTime, lagged)
	}
	// The swapped-in tables were vacuumed (so index-only scans work from
	// the start, unless a long transaction elsewhere holds the horizon).
	for _, table := range []string{"transactions", "tx_order", "ggr_players"} {
		var vacuums int64
		if err := pool.QueryRow(context.Background(), `SELECT vacuum_count FROM pg_stat_user_tables
			WHERE relid = $1::regclass`, "readmodels."+table).Scan(&vacuums); err != nil || vacuums == 0 {
			t.Errorf("readmodels.%s after the swap: vacuumed %d times (%v); want the rebuild vacuumed", table, vacuums, err)
		}
	}
	// Built without autovacuum, live with it, and logged: no read-model
	// table keeps the rebuild's storage settings.
	var kept []string
	rows, _ := pool.Query(context.Background(), `SELECT c.relname || ' ' || c.relpersistence::text || ' ' || coalesce(array_to_string(c.reloptions, ','), '')
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'readmodels' AND c.relkind = 'r' AND (c.relpersistence <> 'p' OR c.reloptions IS NOT NULL)`)
	kept, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(kept) > 0 {
		t.Errorf("after the swap: %v (%v); want every read-model table logged, with no storage options", kept, err)
	}
	if rep := rmCompare(t, rm, readstore.ReplayOptions{Full: true}); rep.Differences() != 0 {
		t.Fatalf("after the swap the read models differ from a full rebuild:\n%s", rmDiffSummary(rep))
	}
	pos, err := rm.Position(context.Background(), projections.History)
	if err != nil || pos != int64(len(evs)) {
		t.Errorf("history watermark after the swap = %d, %v; want %d", pos, err, len(evs))
	}
	if _, err := rm.Swap(context.Background(), readstore.SwapOptions{}); !errors.Is(err, readstore.ErrNoShadow) {
		t.Errorf("second swap: %v, want ErrNoShadow", err)
	}
}

// The generated status column of the history and GameResultStatus are the
// same rule.
func TestGameResultStatusMatchesTheTable(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	ctx := context.Background()
	i := 0
	for _, open := range []int64{0, 1, 2} {
		for _, rolled := range []int64{0, 1} {
			for _, wins := range []int64{0, 1} {
				for _, closed := range []bool{false, true} {
					i++
					id := projections.GameResultID("c", "p", fmt.Sprint(i))
					var got string
					err := pool.QueryRow(ctx, `INSERT INTO readmodels.transactions (id, client_id, type, amount, currency,
						scale, base_status, created_at, seq, sub, position, open_bets, rolled_bets, wins, closed)
						VALUES ($1, 'c', 'game_result', 0, 'EUR', 2, 'pending', now(), $2, 1, $2, $3, $4, $5, $6)
						RETURNING status`, id, i, open, rolled, wins, closed).Scan(&got)
					if err != nil {
						t.Fatal(err)
					}
					if want := projections.GameResultStatus(open, rolled, wins, closed); got != string(want) {
						t.Errorf("open %d rolled %d wins %d closed %v: table says %s, Go says %s", open, rolled, wins, closed, got, want)
					}
				}
			}
		}
	}
}

// BenchmarkReplay measures a full rebuild written to the shadow schema,
// and the process's peak resident memory during it (VmHWM, reset after
// seeding). PITBOSS_BENCH_EVENTS sets the ledger's size (default 100,000),
// PITBOSS_BENCH_MEMORY the budget in MB (default 512),
// PITBOSS_BENCH_IN_MEMORY=1 runs the rebuild held whole in memory instead:
//
//	PITBOSS_BENCH_EVENTS=1000000 go test -run XXX -bench Replay -benchtime 1x ./adapters/postgres/readstore
func BenchmarkReplay(b *testing.B) {
	n := 100_000
	if v := os.Getenv("PITBOSS_BENCH_EVENTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	pool, _ := pgtest.NewDatabase(b)
	res, err := eventstore.SeedEvents(context.Background(), pool, eventstore.SeedOptions{Events: n, PlayersPerClient: 2000, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d events in %s (%.0f events/s)", res.Events, res.Took, float64(res.Events)/res.Took.Seconds())
	rm := readstore.NewReadModels(pool)
	inMemory := os.Getenv("PITBOSS_BENCH_IN_MEMORY") == "1"
	if inMemory {
		rm = readstore.InMemory(rm)
	}
	opts := readstore.ReplayOptions{Full: true, Shadow: true, Memory: readstore.DefaultReplayMemory}
	if v := os.Getenv("PITBOSS_BENCH_MEMORY"); v != "" {
		mb, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		opts.Memory = mb << 20
	}
	if !inMemory && os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(opts.Memory) // as `pitboss replay` does
	}
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil { // resets VmHWM
		b.Logf("peak memory not reset: %v", err)
	}
	b.ResetTimer()
	for range b.N {
		rep, err := rm.Compare(context.Background(), opts)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(rep.Events)/(rep.Read+rep.Write).Seconds(), "events/s")
		b.Logf("read+apply %s, write %s (finish %s), compare %s; %d slices, %d late changes; peak RSS %s", rep.Read, rep.Write,
			rep.Finish, rep.Compare, rep.Slices, rep.LateChanges, peakRSS())
		start := time.Now()
		if _, err := rm.Swap(context.Background(), readstore.SwapOptions{}); err != nil {
			b.Fatal(err)
		}
		b.Logf("swap (log, key and index the shadow tables, then rename) %s", time.Since(start))
	}
}

// Every way Transactions finds a page (row numbers, the rows above the
// watermark, the two-region filtered walk, the time filter's seq span)
// returns exactly what the plain ORDER BY ... OFFSET query returns.
func TestTransactionsPagingMatchesPlainQuery(t *testing.T) {
	t.Parallel()
	pool, rm := rmSeeded(t, 3000)
	evs := storetest.StoredEvents(t, pool, 0)
	storetest.ApplyLive(t, rm, evs[:2600], 3)
	// The rest is applied but not under the watermark: not yet numbered.
	for _, n := range projections.All {
		p, _ := projections.ByName(n)
		for _, e := range evs[2600:] {
			if err := storetest.ApplyOne(rm, p, e); err != nil {
				t.Fatal(err)
			}
		}
	}
	ctx := context.Background()
	var mid time.Time
	if err := pool.QueryRow(ctx, `SELECT created_at FROM readmodels.transactions ORDER BY seq OFFSET 1500 LIMIT 1`).Scan(&mid); err != nil {
		t.Fatal(err)
	}
	late := mid.Add(200 * time.Hour)
	filters := []projections.TransactionFilter{
		{ClientID: "client-1"},
		{ClientID: "client-2", Type: projections.TypeBet},
		{ClientID: "client-1", Type: projections.TypeGameResult, Status: projections.StatusPending},
		{ClientID: "client-1", PlayerID: "player-7"},
		{ClientID: "client-2", From: mid},
		{ClientID: "client-2", To: mid},
		{ClientID: "client-1", From: mid, To: late, Type: projections.TypeWin},
		{ClientID: "client-1", Provider: "provider-2", Currency: "EUR"},
		{ClientID: "nobody"},
	}
	for i, f := range filters {
		where, args := "client_id = $1", []any{f.ClientID}
		add := func(cond string, v any) {
			args = append(args, v)
			where += fmt.Sprintf(" AND "+cond, len(args))
		}
		if f.Type != "" {
			add("type = $%d", string(f.Type))
		}
		if f.Status != "" {
			add("status = $%d", string(f.Status))
		}
		if f.PlayerID != "" {
			add("player_id = $%d", f.PlayerID)
		}
		if f.Provider != "" {
			add("provider = $%d", f.Provider)
		}
		if f.Currency != "" {
			add("currency = $%d", f.Currency)
		}
		if !f.From.IsZero() {
			add("created_at >= $%d", f.From)
		}
		if !f.To.IsZero() {
			add("created_at < $%d", f.To)
		}
		rows, _ := pool.Query(ctx, `SELECT id::text FROM readmodels.transactions WHERE `+where+` ORDER BY seq DESC, sub DESC`, args...)
		want, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 && f.ClientID != "nobody" {
			t.Fatalf("filter %d matches nothing: the test proves nothing", i)
		}
		for _, size := range []int{7, 50} {
			for page := 1; page <= len(want)/size+2; page++ {
				got, err := rm.Transactions(ctx, f, projections.Page{Number: page, Size: size})
				if err != nil {
					t.Fatalf("filter %d page %d: %v", i, page, err)
				}
				lo, hi := min((page-1)*size, len(want)), min(page*size, len(want))
				ids := make([]string, len(got.Rows))
				for j, r := range got.Rows {
					ids[j] = r.ID
				}
				if strings.Join(ids, ",") != strings.Join(want[lo:hi], ",") {
					t.Fatalf("filter %d (%+v) page %d of %d: got %d rows %v, want %v", i, f, page, size, len(ids), ids, want[lo:hi])
				}
				if !got.TotalExact || got.Total != int64(len(want)) {
					t.Fatalf("filter %d page %d: total %d exact %v, want %d", i, page, got.Total, got.TotalExact, len(want))
				}
			}
		}
	}
}

// Batches of events of distinct streams, one transaction each, come out as
// the rebuild does; in a batch, a gap or a redelivery is settled on its own
// and the rest applies.
func TestReadModelsApplyBatch(t *testing.T) {
	t.Parallel()
	pool, rm := rmSeeded(t, 2000)
	evs := storetest.StoredEvents(t, pool, 0)
	ctx := context.Background()
	for _, n := range projections.All {
		p, _ := projections.ByName(n)
		var batch []domain.Event
		flush := func() {
			res, err := rm.ApplyBatch(ctx, p, batch)
			if err != nil {
				t.Fatalf("%s: apply batch: %v", n, err)
			}
			for i, r := range res {
				if !r.Applied || r.Err != nil {
					t.Fatalf("%s: event %d of the batch: %+v", n, i, r)
				}
			}
			batch = batch[:0]
		}
		for _, e := range evs {
			if len(batch) == 6 || slices.ContainsFunc(batch, func(x domain.Event) bool { return x.StreamID == e.StreamID }) {
				flush()
			}
			batch = append(batch, e)
		}
		flush()
		if _, err := rm.Advance(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if rep := rmCompare(t, rm, readstore.ReplayOptions{}); rep.Differences() != 0 || rep.Rebuilt["transactions"] == 0 {
		t.Fatalf("batched live model differs from the rebuild:\n%s", rmDiffSummary(rep))
	}

	// A second ledger's events: a redelivery, a gap and a first event.
	pool2, rm2 := rmSeeded(t, 300)
	evs2 := storetest.StoredEvents(t, pool2, 0)
	byStream := map[domain.AccountID][]domain.Event{}
	for _, e := range evs2 {
		byStream[e.StreamID] = append(byStream[e.StreamID], e)
	}
	var streams [][]domain.Event
	for _, s := range byStream {
		if len(s) >= 3 {
			streams = append(streams, s)
		}
	}
	if len(streams) < 3 {
		t.Fatal("need three streams with three events")
	}
	p, _ := projections.ByName(projections.Balances)
	if _, err := rm2.Apply(ctx, p, streams[0][0]); err != nil {
		t.Fatal(err)
	}
	res, err := rm2.ApplyBatch(ctx, p, []domain.Event{streams[0][0], streams[1][2], streams[2][0]})
	if err != nil {
		t.Fatal(err)
	}
	var gap *projections.GapError
	if res[0].Applied || res[0].Err != nil || res[1].Applied || !errors.As(res[1].Err, &gap) || !res[2].Applied || res[2].Err != nil {
		t.Errorf("results = %+v, want skipped, gap, applied", res)
	}
	if _, err := rm2.ApplyBatch(ctx, p, []domain.Event{streams[1][0], streams[1][1]}); !errors.Is(err, readstore.ErrSameStreamInBatch) {
		t.Errorf("two events of one stream: err = %v", err)
	}
}

// A report grouped by currency or month counts players from their monthly
// day bitmaps (ggr_player_months); it must count what the daily member
// rows (ggr_players) count, for any range of days — across month ends and
// a leap February. (That the bitmaps are right, here and in Memory, is the
// read-model contract's: projectionstest.)
func TestGGRPlayersFromMonthBitmaps(t *testing.T) {
	t.Parallel()
	type play struct {
		player, currency, provider, game string
		day                              time.Time
	}
	d := func(m time.Month, day int) time.Time { return time.Date(2024, m, day, 12, 0, 0, 0, time.UTC) }
	plays := []play{
		{"p1", "EUR", "prov", "a", d(1, 31)}, {"p1", "EUR", "prov", "b", d(1, 31)}, {"p1", "EUR", "prov", "a", d(2, 1)},
		{"p2", "EUR", "prov", "a", d(2, 29)}, {"p2", "EUR", "other", "x", d(3, 1)},
		{"p3", "EUR", "prov", "b", d(1, 1)}, {"p3", "EUR", "prov", "b", d(3, 31)},
		{"p4", "USD", "prov", "a", d(2, 15)}, {"p4", "EUR", "prov", "a", d(2, 15)},
		{"p5", "USD", "other", "x", d(1, 30)}, {"p5", "USD", "other", "x", d(3, 2)},
	}
	pool, _ := pgtest.NewDatabase(t)
	rm := readstore.NewReadModels(pool)
	hist, err := projections.ByName(projections.History)
	if err != nil {
		t.Fatal(err)
	}
	versions := map[domain.AccountID]int64{}
	for i, p := range plays {
		stream := domain.AccountID("player:acme:" + p.player + ":" + p.currency)
		versions[stream]++
		e := domain.Event{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1), Type: domain.EventBetPlaced,
			StreamID: stream, Version: versions[stream], Position: int64(i + 1), OccurredAt: p.day,
			Data: domain.EventData{ClientID: "acme", PlayerID: p.player, Provider: p.provider, GameID: p.game,
				RoundID: fmt.Sprint("r", i), ExternalTxID: fmt.Sprint("tx", i), Currency: p.currency, Amount: "-1.00",
				BalanceAfter: "9.00"}}
		if _, err := rm.Apply(t.Context(), hist, e); err != nil {
			t.Fatal(err)
		}
	}

	// Every range between these days, by currency, by month, and by
	// provider (counted from ggr_players), against a count of the plays.
	days := []time.Time{d(1, 1), d(1, 2), d(1, 30), d(1, 31), d(2, 1), d(2, 15), d(2, 28), d(2, 29), d(3, 1), d(3, 2),
		d(3, 30), d(3, 31), d(4, 1)}
	for i, from := range days {
		for _, to := range days[i:] {
			from := time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, time.UTC)
			to := time.Date(to.Year(), to.Month(), to.Day(), 0, 0, 0, 0, time.UTC)
			for _, by := range [][]projections.Dimension{nil, {projections.DimMonth}, {projections.DimProvider}} {
				want := map[string]map[string]bool{}
				for _, p := range plays {
					day := time.Date(p.day.Year(), p.day.Month(), p.day.Day(), 0, 0, 0, 0, time.UTC)
					if day.Before(from) || day.After(to) {
						continue
					}
					g := p.currency
					switch {
					case slices.Contains(by, projections.DimMonth):
						g = day.Format("2006-01") + " " + g
					case slices.Contains(by, projections.DimProvider):
						g = p.provider + " " + g
					}
					if want[g] == nil {
						want[g] = map[string]bool{}
					}
					want[g][p.player] = true
				}
				report, err := rm.GGR(t.Context(), projections.ReportQuery{ClientID: "acme", From: from, To: to, GroupBy: by})
				if err != nil {
					t.Fatal(err)
				}
				got := map[string]int64{}
				for _, r := range report {
					g := r.Currency
					switch {
					case slices.Contains(by, projections.DimMonth):
						g = r.Period.Format("2006-01") + " " + g
					case slices.Contains(by, projections.DimProvider):
						g = r.Provider + " " + g
					}
					got[g] = r.Players
				}
				for g, ps := range want {
					if got[g] != int64(len(ps)) {
						t.Errorf("%s..%s by %v: %s has %d players, want %d", from.Format(time.DateOnly),
							to.Format(time.DateOnly), by, g, got[g], len(ps))
					}
				}
				if len(got) != len(want) {
					t.Errorf("%s..%s by %v: groups %v, want %v", from.Format(time.DateOnly), to.Format(time.DateOnly), by, got, want)
				}
			}
		}
	}
}

// A page of one type, or of one player, is found from the marks (every
// projections.MarkEvery-th numbered row of each): every page, at every
// depth, is the plain query's, with an exact total, while some rows are
// not yet numbered; and a rebuild makes the same counts and marks.
func TestFilterPagesFromMarks(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDatabase(t)
	// Three players per client: each has thousands of rows, so marks.
	if _, err := eventstore.SeedEvents(context.Background(), pool, eventstore.SeedOptions{Events: 12000, Clients: 2,
		PlayersPerClient: 3, Seed: 7}); err != nil {
		t.Fatalf("seed: %v", err)
	}
	rm := readstore.NewReadModels(pool).WithCountBudget(testCountBudget)
	evs := storetest.StoredEvents(t, pool, 0)
	storetest.ApplyLive(t, rm, evs[:11500], 3)
	for _, n := range projections.All {
		p, _ := projections.ByName(n)
		for _, e := range evs[11500:] {
			if err := storetest.ApplyOne(rm, p, e); err != nil {
				t.Fatal(err)
			}
		}
	}
	ctx := context.Background()
	marks := map[string]int{}
	rows, _ := pool.Query(ctx, `SELECT filter, count(*) FROM readmodels.tx_filter_marks GROUP BY 1`)
	var (
		filter string
		n      int
	)
	if _, err := pgx.ForEachRow(rows, []any{&filter, &n}, func() error { marks[filter] = n; return nil }); err != nil ||
		marks[projections.FilterType] < 2 || marks[projections.FilterPlayer] < 2 {
		t.Fatalf("marks per filter %v (%v): the test proves nothing", marks, err)
	}
	for _, f := range []projections.TransactionFilter{
		{ClientID: "client-1", Type: projections.TypeBet},
		{ClientID: "client-2", Type: projections.TypeWin},
		{ClientID: "client-1", Type: projections.TypeGameResult},
		{ClientID: "client-1", Type: projections.TypeWithdrawal},
		{ClientID: "client-1", PlayerID: "player-2"},
		{ClientID: "client-2", PlayerID: "player-3"},
		{ClientID: "client-2", PlayerID: "nobody"},
	} {
		rows, _ := pool.Query(ctx, `SELECT id::text FROM readmodels.transactions
			WHERE client_id = $1 AND ($2 = '' OR type = $2) AND ($3 = '' OR player_id = $3)
			ORDER BY seq DESC, sub DESC`, f.ClientID, string(f.Type), f.PlayerID)
		want, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{50, 7} {
			step := 1
			if size == 7 {
				step = 11
			}
			for page := 1; page <= len(want)/size+2; page += step {
				got, err := rm.Transactions(ctx, f, projections.Page{Number: page, Size: size})
				if err != nil {
					t.Fatalf("%+v page %d: %v", f, page, err)
				}
				lo, hi := min((page-1)*size, len(want)), min(page*size, len(want))
				ids := make([]string, len(got.Rows))
				for j, r := range got.Rows {
					ids[j] = r.ID
				}
				if strings.Join(ids, ",") != strings.Join(want[lo:hi], ",") {
					t.Fatalf("%+v page %d of %d: got %d rows %v, want %d %v", f, page, size, len(ids), ids, hi-lo, want[lo:hi])
				}
				if !got.TotalExact || got.Total != int64(len(want)) {
					t.Fatalf("%+v page %d: total %d exact %v, want %d", f, page, got.Total, got.TotalExact, len(want))
				}
			}
		}
	}
	rep := rmCompare(t, rm, readstore.ReplayOptions{})
	if rep.Differences() != 0 || rep.Rebuilt["tx_filter_marks"] != int64(marks[projections.FilterType]+marks[projections.FilterPlayer]) ||
		rep.Rebuilt["tx_filter_counts"] == 0 {
		t.Fatalf("rebuild of %d marks (%v live):\n%s", rep.Rebuilt["tx_filter_marks"], marks, rmDiffSummary(rep))
	}
}

// The watermark stops just before the first event not yet applied, however
// far past the step's first chunk it lies, and moves on once it is applied.
func TestAdvanceStopsAtTheFirstUnapplied(t *testing.T) {
	t.Parallel()
	for _, hole := range []int{30, 200, 700, 2500} { // in the first, second, third and fourth chunk
		t.Run(strconv.Itoa(hole), func(t *testing.T) {
			t.Parallel()
			pool, rm := rmSeeded(t, 3000)
			evs := storetest.StoredEvents(t, pool, 0)
			ctx := context.Background()
			h := evs[hole]
			for _, n := range projections.All {
				p, _ := projections.ByName(n)
				for _, e := range evs {
					if e.StreamID == h.StreamID && e.Version >= h.Version {
						continue // the hole, and its stream's later events (they wait for it)
					}
					if err := storetest.ApplyOne(rm, p, e); err != nil {
						t.Fatal(err)
					}
				}
				if pos, err := rm.Advance(ctx, n); err != nil || pos != h.Position-1 {
					t.Fatalf("%s watermark with event %d missing = %d (%v), want %d", n, h.Position, pos, err, h.Position-1)
				}
				for _, e := range evs {
					if err := storetest.ApplyOne(rm, p, e); err != nil {
						t.Fatal(err)
					}
				}
				if pos, err := rm.Advance(ctx, n); err != nil || pos != evs[len(evs)-1].Position {
					t.Fatalf("%s watermark after every event = %d (%v), want %d", n, pos, err, evs[len(evs)-1].Position)
				}
			}
		})
	}
}

// peakRSS is the process's VmHWM line from /proc/self/status.
func peakRSS() string {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return err.Error()
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
