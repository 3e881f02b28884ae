package readstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/pitboss/pitboss/adapters/postgres/readstore/replaypass"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
)

// DefaultReplayMemory is ReplayOptions.Memory's default: 512 MB.
const DefaultReplayMemory = 512 << 20

// replayBytesPerEvent is what one event of a slice costs the rebuild at
// its peak, resident: its history rows, game result, lookups and members
// in a projections.Memory (about 1.2 KB of live heap), and the Go
// collector's headroom over that.
const replayBytesPerEvent = 3 << 10

// minSliceEvents keeps a tiny budget from making a slice of every event.
const minSliceEvents = 10_000

// StagingSchema holds what a rebuild in slices carries from one slice to
// the end (game-result parts, late rollback marks, round starts, members):
// created with the shadow schema, dropped once the shadow schema is
// written.
const StagingSchema = "readmodels_replay"

// sliceEvents is how many events one slice of a rebuild holds.
func (o ReplayOptions) sliceEvents() int64 {
	if o.SliceEvents > 0 {
		return o.SliceEvents
	}
	mem := o.Memory
	if mem <= 0 {
		mem = DefaultReplayMemory
	}
	// Two slices are in memory at once: one applied, one written.
	return max(mem/(2*replayBytesPerEvent), minSliceEvents)
}

// stagingTables are the tables of StagingSchema, each filled by COPY with
// the columns of rmTable like.
var stagingTables = []struct{ name, like string }{
	{"results", "transactions"}, // every slice's part of its game results
	{"rounds", "ggr_rounds"},    // every slice's round starts
	{"players", "ggr_players"},  // every slice's members
	{"months", "ggr_player_months"},
}

// Staging tables of their own: the bets and wins (for the rollbacks of a
// later slice) and the rollback marks of rows of an earlier slice.
var (
	gameTxTable = rmTable{name: "gametx", cols: []string{"client_id", "provider", "external_id", "type", "game", "promo", "seq", "jackpot", "position"},
		types: []colType{colText, colText, colText, colText, colText, colBool, colInt8, colInt8, colInt8},
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.gameTxs), row: func(i int) []any {
				t := rb.gameTxs[i]
				return []any{t.ClientID, t.Provider, t.ExternalTxID, string(t.Type), nullText(t.Game), t.Promo, t.Seq, t.Jackpot, t.Position}
			}}
		}}
	marksTable = rmTable{name: "marks", cols: []string{"client_id", "provider", "external_id", "position"},
		types: []colType{colText, colText, colText, colInt8},
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.lateMarks), row: func(i int) []any {
				k := rb.lateMarks[i]
				return []any{k.Key.ClientID, k.Key.Provider, k.Key.ExternalTxID, k.Position}
			}}
		}}
)

func tableNamed(name string) rmTable {
	i := slices.IndexFunc(rmTables, func(tb rmTable) bool { return tb.name == name })
	return rmTables[i]
}

// stagingCopies are the tables a slice appends to the staging schema.
func (m *ReadModels) stagingCopies() []rmTable {
	tx := tableNamed("transactions")
	results := tx
	results.name = "results"
	results.rows = func(rb *rebuilt) tableRows {
		return tableRows{n: len(rb.results), row: func(i int) []any {
			return txRowArgs(rb.results[i], projections.StatusPending) // as the history stores a game result
		}, appendRow: func(b []byte, i int) ([]byte, error) {
			return appendTxRow(b, rb.results[i], projections.StatusPending)
		}}
	}
	results.schema = m.staging
	rename := func(tb rmTable, name string) rmTable { tb.name, tb.schema = name, m.staging; return tb }
	return []rmTable{results, rename(tableNamed("ggr_rounds"), "rounds"), rename(tableNamed("ggr_players"), "players"),
		rename(tableNamed("ggr_player_months"), "months"), rename(gameTxTable, "gametx"), rename(marksTable, "marks")}
}

// noAutovacuum is the storage clause of the shadow and staging tables:
// they are written once and read by the rebuild's own statements, and
// autovacuum working through them meanwhile (seen on every one during a
// 10M-event replay) took CPU from the rebuild on a small box. The swap
// resets it (prepareShadowTable) and vacuums each table itself.
const noAutovacuum = ` WITH (autovacuum_enabled = false, toast.autovacuum_enabled = false)`

func (m *ReadModels) createStaging(ctx context.Context) error {
	staging := pgx.Identifier{m.staging}.Sanitize()
	stmts := []string{`DROP SCHEMA IF EXISTS ` + staging + ` CASCADE`, `CREATE SCHEMA ` + staging}
	for _, tb := range stagingTables {
		stmts = append(stmts, `CREATE UNLOGGED TABLE `+pgx.Identifier{m.staging, tb.name}.Sanitize()+
			` (LIKE `+pgx.Identifier{m.shadow, tb.like}.Sanitize()+`)`+noAutovacuum)
	}
	stmts = append(stmts,
		`CREATE UNLOGGED TABLE `+staging+`.gametx (client_id text NOT NULL, provider text NOT NULL,
			external_id text NOT NULL, type text NOT NULL, game text, promo boolean NOT NULL, seq bigint NOT NULL,
			jackpot bigint NOT NULL, position bigint NOT NULL)`+noAutovacuum,
		`CREATE UNLOGGED TABLE `+staging+`.marks (client_id text NOT NULL, provider text NOT NULL,
			external_id text NOT NULL, position bigint NOT NULL)`+noAutovacuum)
	for _, stmt := range stmts {
		if _, err := m.pool.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("create staging tables: %w", err)
		}
	}
	return nil
}

// earlierGameTx looks up on conn a bet or win that an earlier slice wrote:
// the last one with the key, as projections.Memory keeps it.
//
// The staging table's index is built at the first lookup, not with the
// table: most rebuilds never look there (a rollback's bet or win is
// nearly always in its own slice or the one before, both in memory), and
// keeping a three-text-column index up to date through every slice's
// COPY of its bets and wins cost more than the history's own COPY (2M
// events: 8.7 s of COPY against 7.2 s, in 25 slices). Built once, later
// slices' COPYs keep it up to date.
func earlierGameTx(ctx context.Context, conn *pgxpool.Conn, staging string, errp *error) projections.Lookup {
	table := pgx.Identifier{staging, "gametx"}.Sanitize()
	query := `SELECT type, coalesce(game, ''), promo, jackpot FROM ` + table + `
		WHERE client_id = $1 AND provider = $2 AND external_id = $3 ORDER BY seq DESC LIMIT 1`
	indexed := false
	return func(k projections.GameTxKey) (projections.GameTx, bool) {
		if !indexed {
			// A slice being written holds its COPY's lock until it
			// commits; the index waits for it (that slice is looked up
			// in memory meanwhile: slicer.earlier).
			if _, err := conn.Exec(ctx, `CREATE INDEX IF NOT EXISTS gametx_key ON `+table+
				` (client_id, provider, external_id)`); err != nil {
				if *errp == nil {
					*errp = fmt.Errorf("index the bets and wins of earlier slices: %w", err)
				}
				return projections.GameTx{}, false
			}
			indexed = true
		}
		var (
			g   projections.GameTx
			typ string
		)
		err := conn.QueryRow(ctx, query, k.ClientID, k.Provider, k.ExternalTxID).Scan(&typ, &g.Game, &g.Promo, &g.Jackpot)
		if errors.Is(err, pgx.ErrNoRows) {
			return g, false
		}
		if err != nil {
			if *errp == nil {
				*errp = fmt.Errorf("look up %s of an earlier slice: %w", k.ExternalTxID, err)
			}
			return g, false
		}
		g.Type = projections.TxType(typ)
		return g, true
	}
}

// slicer rebuilds the history in slices of at most size events: the
// balances, GGR amounts and checkpoints carry over (they are per wallet,
// group and stream, not per event), everything else of a slice goes to the
// shadow schema's history or to the staging schema when the slice ends. A
// slice is written while the next one is applied (one write at a time):
// until it is written, its bets and wins are looked up in it (prev).
type slicer struct {
	m       *ReadModels
	size    int64
	n       int64
	mem     *projections.Memory
	prev    *projections.Memory // the slice being written, if any
	pending chan error          // its write's outcome
	staged  projections.Lookup  // bets and wins of the slices written
	slices  int
	// A resumable rebuild records each slice once written (rec), with the
	// carried state it changed (track): see replay_resume.go.
	rec        *replaypass.Log
	track      *replaypass.Tracker
	rep        *ReplayReport
	last       int64 // position of the last event applied
	history    int64 // history rows of the slices written
	afterWrite func(pass int) error
	progress   *replayProgress
}

func (s *slicer) fresh() {
	next := projections.NewMemorySized(int(s.size))
	if s.mem != nil {
		next.Balances, next.GGR, next.Checkpoints = s.mem.Balances, s.mem.GGR, s.mem.Checkpoints
	}
	next.Earlier = s.earlier
	s.mem, s.n = next, 0
}

// earlier finds a bet or win of an earlier slice: in the one being
// written, or in the staging table.
func (s *slicer) earlier(k projections.GameTxKey) (projections.GameTx, bool) {
	if s.prev != nil {
		if g, ok := s.prev.Lookup(k); ok {
			return g, true
		}
	}
	return s.staged(k)
}

// flush ends the slice: it waits for the previous slice's write, then
// starts writing this one and starts the next slice.
func (s *slicer) flush(ctx context.Context) error {
	if s.n == 0 {
		return nil
	}
	if err := s.wait(); err != nil {
		return err
	}
	s.slices++
	pass := replaypass.Pass{N: s.slices, Position: s.last, Events: s.rep.Events, Skipped: s.rep.Skipped}
	var carry []replaypass.Carry
	if s.rec != nil {
		var err error
		if carry, err = s.track.Delta(s.mem, s.last); err != nil {
			return err
		}
	}
	s.progress.pass = s.slices + 1
	mem := s.mem
	mem.Earlier = nil // its own rows only (s.earlier asks the staging table)
	s.fresh()
	s.prev = mem
	done := make(chan error, 1)
	s.pending = done
	go func() { done <- s.writeSlice(ctx, mem, pass, carry) }()
	return nil
}

// wait waits for the slice being written, if any.
func (s *slicer) wait() error {
	if s.pending == nil {
		return nil
	}
	err := <-s.pending
	s.pending, s.prev = nil, nil
	return err
}

// writeSlice writes a slice's rows out: event rows to the shadow history,
// bets and wins, game-result parts, late marks, round starts and members
// to the staging tables.
func (s *slicer) writeSlice(ctx context.Context, mem *projections.Memory, pass replaypass.Pass, carry []replaypass.Carry) error {
	rb := &rebuilt{}
	mem.Transactions(func(t *projections.Transaction) {
		switch t.Type {
		case projections.TypeGameResult:
			rb.results = append(rb.results, t)
			return
		case projections.TypeBet, projections.TypeWin:
			rb.gameTxs = append(rb.gameTxs, t)
		}
		rb.txs = append(rb.txs, t)
	})
	rb.lateMarks = mem.LateMarks
	for p := range mem.Players {
		rb.players = append(rb.players, p)
	}
	for k, d := range mem.PlayerMonths {
		rb.months = append(rb.months, monthRow{key: k, days: d})
	}
	for k, st := range mem.Rounds {
		rb.rounds = append(rb.rounds, roundRow{key: k, start: st})
	}
	if err := s.m.copyTables(ctx, s.m.shadow, rb, append(s.m.stagingCopies(), tableNamed("transactions"))); err != nil {
		return err
	}
	s.history += int64(len(rb.txs))
	pass.History = s.history
	return s.record(ctx, pass, carry)
}

// finishSQL turns the staging tables into the shadow tables' remaining
// rows, set-based: three independent sequences of statements.
func (m *ReadModels) finishSQL() [][]string {
	sh := func(name string) string { return pgx.Identifier{m.shadow, name}.Sanitize() }
	st := func(name string) string { return pgx.Identifier{m.staging, name}.Sanitize() }
	txCols := strings.Join(tableNamed("transactions").cols, ", ")
	// A game result's parts (one per slice that changed it) add up as
	// projections.Transaction.AddGameResult adds them: sums, closed once
	// closed, the highest position, and the rest from the lowest seq (the
	// first slice's part: a later slice's events have higher positions).
	// One sort by (id, seq), the sums over each id's partition.
	cols := []string{}
	for _, c := range tableNamed("transactions").cols {
		switch c {
		case "amount", "open_bets", "rolled_bets", "wins":
			cols = append(cols, "sum("+c+") OVER w")
		case "closed":
			cols = append(cols, "bool_or(closed) OVER w")
		case "position":
			cols = append(cols, "max(position) OVER w")
		default:
			cols = append(cols, c)
		}
	}
	return [][]string{{
		`INSERT INTO ` + sh("transactions") + ` (` + txCols + `)
			SELECT DISTINCT ON (id) ` + strings.Join(cols, ", ") + ` FROM ` + st("results") + `
			WINDOW w AS (PARTITION BY id) ORDER BY id, seq`,
		// Rollbacks of bets and wins an earlier slice wrote: the live
		// projector's markRolledBack, once per row with the last mark.
		`UPDATE ` + sh("transactions") + ` t SET base_status = 'rolled_back', position = greatest(t.position, m.position)
			FROM (SELECT client_id, provider, external_id, max(position) AS position FROM ` + st("marks") + `
			      GROUP BY 1, 2, 3) m
			WHERE t.client_id = m.client_id AND t.provider = m.provider AND t.external_id = m.external_id
			  AND t.type IN ('bet', 'win')`,
	}, {
		// A round starts at its earliest (day, game) (projections.RoundStart)
		// and is counted in that group of the GGR. The key's round id
		// first: the sort then tells rows apart at the first column
		// instead of going through three texts most rows share (2M
		// events: 3.4 s → 1.6 s, the same rows).
		`INSERT INTO ` + sh("ggr_rounds") + ` (client_id, provider, currency, round_key, day, game)
			SELECT DISTINCT ON (round_key COLLATE "C", client_id COLLATE "C", provider COLLATE "C", currency COLLATE "C")
			       client_id, provider, currency, round_key, day, game
			FROM ` + st("rounds") + ` ORDER BY round_key COLLATE "C", client_id COLLATE "C", provider COLLATE "C",
			     currency COLLATE "C", day, game COLLATE "C"`,
		`UPDATE ` + sh("ggr_daily") + ` g SET rounds = r.n
			FROM (SELECT client_id, day, provider, game, currency, count(*) AS n FROM ` + sh("ggr_rounds") + `
			      GROUP BY 1, 2, 3, 4, 5) r
			WHERE g.client_id = r.client_id AND g.day = r.day AND g.provider = r.provider AND g.game = r.game
			  AND g.currency = r.currency`,
	}, {
		`INSERT INTO ` + sh("ggr_players") + ` SELECT DISTINCT * FROM ` + st("players"),
		`INSERT INTO ` + sh("ggr_player_months") + ` (client_id, month, currency, player_id, days)
			SELECT client_id, month, currency, player_id, bit_or(days) FROM ` + st("months") + ` GROUP BY 1, 2, 3, 4`,
	}}
}

// finishShadow writes what the slices carried: the balances, GGR (its
// rounds counted set-based) and checkpoints from memory, then the staging
// tables' rows and the numbering, set-based.
func (m *ReadModels) finishShadow(ctx context.Context, carried *projections.Memory, history int64, rep *ReplayReport) error {
	// The statistics the set-based finish is planned with (autovacuum,
	// which would have taken them at random moments, is off: noAutovacuum).
	analyze := []string{pgx.Identifier{m.shadow, "transactions"}.Sanitize()}
	for _, tb := range stagingTables {
		analyze = append(analyze, pgx.Identifier{m.staging, tb.name}.Sanitize())
	}
	analyze = append(analyze, pgx.Identifier{m.staging, "marks"}.Sanitize()) // gametx: read by lookups only
	if _, err := m.pool.Exec(ctx, `ANALYZE `+strings.Join(analyze, ", ")); err != nil {
		return fmt.Errorf("analyze the staging tables: %w", err)
	}
	if err := m.pool.QueryRow(ctx, `SELECT (SELECT count(*) - count(DISTINCT id) FROM `+
		pgx.Identifier{m.staging, "results"}.Sanitize()+`) + (SELECT count(*) FROM `+
		pgx.Identifier{m.staging, "marks"}.Sanitize()+`)`).Scan(&rep.LateChanges); err != nil {
		return fmt.Errorf("count late changes: %w", err)
	}
	rb := &rebuilt{}
	for _, b := range carried.Balances {
		rb.balances = append(rb.balances, b)
	}
	for _, g := range carried.GGR {
		g.Rounds = 0 // counted from ggr_rounds below
		rb.ggr = append(rb.ggr, g)
	}
	for k, c := range carried.Checkpoints {
		rb.checkpoints = append(rb.checkpoints, checkpointRow{projection: string(k.Projection), stream: k.StreamID,
			version: c.Version, position: c.Position})
	}
	if err := m.copyTables(ctx, m.shadow, rb,
		[]rmTable{tableNamed("balances"), tableNamed("ggr_daily"), tableNamed("checkpoints")}); err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	for i, seq := range m.finishSQL() {
		g.Go(func() error {
			for _, stmt := range seq {
				if err := m.execWithMemory(gctx, stmt); err != nil {
					return fmt.Errorf("finish the shadow tables: %w", err)
				}
			}
			if i == 0 { // the history is complete: number it
				return m.numberShadow(gctx, history)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if _, err := m.pool.Exec(ctx, `DROP SCHEMA `+pgx.Identifier{m.staging}.Sanitize()+` CASCADE`); err != nil {
		return fmt.Errorf("drop staging tables: %w", err)
	}
	return nil
}

// execWithMemory runs stmt (with args) in a transaction of its own whose
// sorts and hashes may use 256 MB (PostgreSQL's memory, per statement;
// Swap's index builds take as much) rather than spilling to disk in 4 MB
// runs: the numbering sorts every history row, about 70 MB a million.
func (m *ReadModels) execWithMemory(ctx context.Context, stmt string, args ...any) error {
	tx, err := m.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SET LOCAL work_mem = '256MB'`); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, stmt, args...); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// compareSliced is Compare with Shadow: the rebuild reads every event in
// position order, in slices of ReplayOptions.Memory's worth of events,
// and writes each slice out before the next (see docs/read-models.md,
// "Replay"); the comparison then reads the shadow tables back in key
// order beside the live ones. Its memory is bounded by the slice and the
// wallets, GGR groups and streams, not by the history.
func (m *ReadModels) compareSliced(ctx context.Context, opts ReplayOptions) (ReplayReport, error) {
	rep := ReplayReport{Full: opts.Full, Rebuilt: map[string]int64{}}
	// The snapshot and the lookups hold a connection each while a slice is
	// written on others.
	if n := m.pool.Config().MaxConns; n < 3 {
		return rep, fmt.Errorf("a rebuild in slices needs at least 3 database connections, the pool has %d (pool_max_conns)", n)
	}
	conn, err := m.pool.Acquire(ctx)
	if err != nil {
		return rep, fmt.Errorf("acquire connection: %w", err)
	}
	defer conn.Release()
	snap, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return rep, fmt.Errorf("begin snapshot: %w", err)
	}
	defer snap.Rollback(ctx)
	var total, head int64
	if err := snap.QueryRow(ctx, `SELECT count(*), coalesce(max(position), 0) FROM events`).Scan(&total, &head); err != nil {
		return rep, fmt.Errorf("count events: %w", err)
	}
	live, watermark, err := m.replayLimits(ctx, snap, opts.Full, head)
	if err != nil {
		return rep, err
	}
	lookups, err := m.pool.Acquire(ctx)
	if err != nil {
		return rep, fmt.Errorf("acquire connection: %w", err)
	}
	defer lookups.Release()
	var lookupErr error
	progress := replayProgress{report: opts.Progress, total: total, pass: 1}
	s := &slicer{m: m, size: opts.sliceEvents(), staged: earlierGameTx(ctx, lookups, m.staging, &lookupErr),
		rep: &rep, afterWrite: opts.AfterWrite, progress: &progress}
	progress.passes = int((total + s.size - 1) / s.size)
	s.fresh()
	if err := m.startSliced(ctx, opts, s); err != nil {
		return rep, err
	}
	if opts.Started != nil {
		opts.Started(rep.Resume)
	}
	defer func() { _ = s.wait() }() // on an error: no write outlives the rebuild
	projs, err := replayProjections()
	if err != nil {
		return rep, err
	}

	began := time.Now()
	progress.start, progress.resumed = began, rep.Events // last zero: the first chunk is reported
	err = replayEvents(ctx, snap, nil, s.last, &progress, func(r rawEvent, e domain.Event, decodeErr error) error {
		applyReplayed(s.mem, projs, live, r, e, decodeErr, &rep)
		s.last = r.position
		if lookupErr != nil {
			return lookupErr
		}
		if s.n++; s.n >= s.size {
			return s.flush(ctx)
		}
		return nil
	}, &rep)
	if err != nil {
		return rep, err
	}
	// Read: until the last event is applied (the slices' writes overlap
	// it); Write: the rest, until the shadow schema is written.
	rep.Read = time.Since(began)
	start := time.Now()
	if err := s.flush(ctx); err != nil {
		return rep, err
	}
	if err := s.wait(); err != nil {
		return rep, err
	}
	lookups.Release() // (again at the end: a no-op)
	progress.end(rep.Events)
	rep.Head = max(rep.Head, head)
	rep.Passes, rep.Slices = 1, s.slices
	global, err := m.finishSliced(ctx, s, watermark, &rep)
	if err != nil {
		return rep, err
	}
	rep.Write = time.Since(start)

	start = time.Now()
	if err := m.compareShadow(ctx, snap, global, opts.Examples, &rep); err != nil {
		return rep, err
	}
	rep.Compare = time.Since(start)
	return rep, snap.Commit(ctx)
}

// finishSliced finishes the shadow schema once every slice is written: the
// pass record says so, the history is numbered (finishShadow), the
// watermarks are written and the schema is marked written. It returns the
// rebuilt rows of the tables of no client, for the comparison.
func (m *ReadModels) finishSliced(ctx context.Context, s *slicer, watermark map[projections.Name]int64,
	rep *ReplayReport) (*rebuilt, error) {
	if s.rec != nil {
		if err := s.rec.Finishing(ctx); err != nil {
			return nil, err
		}
	}
	finish := time.Now()
	if err := m.finishShadow(ctx, s.mem, watermark[projections.History], rep); err != nil {
		return nil, err
	}
	rep.Finish = time.Since(finish)
	global := watermarkRows(watermark)
	if err := m.copyTables(ctx, m.shadow, global, globalTables); err != nil {
		return nil, err
	}
	if err := m.markShadowWritten(ctx); err != nil {
		return nil, err
	}
	rep.Shadowed = true
	return global, nil
}

// compareShadow compares each table of the written shadow schema with the
// live one in the snapshot snap: a client's table by digest first, read
// row by row only where the digests differ; the tables of no client with
// their rebuilt rows global.
func (m *ReadModels) compareShadow(ctx context.Context, snap pgx.Tx, global *rebuilt, examples int, rep *ReplayReport) error {
	salt, err := newDigestSalt()
	if err != nil {
		return err
	}
	for _, tb := range rmTables {
		var d TableDiff
		var digested bool
		if tb.client == "" {
			d, err = m.diffTable(ctx, snap, tb, &memoryRows{rows: tb.rows(global)}, examples, "")
		} else if d, digested, err = m.diffByDigest(ctx, snap, tb, salt, examples); err == nil && !digested {
			d, err = m.diffShadowTable(ctx, snap, tb, examples)
		}
		if err != nil {
			return err
		}
		rep.Rebuilt[tb.name] = d.Rebuilt
		rep.Tables = append(rep.Tables, d)
	}
	return nil
}
