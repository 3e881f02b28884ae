package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/gateway"
)

// The read side at scale: a generated ledger of cfg.Events events (COPY,
// seed.go), the read models rebuilt from it by `pitboss replay`, then
// `pitboss serve --roles api` on it and the query endpoints timed one call
// at a time.

// ReadReport is the read benchmark's outcome.
type ReadReport struct {
	Events         int64              `json:"events"`
	Seed           seedResult         `json:"seed"`
	SeedEventsPerS float64            `json:"seed_events_per_second"`
	Replay         ReplayTiming       `json:"replay"`
	Verify         VerifyTiming       `json:"verify"`
	Since          *SinceTiming       `json:"verify_since,omitempty"` // since.go
	Sizes          map[string]float64 `json:"table_sizes_mb"`
	Queries        []QueryResult      `json:"queries"`
}

// ReplayTiming is `pitboss replay --full --swap` on the generated ledger.
type ReplayTiming struct {
	Seconds      float64 `json:"seconds"`           // the whole command: rebuild, compare, swap
	EventsPerSec float64 `json:"events_per_second"` // as the command reports it: events / (read and apply + write shadow)
	WallPerSec   float64 `json:"wall_events_per_second"`
	// PeakRSSMB is the command's peak resident memory (its budget:
	// PITBOSS_REPLAY_MEMORY, default 512 MB; docs/read-models.md).
	PeakRSSMB float64 `json:"peak_rss_mb"`
	Summary   string  `json:"summary"`
}

// VerifyTiming is `pitboss verify` (every check: the hash chain, double
// entry, the account folds and the read models rebuilt in a scratch schema
// and compared) on the generated ledger, after the replay.
type VerifyTiming struct {
	Seconds      float64 `json:"seconds"`
	EventsPerSec float64 `json:"events_per_second"` // events / Seconds: the whole command
	PeakRSSMB    float64 `json:"peak_rss_mb"`
	OK           bool    `json:"ok"`
	Summary      string  `json:"summary"`
}

// QueryResult is one endpoint's latency over repeated calls.
type QueryResult struct {
	Name    string           `json:"name"`
	Path    string           `json:"path"`
	Latency Latency          `json:"latency"`
	Errors  map[string]int64 `json:"errors,omitempty"`
	Note    string           `json:"note,omitempty"`
}

var replayRate = regexp.MustCompile(`; ([0-9]+) events/s`)

func runRead(ctx context.Context, cfg config, logf func(string, ...any)) (*ReadReport, error) {
	rep := &ReadReport{Sizes: map[string]float64{}}
	dbURL, err := recreateDatabase(ctx, cfg.ServerDB, cfg.ReadDB)
	if err != nil {
		return nil, err
	}
	if !cfg.Keep {
		defer func() {
			dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := dropDatabase(dctx, cfg.ServerDB, cfg.ReadDB); err != nil {
				logf("read: drop %s: %v", cfg.ReadDB, err)
			}
		}()
	}
	svc, err := newService(cfg, serviceSpec{Name: "read", DBURL: dbURL, LogLevel: cfg.LogLevel,
		Extra: []string{"PITBOSS_LOG_ORIGIN=" + benchLogOrigin}})
	if err != nil {
		return nil, err
	}
	if _, err := svc.command(ctx, "migrate"); err != nil {
		return nil, err
	}
	pool, err := postgres.Connect(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer pool.Close()

	logf("read: generating %d events into %s (COPY)", cfg.Events, cfg.ReadDB)
	seed, err := seedLedger(ctx, pool, seedOptions{Events: cfg.Events, Seed: 1, Progress: func(n int) {
		if n%1_000_000 == 0 || cfg.Events < 1_000_000 {
			logf("read: %d events", n)
		}
	}})
	if err != nil {
		return nil, err
	}
	rep.Seed, rep.Events = seed, seed.Events
	rep.SeedEventsPerS = float64(seed.Events) / seed.Took.Seconds()
	logf("read: %d events in %s (copy %s, indexes %s): %.0f events/s", seed.Events, seed.Took.Round(time.Second),
		seed.Copy.Round(time.Second), seed.Index.Round(time.Second), rep.SeedEventsPerS)
	// Vacuumed as an aged ledger is: autovacuum would otherwise take the
	// freshly copied events (11.6 GB at 10M) during whichever step comes
	// next, and it was seen doing so under `verify --since`.
	t0 := time.Now()
	if err := vacuum(ctx, pool, "events", "accounts"); err != nil {
		return nil, err
	}
	logf("read: vacuumed in %s", time.Since(t0).Round(time.Second))

	// `pitboss replay` rebuilds in position slices within its memory
	// budget (docs/read-models.md, default 512 MB, PITBOSS_REPLAY_MEMORY),
	// whatever the ledger's size: nothing to check against the machine.
	logf("read: pitboss replay --full --swap")
	t0 = time.Now()
	out, err := svc.command(ctx, "replay", "--full", "--swap", "--quiet")
	rep.Replay.Seconds = time.Since(t0).Seconds()
	if err != nil {
		return rep, err
	}
	rep.Replay.Summary = lastLines(out, 8)
	rep.Replay.PeakRSSMB = svc.lastPeakRSSMB
	if m := replayRate.FindSubmatch(out); m != nil {
		rep.Replay.EventsPerSec, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	rep.Replay.WallPerSec = float64(seed.Events) / rep.Replay.Seconds
	logf("read: replay took %.1fs (%.0f events/s by its own count, %.0f over the whole command); peak RSS %.0f MB",
		rep.Replay.Seconds, rep.Replay.EventsPerSec, rep.Replay.WallPerSec, rep.Replay.PeakRSSMB)
	if _, err := pool.Exec(ctx, `ANALYZE`); err != nil {
		return nil, err
	}
	for _, t := range []string{"events", "accounts", "readmodels.transactions", "readmodels.tx_order", "readmodels.balances",
		"readmodels.ggr_daily", "readmodels.ggr_players", "readmodels.ggr_player_months", "readmodels.ggr_rounds"} {
		var b int64
		if err := pool.QueryRow(ctx, `SELECT pg_total_relation_size($1::regclass)`, t).Scan(&b); err == nil {
			rep.Sizes[t] = float64(b) / (1 << 20)
		}
	}

	// The generated operators get clients and keys, as `pitboss client`
	// and `pitboss key` would make them.
	gw := gatewaystore.NewGateway(pool)
	keys := map[string]string{}
	for _, c := range seed.Clients {
		if _, err := gw.CreateClient(ctx, c, "Benchmark operator "+c, "sandbox"); err != nil {
			return rep, err
		}
		k, _, err := gw.IssueKey(ctx, c, gateway.AllScopes, nil)
		if err != nil {
			return rep, err
		}
		keys[c] = k
	}
	if err := svc.start(ctx, "api"); err != nil {
		return rep, err
	}
	defer svc.stop()
	if rep.Queries, err = timeQueries(ctx, cfg, svc.base, keys, seed, logf); err != nil {
		return rep, err
	}
	// The verifiable log and verify --since before the full verify: the
	// day's events an incremental audit reads were written that day and
	// are in the page cache, as they are after the log's build here;
	// after the full verify they are not (its scratch copy evicts them:
	// 1.42 s instead of 0.71 at 10M, a measure of the cache).
	since, err := timeSince(ctx, pool, svc, rep.Events, logf)
	rep.Since = &since
	if err != nil {
		return rep, err
	}
	// verify last: its rebuild writes and reads a scratch copy of every
	// read model (10 GB at 10M events), which leaves the page cache cold
	// for the live tables. Run before the queries, it put the player
	// filter's first page at 57 ms p99 (5.6 ms p50) at 10M events: a
	// measure of the cache after a verification, not of the query.
	return rep, timeVerify(ctx, svc, rep, logf)
}

func timeQueries(ctx context.Context, cfg config, base string, keys map[string]string, seed seedResult,
	logf func(string, ...any)) ([]QueryResult, error) {
	client := seed.Clients[0] // the largest operator (60 % of the players)
	op := operator{http: newHTTPClient(4), base: base, key: keys[client]}
	var first struct {
		Pagination struct {
			Total int64 `json:"total"`
		} `json:"pagination"`
	}
	if err := op.get(ctx, "/api/v1/transactions?per_page=50", &first); err != nil {
		return nil, err
	}
	lastPage := max((first.Pagination.Total+49)/50, 1)
	var players []seedPlayerRef
	for _, p := range seed.Players {
		if p.Client == client {
			players = append(players, p)
		}
	}
	if len(players) == 0 {
		return nil, fmt.Errorf("no sample player of %s", client)
	}
	var ptotal struct {
		Pagination struct {
			Total int64 `json:"total"`
		} `json:"pagination"`
	}
	if err := op.get(ctx, "/api/v1/transactions?per_page=50&player_id="+url.QueryEscape(players[0].Player), &ptotal); err != nil {
		return nil, err
	}
	playerLast := max((ptotal.Pagination.Total+49)/50, 1)
	day := seed.To.AddDate(0, 0, -10).UTC().Truncate(24 * time.Hour)
	from, to := day.Format(time.RFC3339), day.Add(24*time.Hour).Format(time.RFC3339)

	type query struct {
		name string
		path func(i int) string
		note string
	}
	player := func(i int) string { return url.QueryEscape(players[i%len(players)].Player) }
	queries := []query{
		{"transactions, first page", func(int) string { return "/api/v1/transactions?per_page=50" },
			fmt.Sprintf("%d rows in the client's history", first.Pagination.Total)},
		{"transactions, middle page", func(int) string { return fmt.Sprintf("/api/v1/transactions?per_page=50&page=%d", lastPage/2) },
			fmt.Sprintf("page %d", lastPage/2)},
		{"transactions, last page", func(int) string { return fmt.Sprintf("/api/v1/transactions?per_page=50&page=%d", lastPage) },
			fmt.Sprintf("page %d", lastPage)},
		{"transactions, player filter, first page", func(i int) string { return "/api/v1/transactions?per_page=50&player_id=" + player(i) },
			"a different player each call"},
		{"transactions, player filter, last page", func(int) string {
			return fmt.Sprintf("/api/v1/transactions?per_page=50&player_id=%s&page=%d", url.QueryEscape(players[0].Player), playerLast)
		}, fmt.Sprintf("page %d of one player's %d rows", playerLast, ptotal.Pagination.Total)},
		{"transactions, type=bet, first page", func(int) string { return "/api/v1/transactions?per_page=50&type=bet" }, ""},
		{"transactions, type=bet, page 200", func(int) string { return "/api/v1/transactions?per_page=50&type=bet&page=200" },
			"10,000 rows deep"},
		{"transactions, type=bet, page 2000", func(int) string { return "/api/v1/transactions?per_page=50&type=bet&page=2000" },
			"100,000 rows deep: the walk starts at the nearest mark (docs/read-models.md)"},
		{"transactions, one day, first page", func(int) string {
			return "/api/v1/transactions?per_page=50&from=" + url.QueryEscape(from) + "&to=" + url.QueryEscape(to)
		}, "from/to of one UTC day"},
		{"wallet balance (player)", func(i int) string { return "/api/v1/wallet/balance?player_id=" + player(i) },
			"the committed accounts table"},
		{"GGR report, 30 days", func(int) string { return "/api/v1/reports/ggr" }, "the default: the 30 days up to today"},
		{"GGR report, 30 days by day, provider, game", func(int) string { return "/api/v1/reports/ggr?group_by=day,provider,game" }, ""},
		{"commission report, 30 days", func(int) string { return "/api/v1/reports/commission" }, ""},
	}
	var out []QueryResult
	for _, q := range queries {
		h := newHist()
		r := QueryResult{Name: q.name, Path: q.path(0), Note: q.note, Errors: map[string]int64{}}
		for i := range cfg.Samples + 3 {
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			start := time.Now()
			code := getStatus(ctx, op, q.path(i))
			took := time.Since(start)
			if code != "" {
				r.Errors[code]++
				continue
			}
			if i >= 3 { // three warm-up calls
				_ = h.RecordValue(max(took.Microseconds(), 1))
			}
		}
		r.Latency = latencyOf(h)
		if len(r.Errors) == 0 {
			r.Errors = nil
		}
		logf("read: %-45s p50 %7.2f ms  p99 %7.2f ms", q.name, r.Latency.P50, r.Latency.P99)
		out = append(out, r)
	}
	return out, nil
}

// getStatus GETs path and returns "" on 200, else a short description.
func getStatus(ctx context.Context, op operator, path string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, op.base+path, nil)
	if err != nil {
		return err.Error()
	}
	req.Header.Set("Authorization", "Bearer "+op.key)
	res, err := op.http.Do(req)
	if err != nil {
		return "transport: " + shortErr(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		var e errorAnswer
		_ = json.Unmarshal(b, &e)
		return fmt.Sprintf("HTTP %d %s", res.StatusCode, e.Error.Code)
	}
	return ""
}

// timeVerify runs `pitboss verify` over the generated ledger and its
// rebuilt read models. A ledger that does not verify is a failure of the
// benchmark (exit status 1 of verify), as a replay that fails is.
func timeVerify(ctx context.Context, svc *service, rep *ReadReport, logf func(string, ...any)) error {
	logf("read: pitboss verify")
	t0 := time.Now()
	out, err := svc.command(ctx, "verify", "--quiet", "--record=false")
	rep.Verify.Seconds = time.Since(t0).Seconds()
	rep.Verify.Summary = lastLines(out, 12)
	rep.Verify.PeakRSSMB = svc.lastPeakRSSMB
	if err != nil {
		return err
	}
	rep.Verify.OK = true
	rep.Verify.EventsPerSec = float64(rep.Events) / rep.Verify.Seconds
	logf("read: verify took %.1fs (%.0f events/s over the whole command); peak RSS %.0f MB",
		rep.Verify.Seconds, rep.Verify.EventsPerSec, rep.Verify.PeakRSSMB)
	return nil
}

// vacuum runs VACUUM (ANALYZE) on each table, one statement each (VACUUM
// refuses a transaction block).
func vacuum(ctx context.Context, pool *pgxpool.Pool, tables ...string) error {
	for _, t := range tables {
		if _, err := pool.Exec(ctx, "VACUUM (ANALYZE) "+pgx.Identifier{t}.Sanitize()); err != nil {
			return fmt.Errorf("vacuum %s: %w", t, err)
		}
	}
	return nil
}
