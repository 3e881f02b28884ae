package readstore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
)

// ReplayOptions configures a rebuild of the read models from the event
// store.
type ReplayOptions struct {
	// Full applies every event up to the head. By default the rebuild
	// applies, per projection and stream, exactly the events the live read
	// models have applied (their checkpoints, read in the same snapshot as
	// the live tables it is compared with), so a difference is a real one
	// and never the projector's lag.
	Full bool
	// Shadow writes the rebuild into the shadow schema, replacing what is
	// there, ready for Swap.
	Shadow bool
	// Examples bounds the differences listed per table. Default 10.
	Examples int
	// PassEvents bounds the events rebuilt in memory at once (default
	// DefaultPassEvents): clients are rebuilt in passes of at most this
	// many events, the largest first; a client with more gets a pass of
	// its own. Memory is about 1.2 GB of live heap per million events in
	// a pass (plus the Go GC's headroom: set GOMEMLIMIT to bound it).
	PassEvents int64
	// Progress, when set, is called about every 200ms while events are
	// read and once when they are all applied.
	Progress func(ReplayProgress)
}

// ReplayProgress tells how far a rebuild got.
type ReplayProgress struct {
	Events  int64 // events read so far
	Total   int64 // events in the store when the rebuild began
	Elapsed time.Duration
	Done    bool
}

// ReplayReport is the outcome of a rebuild and its comparison with the
// live read models.
type ReplayReport struct {
	Events   int64 // events read
	Skipped  int64 // events a projection could not apply (dead letters)
	Head     int64 // position of the last event read
	Full     bool
	Read     time.Duration // reading and applying the events
	Write    time.Duration // writing the shadow schema
	Compare  time.Duration
	Tables   []TableDiff
	Rebuilt  map[string]int64 // rows per rebuilt table
	Passes   int              // rebuilds in memory, one per group of clients
	Shadowed bool
}

// Differences is the number of rows that differ, over every table.
func (r ReplayReport) Differences() int64 {
	var n int64
	for _, t := range r.Tables {
		n += t.Missing + t.Extra + t.Changed
	}
	return n
}

// TableDiff compares one live table with its rebuild.
type TableDiff struct {
	Table   string
	Live    int64 // rows in the live table
	Rebuilt int64
	Missing int64 // rebuilt rows the live table lacks
	Extra   int64 // live rows the rebuild does not have
	Changed int64 // rows in both whose values differ
	// Examples are the first differences, one line each.
	Examples []string
}

// DefaultPassEvents is ReplayOptions.PassEvents' default: about 5 GB of
// live heap.
const DefaultPassEvents = 4_000_000

// Compare rebuilds every read model from the event store (read straight
// from Postgres in position order) and compares the rebuild with the live
// tables, row by row. With opts.Shadow it also writes the rebuild into the
// shadow schema for Swap. It is what `pitboss replay` runs, and what an
// auditor's tool calls to check the read models against a recomputation.
//
// It rebuilds the clients in passes (opts.PassEvents): every read-model row
// belongs to the client of the events that made it, and every stream id
// names its client (its second part), so a pass needs only its clients'
// events, read through events_client_position_idx. Memory is then bounded
// by the pass, not the whole store (about 1.2 GB of live heap per million
// events: 10 million events did not fit in 23 GB in one). Passes are few
// because each one reads the heap pages its clients' events share with
// other clients' again. The watermarks (positions) are the store's,
// written and compared once.
func (m *ReadModels) Compare(ctx context.Context, opts ReplayOptions) (ReplayReport, error) {
	if opts.Examples <= 0 {
		opts.Examples = 10
	}
	if opts.PassEvents <= 0 {
		opts.PassEvents = DefaultPassEvents
	}
	rep := ReplayReport{Full: opts.Full, Rebuilt: map[string]int64{}}
	conn, err := m.pool.Acquire(ctx)
	if err != nil {
		return rep, fmt.Errorf("acquire connection: %w", err)
	}
	defer conn.Release()
	// One snapshot for the events, the live checkpoints and the live tables.
	// It is read-only: it has no transaction id, so it does not hold the
	// relay back (only running writers do).
	snap, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return rep, fmt.Errorf("begin snapshot: %w", err)
	}
	defer snap.Rollback(ctx)

	clients, total, head, err := eventClients(ctx, snap)
	if err != nil {
		return rep, err
	}
	var live map[projections.StreamKey]int64
	watermark := map[projections.Name]int64{}
	for _, p := range projections.All {
		watermark[p] = head
	}
	if !opts.Full {
		if live, err = m.liveCheckpoints(ctx, snap); err != nil {
			return rep, err
		}
		for _, p := range projections.All {
			var pos int64
			if err := snap.QueryRow(ctx, m.sql.position, string(p)).Scan(&pos); err != nil {
				return rep, fmt.Errorf("watermark of %s: %w", p, err)
			}
			watermark[p] = pos
		}
	}
	if opts.Shadow {
		if err := m.createShadow(ctx); err != nil {
			return rep, err
		}
	}

	diffs := make([]TableDiff, len(rmTables))
	for i, tb := range rmTables {
		diffs[i] = TableDiff{Table: tb.name}
	}
	merge := func(i int, d TableDiff) {
		t := &diffs[i]
		t.Live += d.Live
		t.Rebuilt += d.Rebuilt
		t.Missing += d.Missing
		t.Extra += d.Extra
		t.Changed += d.Changed
		t.Examples = append(t.Examples, d.Examples[:min(len(d.Examples), opts.Examples-len(t.Examples))]...)
	}
	began := time.Now()
	progress := replayProgress{report: opts.Progress, total: total, start: began, last: began}
	names := make([]string, 0, len(clients))
	for _, pass := range replayPasses(clients, opts.PassEvents) {
		names = append(names, pass.clients...)
		rep.Passes++
		start := time.Now()
		mem := projections.NewMemorySized(int(pass.events))
		only := pass.clients
		if len(pass.clients) == len(clients) {
			only = nil // every event
		}
		if err := replayEvents(ctx, snap, mem, live, &rep, only, &progress); err != nil {
			return rep, err
		}
		for _, p := range projections.All {
			mem.SetWatermark(p, watermark[p])
		}
		rb := newRebuilt(mem) // no positions: the store's, written once below
		rep.Read += time.Since(start)

		start = time.Now()
		if opts.Shadow {
			if err := m.copyShadow(ctx, rb, clientTables); err != nil {
				return rep, err
			}
		}
		rep.Write += time.Since(start)

		start = time.Now()
		for i, tb := range rmTables {
			if tb.client == "" {
				continue
			}
			rows := tb.rows(rb)
			rep.Rebuilt[tb.name] += int64(rows.n)
			d, err := m.diffTable(ctx, snap, tb, rows, opts.Examples, tb.client+" = ANY($1)", pass.clients)
			if err != nil {
				return rep, err
			}
			merge(i, d)
		}
		rep.Compare += time.Since(start)
	}
	if progress.report != nil {
		progress.report(ReplayProgress{Events: rep.Events, Total: total, Elapsed: time.Since(began), Done: true})
	}
	rep.Head = max(rep.Head, head)

	// The watermarks, and whatever live rows belong to no client of the
	// store (all extra).
	start := time.Now()
	global := &rebuilt{}
	for _, p := range projections.All {
		global.positions = append(global.positions, checkpointRow{projection: string(p), position: watermark[p]})
	}
	slices.SortFunc(global.positions, func(a, b checkpointRow) int { return strings.Compare(a.projection, b.projection) })
	if opts.Shadow {
		if err := m.copyShadow(ctx, global, globalTables); err != nil {
			return rep, err
		}
		if err := m.markShadowWritten(ctx); err != nil {
			return rep, err
		}
		rep.Shadowed = true
	}
	rep.Write += time.Since(start)
	start = time.Now()
	for i, tb := range rmTables {
		rows := tb.rows(global)
		if tb.client == "" {
			rep.Rebuilt[tb.name] += int64(rows.n)
			d, err := m.diffTable(ctx, snap, tb, rows, opts.Examples, "")
			if err != nil {
				return rep, err
			}
			merge(i, d)
			continue
		}
		d, err := m.diffTable(ctx, snap, tb, rows, opts.Examples, "NOT ("+tb.client+" = ANY($1))", names)
		if err != nil {
			return rep, err
		}
		merge(i, d)
	}
	rep.Compare += time.Since(start)
	rep.Tables = diffs
	return rep, snap.Commit(ctx)
}

// replayPass is the clients rebuilt together, and their events.
type replayPass struct {
	clients []string
	events  int64
}

// replayPasses packs clients into passes of at most budget events, first
// fit in decreasing size (a client over the budget alone); passes are in
// the order of their largest client, clients within a pass in byte order.
func replayPasses(clients []eventClient, budget int64) []replayPass {
	bySize := slices.Clone(clients)
	slices.SortStableFunc(bySize, func(a, b eventClient) int { return cmp.Compare(b.events, a.events) })
	var passes []replayPass
	for _, c := range bySize {
		i := slices.IndexFunc(passes, func(p replayPass) bool { return p.events+c.events <= budget })
		if i < 0 {
			passes = append(passes, replayPass{})
			i = len(passes) - 1
		}
		passes[i].clients = append(passes[i].clients, c.client)
		passes[i].events += c.events
	}
	for _, p := range passes {
		slices.Sort(p.clients)
	}
	return passes
}

// LargestReplayPass is the most events a rebuild with passes of at most
// budget events holds in memory at once, for the store as it is now.
func LargestReplayPass(ctx context.Context, pool *pgxpool.Pool, budget int64) (int64, error) {
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return 0, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx)
	clients, _, _, err := eventClients(ctx, tx)
	if err != nil {
		return 0, err
	}
	var largest int64
	for _, p := range replayPasses(clients, budget) {
		largest = max(largest, p.events)
	}
	return largest, nil
}

// eventClient is one client of the event store and how many events name it.
type eventClient struct {
	client string
	events int64
}

// eventClients lists the clients the store's streams name, in byte order,
// with the number of events, the total and the head position.
func eventClients(ctx context.Context, tx pgx.Tx) ([]eventClient, int64, int64, error) {
	rows, _ := tx.Query(ctx, `SELECT split_part(stream_id, ':', 2) AS client, count(*), max(position)
		FROM events GROUP BY 1 ORDER BY split_part(stream_id, ':', 2) COLLATE "C"`)
	var (
		out         []eventClient
		total, head int64
	)
	var (
		c     eventClient
		maxID int64
	)
	_, err := pgx.ForEachRow(rows, []any{&c.client, &c.events, &maxID}, func() error {
		out = append(out, c)
		total += c.events
		head = max(head, maxID)
		return nil
	})
	if err != nil {
		return nil, 0, 0, fmt.Errorf("count events per client: %w", err)
	}
	return out, total, head, nil
}

// replayProgress reports a rebuild's progress about every 200 ms.
type replayProgress struct {
	report      func(ReplayProgress)
	total       int64
	start, last time.Time
}

func (p *replayProgress) tick(events int64) {
	if p.report != nil && time.Since(p.last) >= 200*time.Millisecond {
		p.last = time.Now()
		p.report(ReplayProgress{Events: events, Total: p.total, Elapsed: time.Since(p.start)})
	}
}

func (m *ReadModels) liveCheckpoints(ctx context.Context, tx pgx.Tx) (map[projections.StreamKey]int64, error) {
	rows, _ := tx.Query(ctx, `SELECT projection, stream_id, version FROM `+m.t("checkpoints"))
	out := map[projections.StreamKey]int64{}
	var (
		p, s string
		v    int64
	)
	_, err := pgx.ForEachRow(rows, []any{&p, &s, &v}, func() error {
		out[projections.StreamKey{Projection: projections.Name(p), StreamID: s}] = v
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read live checkpoints: %w", err)
	}
	return out, nil
}

// rawEvent is one stored event before decoding.
type rawEvent struct {
	position, version int64
	stream            string
	body              []byte
}

type replayChunk struct {
	seq    int
	raws   []rawEvent
	events []domain.Event
	errs   []error
}

const replayChunkSize = 1024

// replayEvents reads every event (of the clients' streams, if any are named)
// in position order (client by client) and applies it to mem:
// one goroutine reads, the others decode chunks in parallel, and this one
// applies them in order. live, when not nil, limits each projection to the
// versions it holds.
func replayEvents(ctx context.Context, tx pgx.Tx, mem *projections.Memory, live map[projections.StreamKey]int64,
	rep *ReplayReport, clients []string, progress *replayProgress) error {
	projs := make([]projections.Projection, 0, len(projections.All))
	for _, n := range projections.All {
		p, err := projections.ByName(n)
		if err != nil {
			return err
		}
		projs = append(projs, p)
	}
	// Every event: the position index, the heap read in order. Some
	// clients: client by client, each one range of
	// events_client_position_idx in position order (events of different
	// clients never touch the same read-model rows, so only the order
	// within a client, and so within a stream, matters). For a client with
	// most of the store the planner prefers a sequential scan and a sort of
	// every body (gigabytes, on disk); the index range reads the heap in
	// position order, that is nearly sequentially, and needs no sort.
	query, args := `SELECT position, stream_id, stream_version, body FROM events ORDER BY position`, []any(nil)
	if clients != nil {
		query, args = `SELECT position, stream_id, stream_version, body FROM events
			WHERE split_part(stream_id, ':', 2) = ANY($1) ORDER BY split_part(stream_id, ':', 2), position`, []any{clients}
		if err := setIndexOnly(ctx, tx, true); err != nil {
			return err
		}
		defer func() { _ = setIndexOnly(context.WithoutCancel(ctx), tx, false) }()
	}
	g, gctx := errgroup.WithContext(ctx)
	workers := max(runtime.GOMAXPROCS(0), 1)
	todo := make(chan *replayChunk, workers*2)
	done := make(chan *replayChunk, workers*2)
	g.Go(func() error {
		defer close(todo)
		rows, err := tx.Query(gctx, query, args...)
		if err != nil {
			return fmt.Errorf("read events: %w", err)
		}
		defer rows.Close()
		c := &replayChunk{}
		for rows.Next() {
			v := rows.RawValues()
			var r rawEvent
			if err := rows.Scan(&r.position, &r.stream, &r.version, nil); err != nil {
				return fmt.Errorf("read event: %w", err)
			}
			r.body = bytes.Clone(v[3])
			c.raws = append(c.raws, r)
			if len(c.raws) == replayChunkSize {
				select {
				case todo <- c:
				case <-gctx.Done():
					return gctx.Err()
				}
				c = &replayChunk{seq: c.seq + 1}
			}
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read events: %w", err)
		}
		if len(c.raws) > 0 {
			select {
			case todo <- c:
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		return nil
	})
	var decoders errgroup.Group
	for range workers {
		decoders.Go(func() error {
			for c := range todo {
				c.events = make([]domain.Event, len(c.raws))
				c.errs = make([]error, len(c.raws))
				for i, r := range c.raws {
					c.events[i], c.errs[i] = domain.DecodeBody(r.body)
					c.raws[i].body = nil
				}
				select {
				case done <- c:
				case <-gctx.Done():
					return gctx.Err()
				}
			}
			return nil
		})
	}
	g.Go(func() error {
		err := decoders.Wait()
		close(done)
		return err
	})
	g.Go(func() error {
		pending := map[int]*replayChunk{}
		next := 0
		for c := range done {
			pending[c.seq] = c
			for {
				c, ok := pending[next]
				if !ok {
					break
				}
				delete(pending, next)
				next++
				for i, r := range c.raws {
					applyReplayed(mem, projs, live, r, c.events[i], c.errs[i], rep)
				}
				progress.tick(rep.Events)
			}
		}
		return nil
	})
	return g.Wait()
}

// setIndexOnly turns the planner's sequential and bitmap scans off (on) for
// the rest of tx, or back on.
func setIndexOnly(ctx context.Context, tx pgx.Tx, on bool) error {
	v := "on"
	if on {
		v = "off"
	}
	if _, err := tx.Exec(ctx, `SELECT set_config('enable_seqscan', $1, true), set_config('enable_bitmapscan', $1, true)`, v); err != nil {
		return fmt.Errorf("set up the event scan: %w", err)
	}
	return nil
}

// applyReplayed applies one stored event to every projection, the way the
// projector would: an event a projection cannot apply (undecodable or
// invalid) moves its checkpoint on, as a dead letter does.
func applyReplayed(mem *projections.Memory, projs []projections.Projection, live map[projections.StreamKey]int64,
	r rawEvent, e domain.Event, decodeErr error, rep *ReplayReport) {
	rep.Events++
	rep.Head = max(rep.Head, r.position)
	skipped := false
	for _, p := range projs {
		if live != nil && r.version > live[projections.StreamKey{Projection: p.Name(), StreamID: r.stream}] {
			continue
		}
		if decodeErr != nil {
			mem.Skip(p.Name(), r.stream, r.version, r.position)
			skipped = true
			continue
		}
		if _, err := mem.Apply(p, e); err != nil {
			mem.Skip(p.Name(), r.stream, r.version, r.position)
			skipped = true
		}
	}
	if skipped {
		rep.Skipped++
	}
}

// rebuilt holds a Memory's rows sorted the way the diff reads the live
// tables.
type rebuilt struct {
	txs          []*projections.Transaction
	order        []orderRow
	counts       []orderRow // rn is the count
	days         []dayRow
	filterCounts []filterCountRow
	marks        []markRow
	balances     []*projections.Balance
	ggr          []*projections.GGRDelta
	players      []projections.GGRMember
	months       []monthRow
	rounds       []roundRow
	checkpoints  []checkpointRow
	positions    []checkpointRow
}

type orderRow struct {
	client string
	rn     int64
	id     string
}

type dayRow struct {
	client   string
	day      time.Time
	min, max int64
}

type filterCountRow struct {
	key  projections.FilterValue
	rows int64
}

type markRow struct {
	key  projections.FilterValue
	mark projections.Mark
}

type monthRow struct {
	key  projections.PlayerMonth
	days int64
}

type roundRow struct {
	key   projections.RoundKey
	start projections.RoundStart
}

type checkpointRow struct {
	projection, stream string
	version, position  int64
}

func newRebuilt(m *projections.Memory) *rebuilt {
	rb := &rebuilt{}
	rb.txs = make([]*projections.Transaction, 0, m.Len())
	m.Transactions(func(t *projections.Transaction) { rb.txs = append(rb.txs, t) })
	// The history (most of the rows) is sorted beside the other tables.
	sorted := make(chan struct{})
	go func() {
		defer close(sorted)
		sortByID(rb.txs)
	}()
	defer func() { <-sorted }()
	// Each client's rows are numbered in order already: taking the clients
	// in order needs no sort of the rows.
	clients := slices.Sorted(maps.Keys(m.Order))
	n := 0
	for _, c := range clients {
		n += len(m.Order[c])
	}
	rb.order = make([]orderRow, 0, n)
	for _, c := range clients {
		ids := m.Order[c]
		for i, id := range ids {
			rb.order = append(rb.order, orderRow{client: c, rn: int64(i + 1), id: id})
		}
		rb.counts = append(rb.counts, orderRow{client: c, rn: int64(len(ids))})
	}
	for k, n := range m.FilterCounts {
		rb.filterCounts = append(rb.filterCounts, filterCountRow{key: k, rows: n})
	}
	slices.SortFunc(rb.filterCounts, func(a, b filterCountRow) int {
		return cmp.Or(strings.Compare(a.key.ClientID, b.key.ClientID), strings.Compare(a.key.Filter, b.key.Filter),
			strings.Compare(a.key.Value, b.key.Value))
	})
	for _, c := range rb.filterCounts {
		for _, mk := range m.FilterMarks[c.key] { // in rank order
			rb.marks = append(rb.marks, markRow{key: c.key, mark: mk})
		}
	}
	for k, r := range m.Days {
		rb.days = append(rb.days, dayRow{client: k.ClientID, day: k.Day, min: r.Min, max: r.Max})
	}
	slices.SortFunc(rb.days, func(a, b dayRow) int { return cmp.Or(strings.Compare(a.client, b.client), a.day.Compare(b.day)) })
	for _, b := range m.Balances {
		rb.balances = append(rb.balances, b)
	}
	slices.SortFunc(rb.balances, func(a, b *projections.Balance) int { return strings.Compare(string(a.Account), string(b.Account)) })
	for _, g := range m.GGR {
		rb.ggr = append(rb.ggr, g)
	}
	slices.SortFunc(rb.ggr, func(a, b *projections.GGRDelta) int { return cmpGGRKey(a.GGRKey, b.GGRKey) })
	for p := range m.Players {
		rb.players = append(rb.players, p)
	}
	for k, d := range m.PlayerMonths {
		rb.months = append(rb.months, monthRow{key: k, days: d})
	}
	slices.SortFunc(rb.months, func(a, b monthRow) int {
		return cmp.Or(strings.Compare(a.key.ClientID, b.key.ClientID), a.key.Month.Compare(b.key.Month),
			strings.Compare(a.key.Currency, b.key.Currency), strings.Compare(a.key.PlayerID, b.key.PlayerID))
	})
	for k, s := range m.Rounds {
		rb.rounds = append(rb.rounds, roundRow{key: k, start: s})
	}
	byMember := func(a, b projections.GGRMember) int {
		return cmp.Or(cmpGGRKey(a.GGRKey, b.GGRKey), strings.Compare(a.Member, b.Member))
	}
	slices.SortFunc(rb.players, byMember)
	slices.SortFunc(rb.rounds, func(a, b roundRow) int {
		return cmp.Or(strings.Compare(a.key.ClientID, b.key.ClientID), strings.Compare(a.key.Provider, b.key.Provider),
			strings.Compare(a.key.Currency, b.key.Currency), strings.Compare(a.key.Round, b.key.Round))
	})
	for k, c := range m.Checkpoints {
		rb.checkpoints = append(rb.checkpoints, checkpointRow{projection: string(k.Projection), stream: k.StreamID,
			version: c.Version, position: c.Position})
	}
	byCheckpoint := func(a, b checkpointRow) int {
		return cmp.Or(strings.Compare(a.projection, b.projection), strings.Compare(a.stream, b.stream))
	}
	slices.SortFunc(rb.checkpoints, byCheckpoint)
	return rb
}

// sortByID sorts history rows by id the way Postgres orders uuids: by
// their bytes (for the canonical lower-case text, also the strings'
// order). It compares parsed 16-byte keys kept beside the pointers rather
// than the id strings two pointers away: sorting 15 million rows by their
// strings was about a tenth of a 10-million-event replay's CPU. An id that
// is not a uuid falls back to sorting by the strings.
func sortByID(txs []*projections.Transaction) {
	type keyed struct {
		hi, lo uint64
		t      *projections.Transaction
	}
	keys := make([]keyed, len(txs))
	for i, t := range txs {
		b, ok := postgres.ParseUUID(t.ID)
		if !ok {
			slices.SortFunc(txs, func(a, b *projections.Transaction) int { return strings.Compare(a.ID, b.ID) })
			return
		}
		keys[i] = keyed{hi: binary.BigEndian.Uint64(b[:8]), lo: binary.BigEndian.Uint64(b[8:]), t: t}
	}
	slices.SortFunc(keys, func(a, b keyed) int { return cmp.Or(cmp.Compare(a.hi, b.hi), cmp.Compare(a.lo, b.lo)) })
	for i := range keys {
		txs[i] = keys[i].t
	}
}

func cmpGGRKey(a, b projections.GGRKey) int {
	return cmp.Or(strings.Compare(a.ClientID, b.ClientID), a.Day.Compare(b.Day), strings.Compare(a.Provider, b.Provider),
		strings.Compare(a.Game, b.Game), strings.Compare(a.Currency, b.Currency))
}

// tableRows yields the rows of one rebuilt table in key order.
type tableRows struct {
	n   int
	row func(i int) []any
}

// rmTable describes one read-model table for the shadow copy and the diff.
type rmTable struct {
	name string
	// cols are the stored columns (generated ones left out), selects the
	// expressions the diff reads them with.
	cols, selects []string
	types         []colType
	key           int // the first key columns are the key
	// where, if set, leaves live rows out of the comparison: a batch that
	// only skipped or refused an event of a new stream leaves its
	// checkpoint at version 0, which is no state at all.
	where string
	order string // the ORDER BY matching the rebuilt order
	// client is the expression of a row's client; "" for a table of the
	// whole store (positions).
	client string
	rows   func(*rebuilt) tableRows
}

// clientTables hold rows of one client each; globalTables of the store.
var clientTables, globalTables = splitTables(rmTables)

func splitTables(all []rmTable) (perClient, global []rmTable) {
	for _, tb := range all {
		if tb.client != "" {
			perClient = append(perClient, tb)
		} else {
			global = append(global, tb)
		}
	}
	return perClient, global
}

var rmTables = []rmTable{
	{name: "transactions", client: "client_id", key: 1, order: "id",
		types: []colType{colUUID, colText, colText, colInt8, colText, colInt2, colText, colTimestamptz, colText, colText,
			colText, colText, colText, colText, colInt8, colInt2, colInt8, colInt8, colBool, colInt8, colInt8, colInt8, colBool},
		cols: []string{"id", "client_id", "type", "amount", "currency", "scale", "base_status", "created_at",
			"provider", "game", "player_id", "round_id", "external_id", "reference_id", "seq", "sub", "position",
			"balance_after", "promo", "open_bets", "rolled_bets", "wins", "closed"},
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.txs), row: func(i int) []any {
				t := rb.txs[i]
				args := txArgs(*t)
				if t.Type == projections.TypeGameResult {
					// Stored as given; the status column derives from the
					// counters.
					args[6] = string(projections.StatusPending)
				}
				return args
			}}
		}},
	{name: "tx_order", client: "client_id", key: 2, order: `client_id COLLATE "C", rn`, cols: []string{"client_id", "rn", "id"},
		types: []colType{colText, colInt8, colUUID},
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.order), row: func(i int) []any {
				o := rb.order[i]
				return []any{o.client, o.rn, o.id}
			}}
		}},
	{name: "tx_counts", client: "client_id", key: 1, order: `client_id COLLATE "C"`, cols: []string{"client_id", "rows"},
		types: []colType{colText, colInt8},
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.counts), row: func(i int) []any { return []any{rb.counts[i].client, rb.counts[i].rn} }}
		}},
	{name: "tx_days", client: "client_id", key: 2, order: `client_id COLLATE "C", day`, cols: []string{"client_id", "day", "min_seq", "max_seq"},
		types: []colType{colText, colDate, colInt8, colInt8},
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.days), row: func(i int) []any {
				d := rb.days[i]
				return []any{d.client, d.day, d.min, d.max}
			}}
		}},
	{name: "tx_filter_counts", client: "client_id", key: 3, order: `client_id COLLATE "C", filter COLLATE "C", value COLLATE "C"`,
		cols: []string{"client_id", "filter", "value", "rows"}, types: []colType{colText, colText, colText, colInt8},
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.filterCounts), row: func(i int) []any {
				c := rb.filterCounts[i]
				return []any{c.key.ClientID, c.key.Filter, c.key.Value, c.rows}
			}}
		}},
	{name: "tx_filter_marks", client: "client_id", key: 4, order: `client_id COLLATE "C", filter COLLATE "C", value COLLATE "C", rn`,
		cols:  []string{"client_id", "filter", "value", "rn", "seq", "sub"},
		types: []colType{colText, colText, colText, colInt8, colInt8, colInt2},
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.marks), row: func(i int) []any {
				k := rb.marks[i]
				return []any{k.key.ClientID, k.key.Filter, k.key.Value, k.mark.Rank, k.mark.Seq, k.mark.Sub}
			}}
		}},
	{name: "balances", client: "client_id", key: 1, order: `account_id COLLATE "C"`,
		cols:  []string{"account_id", "kind", "client_id", "player_id", "currency", "scale", "balance", "position"},
		types: []colType{colText, colText, colText, colText, colText, colInt2, colInt8, colInt8},
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.balances), row: func(i int) []any {
				b := rb.balances[i]
				return []any{string(b.Account), b.Kind, b.ClientID, nullText(b.PlayerID), b.Currency, b.Scale, b.Balance, b.Position}
			}}
		}},
	{name: "ggr_daily", client: "client_id", key: 5, order: `client_id COLLATE "C", day, provider COLLATE "C", game COLLATE "C", currency COLLATE "C"`,
		cols: []string{"client_id", "day", "provider", "game", "currency", "scale", "bets", "bet_refunds", "wins",
			"win_reversals", "promo_bets", "promo_bet_refunds", "promo_wins", "promo_win_reversals", "rounds"},
		types: []colType{colText, colDate, colText, colText, colText, colInt2, colInt8, colInt8, colInt8, colInt8, colInt8,
			colInt8, colInt8, colInt8, colInt8},
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.ggr), row: func(i int) []any {
				g := rb.ggr[i]
				return []any{g.ClientID, g.Day, g.Provider, g.Game, g.Currency, g.Scale, g.Bets, g.BetRefunds, g.Wins,
					g.WinReversals, g.PromoBets, g.PromoBetRefunds, g.PromoWins, g.PromoWinReversals, g.Rounds}
			}}
		}},
	{name: "ggr_players", client: "client_id", key: 6, order: `client_id COLLATE "C", day, provider COLLATE "C", game COLLATE "C", currency COLLATE "C", player_id COLLATE "C"`,
		cols:  []string{"client_id", "day", "provider", "game", "currency", "player_id"},
		types: []colType{colText, colDate, colText, colText, colText, colText},
		rows:  func(rb *rebuilt) tableRows { return memberRows(rb.players) }},
	{name: "ggr_player_months", client: "client_id", key: 4, order: `client_id COLLATE "C", month, currency COLLATE "C", player_id COLLATE "C"`,
		cols:  []string{"client_id", "month", "currency", "player_id", "days"},
		types: []colType{colText, colDate, colText, colText, colInt8},
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.months), row: func(i int) []any {
				r := rb.months[i]
				return []any{r.key.ClientID, r.key.Month, r.key.Currency, r.key.PlayerID, r.days}
			}}
		}},
	{name: "ggr_rounds", client: "client_id", key: 4, order: `client_id COLLATE "C", provider COLLATE "C", currency COLLATE "C", round_key COLLATE "C"`,
		cols:  []string{"client_id", "provider", "currency", "round_key", "day", "game"},
		types: []colType{colText, colText, colText, colText, colDate, colText},
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.rounds), row: func(i int) []any {
				r := rb.rounds[i]
				return []any{r.key.ClientID, r.key.Provider, r.key.Currency, r.key.Round, r.start.Day, r.start.Game}
			}}
		}},
	{name: "checkpoints", client: "split_part(stream_id, ':', 2)", key: 2, order: `projection COLLATE "C", stream_id COLLATE "C"`, where: "version > 0",
		cols:  []string{"projection", "stream_id", "version", "position"},
		types: []colType{colText, colText, colInt8, colInt8},
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.checkpoints), row: func(i int) []any {
				c := rb.checkpoints[i]
				return []any{c.projection, c.stream, c.version, c.position}
			}}
		}},
	{name: "positions", key: 1, order: `projection COLLATE "C"`, cols: []string{"projection", "position"},
		types: []colType{colText, colInt8},
		rows: func(rb *rebuilt) tableRows {
			return tableRows{n: len(rb.positions), row: func(i int) []any {
				return []any{rb.positions[i].projection, rb.positions[i].position}
			}}
		}},
}

func memberRows(ms []projections.GGRMember) tableRows {
	return tableRows{n: len(ms), row: func(i int) []any {
		m := ms[i]
		return []any{m.ClientID, m.Day, m.Provider, m.Game, m.Currency, m.Member}
	}}
}

// diffTable reads the live table's rows matching cond (with args; "" for
// all) in key order and merges them with the rebuilt rows.
func (m *ReadModels) diffTable(ctx context.Context, tx pgx.Tx, tb rmTable, rb tableRows, examples int, cond string, args ...any) (TableDiff, error) {
	d := TableDiff{Table: tb.name, Rebuilt: int64(rb.n)}
	sel := make([]string, len(tb.cols))
	for i, c := range tb.cols {
		sel[i] = pgx.Identifier{c}.Sanitize()
		if c == "id" {
			sel[i] = "id::text"
		}
	}
	var conds []string
	for _, c := range []string{tb.where, cond} {
		if c != "" {
			conds = append(conds, "("+c+")")
		}
	}
	where := ""
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	rows, err := tx.Query(ctx, `SELECT `+strings.Join(sel, ", ")+` FROM `+m.t(tb.name)+where+` ORDER BY `+tb.order, args...)
	if err != nil {
		return d, fmt.Errorf("read live %s: %w", tb.name, err)
	}
	defer rows.Close()
	note := func(format string, args ...any) {
		if len(d.Examples) < examples {
			d.Examples = append(d.Examples, fmt.Sprintf(format, args...))
		}
	}
	i := 0
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return d, fmt.Errorf("read live %s: %w", tb.name, err)
		}
		live := normRow(vals)
		d.Live++
		for ; i < rb.n; i++ {
			want := normRow(rb.row(i))
			c := cmpKey(want[:tb.key], live[:tb.key])
			if c > 0 {
				break
			}
			if c < 0 {
				d.Missing++
				note("%s %s: missing from the live table", tb.name, keyText(tb, want))
				continue
			}
			if diffs := changedCols(tb, want, live); diffs != "" {
				d.Changed++
				note("%s %s: %s", tb.name, keyText(tb, want), diffs)
			}
			i++
			goto next
		}
		d.Extra++
		note("%s %s: in the live table, not in the rebuild", tb.name, keyText(tb, live))
	next:
	}
	if err := rows.Err(); err != nil {
		return d, fmt.Errorf("read live %s: %w", tb.name, err)
	}
	for ; i < rb.n; i++ {
		d.Missing++
		note("%s %s: missing from the live table", tb.name, keyText(tb, normRow(rb.row(i))))
	}
	return d, nil
}

// normRow makes live and rebuilt values comparable: integers as int64,
// times in UTC, uuids as text.
func normRow(vals []any) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		switch x := v.(type) {
		case int:
			out[i] = int64(x)
		case int16:
			out[i] = int64(x)
		case int32:
			out[i] = int64(x)
		case time.Time:
			out[i] = x.UTC()
		case [16]byte:
			out[i] = postgres.UUIDText(x)
		case pgtype.UUID:
			out[i] = postgres.UUIDText(x.Bytes)
		default:
			out[i] = v
		}
	}
	return out
}

func cmpKey(a, b []any) int {
	for i := range a {
		if c := cmpValue(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

// cmpValue orders normalised key values as the diff's ORDER BY does
// (text in "C" collation: bytewise).
func cmpValue(a, b any) int {
	switch x := a.(type) {
	case string:
		y, _ := b.(string)
		return strings.Compare(x, y)
	case int64:
		y, _ := b.(int64)
		return cmp.Compare(x, y)
	case time.Time:
		y, _ := b.(time.Time)
		return x.Compare(y)
	}
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

func equalValue(a, b any) bool {
	if ta, ok := a.(time.Time); ok {
		tb, ok := b.(time.Time)
		return ok && ta.Equal(tb)
	}
	return a == b
}

func changedCols(tb rmTable, want, live []any) string {
	var diffs []string
	for i := tb.key; i < len(tb.cols); i++ {
		if !equalValue(want[i], live[i]) {
			diffs = append(diffs, fmt.Sprintf("%s live=%v rebuilt=%v", tb.cols[i], show(live[i]), show(want[i])))
		}
	}
	return strings.Join(diffs, ", ")
}

func keyText(tb rmTable, row []any) string {
	parts := make([]string, tb.key)
	for i := range parts {
		parts[i] = tb.cols[i] + "=" + fmt.Sprint(show(row[i]))
	}
	return strings.Join(parts, " ")
}

func show(v any) any {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case time.Time:
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
			return x.Format(time.DateOnly)
		}
		return x.Format(time.RFC3339Nano)
	}
	return v
}

// Markers of the shadow schema (its comment): written by a rebuild, then
// made ready (logged, keyed, indexed) by the first step of Swap.
const (
	shadowWritten = "pitboss rebuild written"
	shadowReady   = "pitboss rebuild ready"
)

// The shadow schema is written in three steps. createShadow replaces it
// with empty tables: the live tables' columns and checks, UNLOGGED and
// without keys or indexes. copyShadow appends rebuilt rows by binary COPY,
// a few tables at a time (once per client). That is the cheapest way to put
// millions of rows down; Swap makes them durable and indexes them before
// they go live. markShadowWritten comes last, so Swap never takes a
// half-written schema.
func (m *ReadModels) createShadow(ctx context.Context) error {
	shadow := pgx.Identifier{postgres.ShadowSchema}.Sanitize()
	tx, err := m.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `DROP SCHEMA IF EXISTS `+shadow+` CASCADE`); err != nil {
		return fmt.Errorf("drop shadow schema: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE SCHEMA `+shadow); err != nil {
		return fmt.Errorf("create shadow schema: %w", err)
	}
	for _, tb := range rmTables {
		if _, err := tx.Exec(ctx, `CREATE UNLOGGED TABLE `+pgx.Identifier{postgres.ShadowSchema, tb.name}.Sanitize()+
			` (LIKE `+m.t(tb.name)+` INCLUDING ALL EXCLUDING INDEXES)`); err != nil {
			return fmt.Errorf("create shadow %s: %w", tb.name, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("create shadow tables: %w", err)
	}
	return nil
}

// copyShadow appends rb's rows of tables to the shadow schema.
func (m *ReadModels) copyShadow(ctx context.Context, rb *rebuilt, tables []rmTable) error {
	g, gctx := errgroup.WithContext(ctx)
	// A few tables at a time, leaving a connection for the snapshot.
	g.SetLimit(max(min(3, int(m.pool.Config().MaxConns)-1), 1))
	for _, tb := range tables {
		g.Go(func() error {
			conn, err := m.pool.Acquire(gctx)
			if err != nil {
				return fmt.Errorf("acquire connection: %w", err)
			}
			defer conn.Release()
			cols := make([]string, len(tb.cols))
			for i, c := range tb.cols {
				cols[i] = pgx.Identifier{c}.Sanitize()
			}
			_, err = conn.Conn().PgConn().CopyFrom(gctx, newBinaryCopy(tb.rows(rb), tb.types),
				`COPY `+pgx.Identifier{postgres.ShadowSchema, tb.name}.Sanitize()+` (`+strings.Join(cols, ", ")+`) FROM STDIN WITH (FORMAT binary)`)
			if err != nil {
				return fmt.Errorf("copy shadow %s: %w", tb.name, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// markShadowWritten marks a fully copied shadow schema ready for Swap.
func (m *ReadModels) markShadowWritten(ctx context.Context) error {
	shadow := pgx.Identifier{postgres.ShadowSchema}.Sanitize()
	if _, err := m.pool.Exec(ctx, `COMMENT ON SCHEMA `+shadow+` IS '`+shadowWritten+`'`); err != nil {
		return fmt.Errorf("mark shadow schema written: %w", err)
	}
	return nil
}

// shadowState is the marker on the shadow schema, "" when there is none.
func (m *ReadModels) shadowState(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (string, error) {
	var state *string
	err := q.QueryRow(ctx, `SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1`, postgres.ShadowSchema).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && state == nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("find shadow schema: %w", err)
	}
	return *state, nil
}

// prepareShadow makes a written shadow schema ready to go live: each table
// logged (durable), then given the live table's keys and indexes under
// the same names, then vacuumed and analysed. Tables are prepared a few at a time, each in one
// transaction; it runs before Swap takes its lock, so the projectors do
// not wait for it.
func (m *ReadModels) prepareShadow(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(min(3, int(m.pool.Config().MaxConns)-1), 1))
	for _, tb := range rmTables {
		g.Go(func() error { return m.prepareShadowTable(gctx, tb) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if _, err := m.pool.Exec(ctx, `COMMENT ON SCHEMA `+pgx.Identifier{postgres.ShadowSchema}.Sanitize()+` IS '`+shadowReady+`'`); err != nil {
		return fmt.Errorf("mark shadow schema ready: %w", err)
	}
	return nil
}

func (m *ReadModels) prepareShadowTable(ctx context.Context, tb rmTable) error {
	tx, err := m.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx)
	target := pgx.Identifier{postgres.ShadowSchema, tb.name}
	if _, err := tx.Exec(ctx, `SET LOCAL maintenance_work_mem = '256MB'`); err != nil {
		return fmt.Errorf("shadow %s: %w", tb.name, err)
	}
	if _, err := tx.Exec(ctx, `ALTER TABLE `+target.Sanitize()+` SET LOGGED`); err != nil {
		return fmt.Errorf("log shadow %s: %w", tb.name, err)
	}
	// The live table's constraints (primary key, unique) and its other
	// indexes, under the same names in the shadow schema.
	rows, _ := tx.Query(ctx, `
		SELECT 'ALTER TABLE ' || $3 || ' ADD CONSTRAINT ' || quote_ident(c.conname) || ' ' || pg_get_constraintdef(c.oid)
		FROM pg_constraint c WHERE c.conrelid = $1::regclass AND c.contype IN ('p', 'u')
		UNION ALL
		SELECT replace(pg_get_indexdef(i.indexrelid), ' ON ' || quote_ident($2) || '.', ' ON ' || quote_ident($4) || '.')
		FROM pg_index i WHERE i.indrelid = $1::regclass
		  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`,
		m.t(tb.name), m.schema, target.Sanitize(), postgres.ShadowSchema)
	ddl, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("read the definition of %s: %w", tb.name, err)
	}
	for _, stmt := range ddl {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("shadow %s: %s: %w", tb.name, stmt, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit shadow %s: %w", tb.name, err)
	}
	// VACUUM (outside a transaction) sets the visibility map of the freshly
	// copied pages, so the history's counts and deep pages are index-only
	// scans from the first query after the swap, not one heap visit per
	// row until autovacuum comes by (measured at 5M events right after a
	// rebuild: a player filter's page 78 ms, type=bet at offset 100k
	// 152 ms); and ANALYZE gives the planner the new tables' statistics.
	if _, err := m.pool.Exec(ctx, `VACUUM (ANALYZE) `+target.Sanitize()); err != nil {
		return fmt.Errorf("vacuum shadow %s: %w", tb.name, err)
	}
	return nil
}

// SwapReport tells what Swap did.
type SwapReport struct {
	// CaughtUp is the number of events the live projector had applied since
	// the rebuild's snapshot, applied to the rebuild before the swap.
	CaughtUp int
}

// ErrNoShadow is returned by Swap when there is no rebuilt schema.
var ErrNoShadow = errors.New("no rebuilt read models to swap in: run a rebuild with Shadow first")

// Swap makes the shadow schema the live read models, atomically. In one
// transaction it blocks the projectors' writes (they wait, then carry on
// against the new tables), applies to the shadow tables every event the live
// checkpoints have and the shadow's do not (what the projectors did since
// the rebuild's snapshot), moves the shadow's watermarks, and renames the
// schemas. Queries never see a half-swapped state.
func (m *ReadModels) Swap(ctx context.Context) (SwapReport, error) {
	var rep SwapReport
	state, err := m.shadowState(ctx, m.pool)
	if err != nil {
		return rep, err
	}
	switch state {
	case shadowWritten:
		if err := m.prepareShadow(ctx); err != nil {
			return rep, err
		}
	case shadowReady:
	default:
		return rep, ErrNoShadow
	}
	tx, err := m.pool.Begin(ctx)
	if err != nil {
		return rep, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx)
	if state, err := m.shadowState(ctx, tx); err != nil {
		return rep, err
	} else if state != shadowReady {
		return rep, ErrNoShadow // another swap took it meanwhile
	}
	if _, err := tx.Exec(ctx, `LOCK TABLE `+m.t("checkpoints")+` IN EXCLUSIVE MODE`); err != nil {
		return rep, fmt.Errorf("lock live checkpoints: %w", err)
	}
	shadow := newReadModelsIn(m.pool, postgres.ShadowSchema)
	rows, _ := tx.Query(ctx, `SELECT l.projection, l.stream_id, coalesce(s.version, 0), l.version
		FROM `+m.t("checkpoints")+` l LEFT JOIN `+shadow.t("checkpoints")+` s USING (projection, stream_id)
		WHERE l.version > coalesce(s.version, 0) ORDER BY l.projection, l.stream_id`)
	type behind struct {
		p        projections.Name
		stream   string
		from, to int64
	}
	lag, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (behind, error) {
		var b behind
		var p string
		err := r.Scan(&p, &b.stream, &b.from, &b.to)
		b.p = projections.Name(p)
		return b, err
	})
	if err != nil {
		return rep, fmt.Errorf("compare checkpoints: %w", err)
	}
	for _, b := range lag {
		proj, err := projections.ByName(b.p)
		if err != nil {
			return rep, err
		}
		rows, _ := tx.Query(ctx, `SELECT position, stream_version, body FROM events
			WHERE stream_id = $1 AND stream_version > $2 AND stream_version <= $3 ORDER BY stream_version`, b.stream, b.from, b.to)
		evs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (rawEvent, error) {
			var e rawEvent
			err := r.Scan(&e.position, &e.version, &e.body)
			return e, err
		})
		if err != nil {
			return rep, fmt.Errorf("read events of %s: %w", b.stream, err)
		}
		for _, raw := range evs {
			e, err := domain.DecodeBody(raw.body)
			if err == nil {
				_, err = shadow.applyOn(ctx, tx, proj, e, false)
				if err != nil && !errors.Is(err, projections.ErrInvalidEvent) {
					return rep, fmt.Errorf("catch up %s of %s at version %d: %w", b.p, b.stream, raw.version, err)
				}
			}
			if err != nil {
				// The live projector dead-lettered it: so does the rebuild.
				if _, err := tx.Exec(ctx, shadow.sql.skipCheckpoint, string(b.p), b.stream, raw.version, raw.position); err != nil {
					return rep, fmt.Errorf("skip %s of %s: %w", b.p, b.stream, err)
				}
			}
			rep.CaughtUp++
		}
	}
	for _, p := range projections.All {
		for {
			_, more, err := shadow.advanceStep(ctx, tx, p, false)
			if err != nil {
				return rep, err
			}
			if !more {
				break
			}
		}
	}
	old := pgx.Identifier{postgres.ReadModelSchema + "_old"}.Sanitize()
	for _, stmt := range []string{
		`COMMENT ON SCHEMA ` + pgx.Identifier{postgres.ShadowSchema}.Sanitize() + ` IS NULL`,
		`ALTER SCHEMA ` + pgx.Identifier{m.schema}.Sanitize() + ` RENAME TO ` + old,
		`ALTER SCHEMA ` + pgx.Identifier{postgres.ShadowSchema}.Sanitize() + ` RENAME TO ` + pgx.Identifier{m.schema}.Sanitize(),
		`DROP SCHEMA ` + old + ` CASCADE`,
	} {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return rep, fmt.Errorf("swap schemas: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return rep, fmt.Errorf("commit swap: %w", err)
	}
	return rep, nil
}
