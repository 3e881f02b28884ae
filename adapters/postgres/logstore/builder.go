package logstore

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/ledgerlog"
)

// Builder grows every log from the committed events, off the wallet's
// answer path (the relay role runs it). A pass reads the events after the
// platform tree's last position in position order — gap-safe: it takes the
// events whose positions follow on without a hole, and past a hole only
// those whose transaction is older than the oldest one still running (as
// the relay does), so no event can later appear below what the logs hold
// (a long transaction elsewhere does not stall it) — appends each to the
// platform log and to its client's
// log, and stores the tiles, leaves and trees in one transaction, under a
// lock that lets one builder of the cluster work at a time. A crash loses
// nothing: the next pass starts where the stored platform tree ends.
type Builder struct {
	pool  *pgxpool.Pool
	batch int
	log   *slog.Logger
}

// DefaultBuildBatch is how many events a pass takes at most.
const DefaultBuildBatch = 5000

// NewBuilder returns a builder taking up to batch events a pass (0:
// DefaultBuildBatch).
func NewBuilder(pool *pgxpool.Pool, batch int, logger *slog.Logger) *Builder {
	if batch <= 0 {
		batch = DefaultBuildBatch
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Builder{pool: pool, batch: batch, log: logger}
}

// builderLock is the advisory lock of the builder ("tlog").
const builderLock = 0x746c6f67

// Pass grows the logs by the committed events not in them yet, at most one
// batch; it returns how many events it added (0: nothing new, or another
// builder holds the lock).
func (b *Builder) Pass(ctx context.Context) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		var locked bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, builderLock).Scan(&locked); err != nil {
			return fmt.Errorf("lock the log builder: %w", err)
		}
		if !locked {
			return nil
		}
		var err error
		n, err = b.pass(ctx, tx)
		return err
	})
	return n, err
}

type event struct {
	position int64
	log      string // its client's log
	leaf     tlog.Hash
}

func (b *Builder) pass(ctx context.Context, tx pgx.Tx) (int, error) {
	trees, err := readTrees(ctx, tx, []string{ledgerlog.PlatformLog})
	if err != nil {
		return 0, err
	}
	platform := trees[ledgerlog.PlatformLog]
	rows, err := tx.Query(ctx, `SELECT position, stream_id, body::text, tx_id < pg_snapshot_xmin(pg_current_snapshot())
		FROM events WHERE position > $1 ORDER BY position LIMIT $2`, platform.Position, b.batch)
	if err != nil {
		return 0, fmt.Errorf("read events after %d: %w", platform.Position, err)
	}
	var events []event
	var pos int64
	var stream, body string
	var settled, stop bool
	next, hole := platform.Position+1, false
	if _, err := pgx.ForEachRow(rows, []any{&pos, &stream, &body, &settled}, func() error {
		// Positions are given in commit order under the writer's lock, so
		// an event right after the last taken can never be preceded by one
		// committed later: take it. After a hole (a position never
		// written, or one whose transaction still runs), take only events
		// of transactions older than every running one, as the relay
		// does, and stop at the first other.
		hole = hole || (pos != next && platform.Position > 0)
		if stop || (hole && !settled) {
			stop = true
			return nil
		}
		next = pos + 1
		id, err := domain.ParseAccountID(stream)
		if err != nil {
			return fmt.Errorf("event %d: stream %q: %w", pos, stream, err)
		}
		events = append(events, event{position: pos, log: ledgerlog.ClientLog(id.Client()), leaf: ledgerlog.LeafHash([]byte(body))})
		return nil
	}); err != nil {
		return 0, fmt.Errorf("read events after %d: %w", platform.Position, err)
	}
	if len(events) == 0 {
		return 0, nil
	}
	byLog := map[string][]event{ledgerlog.PlatformLog: events}
	for _, e := range events {
		byLog[e.log] = append(byLog[e.log], e)
	}
	logs := make([]string, 0, len(byLog))
	for l := range byLog {
		logs = append(logs, l)
	}
	slices.Sort(logs)
	if trees, err = readTrees(ctx, tx, logs); err != nil {
		return 0, err
	}
	for _, l := range logs {
		if err := grow(ctx, tx, trees[l], byLog[l]); err != nil {
			return 0, err
		}
	}
	return len(events), nil
}

// grow appends evs to tree t and stores the growth.
func grow(ctx context.Context, tx pgx.Tx, t Tree, evs []event) error {
	leaves := make([]tlog.Hash, len(evs))
	for i, e := range evs {
		leaves[i] = e.leaf
	}
	tiles := &Tiles{q: tx, ctx: ctx, log: t.Log, cache: map[[2]int64][]byte{}}
	g, err := ledgerlog.Append(t.Size, ledgerlog.StoredHashes(tiles), leaves)
	if err != nil {
		return fmt.Errorf("grow %s from %d: %w", t.Log, t.Size, err)
	}
	levels, ns, datas := make([]int32, len(g.Tiles)), make([]int64, len(g.Tiles)), make([][]byte, len(g.Tiles))
	for i, tl := range g.Tiles {
		levels[i], ns[i], datas[i] = int32(tl.L), tl.N, tl.Data
	}
	if _, err := tx.Exec(ctx, `INSERT INTO log_tiles (log, level, n, data)
		SELECT $1, level, n, data FROM unnest($2::int[], $3::bigint[], $4::bytea[]) AS t(level, n, data)
		ON CONFLICT (log, level, n) DO UPDATE SET data = EXCLUDED.data
		WHERE length(EXCLUDED.data) > length(log_tiles.data)`, t.Log, levels, ns, datas); err != nil {
		return fmt.Errorf("store tiles of %s: %w", t.Log, err)
	}
	// The leaves' positions, 256 to a row.
	var rowN, firsts []int64
	var lists [][]int64
	for i, e := range evs {
		leaf := t.Size + int64(i)
		if len(rowN) == 0 || rowN[len(rowN)-1] != leaf/256 {
			rowN, firsts, lists = append(rowN, leaf/256), append(firsts, e.position), append(lists, nil)
		}
		lists[len(lists)-1] = append(lists[len(lists)-1], e.position)
	}
	for i := range rowN {
		if _, err := tx.Exec(ctx, `INSERT INTO log_leaves (log, n, first_position, positions) VALUES ($1, $2, $3, $4)
			ON CONFLICT (log, n) DO UPDATE SET positions = log_leaves.positions || EXCLUDED.positions`,
			t.Log, rowN[i], firsts[i], lists[i]); err != nil {
			return fmt.Errorf("store leaves of %s: %w", t.Log, err)
		}
	}
	last := evs[len(evs)-1].position
	if _, err := tx.Exec(ctx, `INSERT INTO log_trees (log, size, root, position, updated_at) VALUES ($1, $2, $3, $4, now())
		ON CONFLICT (log) DO UPDATE SET size = EXCLUDED.size, root = EXCLUDED.root, position = EXCLUDED.position,
		updated_at = now()`, t.Log, g.To, g.Root[:], last); err != nil {
		return fmt.Errorf("store the tree of %s: %w", t.Log, err)
	}
	return nil
}
