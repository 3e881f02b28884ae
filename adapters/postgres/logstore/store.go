// Package logstore keeps the verifiable log (ledgerlog) in PostgreSQL
// (migration 00033): each log's tree, its C2SP tiles, which event each
// leaf is, and the signed checkpoints; and Builder, which grows every log
// from the committed events, gap-safe and resumable. See docs/audit.md,
// "The verifiable log".
package logstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/ledgerlog"
)

// Store reads the logs.
type Store struct{ pool *pgxpool.Pool }

// New returns a Store over pool.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// Tree is a log's tree as stored.
type Tree struct {
	Log      string
	Size     int64
	Root     tlog.Hash
	Position int64 // the last event in it (0: none)
}

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Tree is log's tree; an empty tree (size 0) when it has none yet.
func (s *Store) Tree(ctx context.Context, log string) (Tree, error) {
	trees, err := readTrees(ctx, s.pool, []string{log})
	if err != nil {
		return Tree{}, err
	}
	return trees[log], nil
}

func readTrees(ctx context.Context, q querier, logs []string) (map[string]Tree, error) {
	out := make(map[string]Tree, len(logs))
	for _, l := range logs {
		out[l] = Tree{Log: l}
	}
	rows, err := q.Query(ctx, `SELECT log, size, root, position FROM log_trees WHERE log = ANY($1)`, logs)
	if err != nil {
		return nil, fmt.Errorf("read log trees: %w", err)
	}
	var t Tree
	var root []byte
	_, err = pgx.ForEachRow(rows, []any{&t.Log, &t.Size, &root, &t.Position}, func() error {
		if len(root) != tlog.HashSize {
			return fmt.Errorf("log %s: root of %d bytes", t.Log, len(root))
		}
		copy(t.Root[:], root)
		out[t.Log] = t
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read log trees: %w", err)
	}
	return out, nil
}

// Tiles reads a log's stored tiles, as C2SP serves them: exactly W hashes
// of each (a tile asked narrower than stored is cut; wider is missing).
type Tiles struct {
	q   querier
	ctx context.Context
	log string
	// cache keeps what this reader read (a builder's pass, a proof).
	cache map[[2]int64][]byte
}

// TileReader is a reader of log's tiles on the pool.
func (s *Store) TileReader(ctx context.Context, log string) *Tiles {
	return &Tiles{q: s.pool, ctx: ctx, log: log, cache: map[[2]int64][]byte{}}
}

// Height is the tiles' height (tlog.TileReader).
func (t *Tiles) Height() int { return ledgerlog.TileHeight }

// ReadTiles implements tlog.TileReader and ledgerlog.TileReader: each
// tile's data, W hashes wide.
func (t *Tiles) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	var levels []int32
	var ns []int64
	for _, tl := range tiles {
		if _, ok := t.cache[[2]int64{int64(tl.L), tl.N}]; !ok {
			levels, ns = append(levels, int32(tl.L)), append(ns, tl.N)
		}
	}
	if len(levels) > 0 {
		rows, err := t.q.Query(t.ctx, `SELECT t.level, t.n, t.data FROM log_tiles t
			JOIN unnest($2::int[], $3::bigint[]) AS w(level, n) ON t.level = w.level AND t.n = w.n
			WHERE t.log = $1`, t.log, levels, ns)
		if err != nil {
			return nil, fmt.Errorf("read tiles of %s: %w", t.log, err)
		}
		var level int32
		var n int64
		var data []byte
		if _, err := pgx.ForEachRow(rows, []any{&level, &n, &data}, func() error {
			t.cache[[2]int64{int64(level), n}] = append([]byte(nil), data...)
			return nil
		}); err != nil {
			return nil, fmt.Errorf("read tiles of %s: %w", t.log, err)
		}
	}
	for i, tl := range tiles {
		d, ok := t.cache[[2]int64{int64(tl.L), tl.N}]
		if !ok || len(d) < tl.W*tlog.HashSize {
			return nil, fmt.Errorf("log %s has no tile %s: %w", t.log, tl.Path(), domain.ErrNotFound)
		}
		out[i] = d[:tl.W*tlog.HashSize]
	}
	return out, nil
}

// SaveTiles implements tlog.TileReader: nothing to save.
func (t *Tiles) SaveTiles([]tlog.Tile, [][]byte) {}

// Leaf is the position of the event at leaf index of log.
func (s *Store) Leaf(ctx context.Context, log string, index int64) (int64, error) {
	var pos int64
	err := s.pool.QueryRow(ctx, `SELECT positions[$3::int + 1] FROM log_leaves WHERE log = $1 AND n = $2`,
		log, index/256, index%256).Scan(&pos)
	if errors.Is(err, pgx.ErrNoRows) || pos == 0 {
		return 0, fmt.Errorf("leaf %d of %s: %w", index, log, domain.ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("leaf %d of %s: %w", index, log, err)
	}
	return pos, nil
}

// LeafOf is the leaf index of the event at position in log.
func (s *Store) LeafOf(ctx context.Context, log string, position int64) (int64, error) {
	var n int64
	var positions []int64
	err := s.pool.QueryRow(ctx, `SELECT n, positions FROM log_leaves WHERE log = $1 AND first_position <= $2
		ORDER BY first_position DESC LIMIT 1`, log, position).Scan(&n, &positions)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("leaf of position %d in %s: %w", position, log, err)
	}
	for i, p := range positions {
		if p == position {
			return n*256 + int64(i), nil
		}
	}
	return 0, fmt.Errorf("position %d in %s: %w", position, log, domain.ErrNotFound)
}

// Entries are the canonical bodies of log's leaves from .. from+count-1,
// in leaf order (the C2SP entry bundles' entries).
func (s *Store) Entries(ctx context.Context, log string, from int64, count int) ([][]byte, error) {
	rows, err := s.pool.Query(ctx, `
		WITH l AS (
			SELECT p.position, (l.n * 256 + p.i - 1) AS leaf
			  FROM log_leaves l, unnest(l.positions) WITH ORDINALITY AS p(position, i)
			 WHERE l.log = $1 AND l.n BETWEEN $2 / 256 AND ($2 + $3 - 1) / 256
		)
		SELECT e.body::text FROM l JOIN events e ON e.position = l.position
		 WHERE l.leaf >= $2 AND l.leaf < $2 + $3 ORDER BY l.leaf`, log, from, count)
	if err != nil {
		return nil, fmt.Errorf("entries of %s: %w", log, err)
	}
	var out [][]byte
	var body string
	if _, err := pgx.ForEachRow(rows, []any{&body}, func() error {
		out = append(out, []byte(body))
		return nil
	}); err != nil {
		return nil, fmt.Errorf("entries of %s: %w", log, err)
	}
	if len(out) != count {
		return nil, fmt.Errorf("entries %d..%d of %s: %d found: %w", from, from+int64(count)-1, log, len(out), domain.ErrNotFound)
	}
	return out, nil
}
