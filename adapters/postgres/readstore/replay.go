package readstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

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
	// there, ready for Swap. Such a rebuild runs in bounded memory: in
	// position slices of at most Memory's worth of events, each written
	// out before the next, and compared with the live tables as it is
	// read back (see docs/read-models.md, "Replay").
	Shadow bool
	// Memory is the budget of a rebuild with Shadow, in bytes (default
	// DefaultReplayMemory): it sets the events of a slice.
	Memory int64
	// SliceEvents, when set, is the events of a slice instead (tests).
	SliceEvents int64
	// Examples bounds the differences listed per table. Default 10.
	Examples int
	// PassEvents bounds the events a rebuild without Shadow (a comparison
	// only) holds in memory at once (default
	// DefaultPassEvents): clients are rebuilt in passes of at most this
	// many events, the largest first; a client with more gets a pass of
	// its own. Memory is about 1.2 GB of live heap per million events in
	// a pass (plus the Go GC's headroom: set GOMEMLIMIT to bound it).
	PassEvents int64
	// Progress, when set, is called about every 200ms while events are
	// read and once when they are all applied.
	Progress func(ReplayProgress)
	// Resumable (a rebuild with Shadow and Full) records every slice once
	// written, so that a rebuild with the same Fingerprint (the caller's
	// arguments and version) resumes after the last one recorded instead
	// of starting over; Restart starts over anyway (replay_resume.go).
	Resumable, Restart bool
	Fingerprint        string
	// Started, when set, is told once a rebuild in slices knows whether it
	// resumes an interrupted one.
	Started func(ResumeReport)
	// AfterWrite, when set (tests), is called once slice pass is written,
	// before it is recorded; an error stops the rebuild there.
	AfterWrite func(pass int) error
}

// ReplayProgress tells how far a rebuild got.
type ReplayProgress struct {
	Events  int64 // events read so far
	Total   int64 // events in the store when the rebuild began
	Resumed int64 // of Events, those an interrupted rebuild had read
	// Pass is the slice being read of Passes (0 in a rebuild not in
	// slices).
	Pass, Passes int
	Elapsed      time.Duration // since this run began reading
	Done         bool
}

// ReplayReport is the outcome of a rebuild and its comparison with the
// live read models.
type ReplayReport struct {
	Events  int64 // events read
	Skipped int64 // events a projection could not apply (dead letters)
	Head    int64 // position of the last event read
	Full    bool
	Read    time.Duration // reading and applying the events
	Write   time.Duration // writing the shadow schema
	// Finish is the part of Write a rebuild in slices spends after the
	// last slice, in PostgreSQL (game results, marks, rounds, members,
	// numbering).
	Finish  time.Duration
	Compare time.Duration
	Tables  []TableDiff
	Rebuilt map[string]int64 // rows per rebuilt table
	Passes  int              // rebuilds in memory, one per group of clients
	Slices  int              // position slices of a rebuild with Shadow
	// LateChanges counts, in a rebuild in slices, the changes to rows an
	// earlier slice had written: parts of game results of rounds that span
	// slices, and bets and wins rolled back in a later slice.
	LateChanges int64
	Shadowed    bool
	Resume      ResumeReport
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
	// ByDigest: the rebuilt and live rows were found equal by their
	// salted digests, without reading them out.
	ByDigest bool
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
	if opts.Shadow && !m.inMemory {
		return m.compareSliced(ctx, opts)
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
	live, watermark, err := m.replayLimits(ctx, snap, opts.Full, head)
	if err != nil {
		return rep, err
	}
	projs, err := replayProjections()
	if err != nil {
		return rep, err
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
		err := replayEvents(ctx, snap, only, 0, &progress, func(r rawEvent, e domain.Event, decodeErr error) error {
			applyReplayed(mem, projs, live, r, e, decodeErr, &rep)
			return nil
		}, &rep)
		if err != nil {
			return rep, err
		}
		// Only the numbering: the watermarks are the store's, written once
		// below.
		mem.SetWatermark(projections.History, watermark[projections.History])
		rb := newRebuilt(mem)
		rep.Read += time.Since(start)

		start = time.Now()
		if opts.Shadow {
			if err := m.copyTables(ctx, m.shadow, rb, clientTables); err != nil {
				return rep, err
			}
		}
		rep.Write += time.Since(start)

		start = time.Now()
		for i, tb := range rmTables {
			if tb.client == "" {
				continue
			}
			d, err := m.diffTable(ctx, snap, tb, &memoryRows{rows: tb.rows(rb)}, opts.Examples, tb.client+" = ANY($1)", pass.clients)
			if err != nil {
				return rep, err
			}
			rep.Rebuilt[tb.name] += d.Rebuilt
			merge(i, d)
		}
		rep.Compare += time.Since(start)
	}
	progress.end(rep.Events)
	rep.Head = max(rep.Head, head)

	// The watermarks, and whatever live rows belong to no client of the
	// store (all extra).
	start := time.Now()
	global := watermarkRows(watermark)
	if opts.Shadow {
		if err := m.copyTables(ctx, m.shadow, global, globalTables); err != nil {
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
		rows := &memoryRows{rows: tb.rows(global)}
		if tb.client == "" {
			d, err := m.diffTable(ctx, snap, tb, rows, opts.Examples, "")
			if err != nil {
				return rep, err
			}
			rep.Rebuilt[tb.name] += d.Rebuilt
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

// replayLimits are what a rebuild applies: with full every event and the
// watermarks at head; otherwise, per projection and stream, the versions
// the live checkpoints hold (live) and the live watermarks, read in snap.
func (m *ReadModels) replayLimits(ctx context.Context, snap pgx.Tx, full bool, head int64) (
	live map[projections.StreamKey]int64, watermark map[projections.Name]int64, err error) {
	watermark = map[projections.Name]int64{}
	for _, p := range projections.All {
		watermark[p] = head
	}
	if full {
		return nil, watermark, nil
	}
	if live, err = m.liveCheckpoints(ctx, snap); err != nil {
		return nil, nil, err
	}
	for _, p := range projections.All {
		var pos int64
		if err := snap.QueryRow(ctx, m.sql.position, string(p)).Scan(&pos); err != nil {
			return nil, nil, fmt.Errorf("watermark of %s: %w", p, err)
		}
		watermark[p] = pos
	}
	return live, watermark, nil
}

// watermarkRows are the rebuilt rows of the tables of no client (the
// positions: each projection's watermark, in projection order).
func watermarkRows(watermark map[projections.Name]int64) *rebuilt {
	global := &rebuilt{}
	for _, p := range projections.All {
		global.positions = append(global.positions, checkpointRow{projection: string(p), position: watermark[p]})
	}
	slices.SortFunc(global.positions, func(a, b checkpointRow) int { return strings.Compare(a.projection, b.projection) })
	return global
}
