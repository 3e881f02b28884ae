package logstore

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/ledgerlog"
)

// SignedCheckpoint is a stored C2SP checkpoint of a log: the signed note
// (with any witness cosignatures added since).
type SignedCheckpoint struct {
	ID        int64
	Log       string
	Size      int64
	Root      tlog.Hash
	Note      []byte
	KeyID     string // the checkpoint key that signed it (audit.CheckpointKeyID)
	CreatedAt time.Time
}

// Keys gives the key new checkpoints are signed with: the ledger's
// checkpoint keys (auditstore.Checkpoints), rotatable, never deleted.
type Keys interface {
	SigningKey(ctx context.Context) (keyID string, priv ed25519.PrivateKey, err error)
}

// SignDue signs a checkpoint of every log that grew since its last one,
// when that one is at least every old (or it has none): the note of its
// tree under its origin (ledgerlog.Origin of originBase), signed by the
// active checkpoint key under the origin's name. It returns how many it
// signed.
func (s *Store) SignDue(ctx context.Context, originBase string, keys Keys, every time.Duration, now time.Time) (int, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT t.log, t.size, t.root FROM log_trees t
		LEFT JOIN LATERAL (SELECT size, created_at FROM log_checkpoints c WHERE c.log = t.log
		                    ORDER BY c.size DESC, c.id DESC LIMIT 1) last ON true
		WHERE t.size > coalesce(last.size, 0) AND (last.created_at IS NULL OR last.created_at <= $1)
		ORDER BY t.log`, now.Add(-every))
	if err != nil {
		return 0, fmt.Errorf("logs to checkpoint: %w", err)
	}
	var due []Tree
	var t Tree
	var root []byte
	if _, err := pgx.ForEachRow(rows, []any{&t.Log, &t.Size, &root}, func() error {
		copy(t.Root[:], root)
		due = append(due, t)
		return nil
	}); err != nil {
		return 0, fmt.Errorf("logs to checkpoint: %w", err)
	}
	if len(due) == 0 {
		return 0, nil
	}
	keyID, priv, err := keys.SigningKey(ctx)
	if err != nil {
		return 0, fmt.Errorf("checkpoint key: %w", err)
	}
	for _, t := range due {
		origin := ledgerlog.Origin(originBase, t.Log)
		note, err := ledgerlog.Sign(ledgerlog.Checkpoint{Origin: origin, Size: t.Size, Root: t.Root},
			ledgerlog.Key{Name: origin, Priv: priv})
		if err != nil {
			return 0, err
		}
		if _, err := s.pool.Exec(ctx, `INSERT INTO log_checkpoints (log, size, root, note, key_id, created_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, t.Log, t.Size, t.Root[:], string(note), keyID, now); err != nil {
			return 0, fmt.Errorf("store the checkpoint of %s: %w", t.Log, err)
		}
	}
	return len(due), nil
}

const checkpointCols = `id, log, size, root, note, key_id, created_at`

func scanCheckpoint(row pgx.Row) (SignedCheckpoint, error) {
	var c SignedCheckpoint
	var root []byte
	var note string
	if err := row.Scan(&c.ID, &c.Log, &c.Size, &root, &note, &c.KeyID, &c.CreatedAt); err != nil {
		return c, err
	}
	copy(c.Root[:], root)
	c.Note = []byte(note)
	c.CreatedAt = c.CreatedAt.UTC()
	return c, nil
}

func (s *Store) oneCheckpoint(ctx context.Context, what, where string, args ...any) (SignedCheckpoint, error) {
	c, err := scanCheckpoint(s.pool.QueryRow(ctx, `SELECT `+checkpointCols+` FROM log_checkpoints WHERE `+where, args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return c, fmt.Errorf("%s: %w", what, domain.ErrNotFound)
	}
	if err != nil {
		return c, fmt.Errorf("%s: %w", what, err)
	}
	return c, nil
}

// LatestCheckpoint is log's newest checkpoint.
func (s *Store) LatestCheckpoint(ctx context.Context, log string) (SignedCheckpoint, error) {
	return s.oneCheckpoint(ctx, "latest checkpoint of "+log, `log = $1 ORDER BY size DESC, id DESC LIMIT 1`, log)
}

// CheckpointOfSize is log's newest checkpoint of exactly size leaves.
func (s *Store) CheckpointOfSize(ctx context.Context, log string, size int64) (SignedCheckpoint, error) {
	return s.oneCheckpoint(ctx, fmt.Sprintf("checkpoint of %s at %d", log, size),
		`log = $1 AND size = $2 ORDER BY id DESC LIMIT 1`, log, size)
}

// Checkpoints are up to limit of log's checkpoints with an id above after,
// in id order.
func (s *Store) Checkpoints(ctx context.Context, log string, after int64, limit int) ([]SignedCheckpoint, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+checkpointCols+` FROM log_checkpoints WHERE log = $1 AND id > $2
		ORDER BY id LIMIT $3`, log, after, limit)
	if err != nil {
		return nil, fmt.Errorf("checkpoints of %s: %w", log, err)
	}
	out := []SignedCheckpoint{}
	for rows.Next() {
		c, err := scanCheckpoint(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("checkpoints of %s: %w", log, err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// AddCosignatures replaces checkpoint id's note with note, the same
// checkpoint with witness cosignature lines added (the caller checked it).
func (s *Store) AddCosignatures(ctx context.Context, id int64, note []byte) error {
	tag, err := s.pool.Exec(ctx, `UPDATE log_checkpoints SET note = $2 WHERE id = $1`, id, string(note))
	if err != nil {
		return fmt.Errorf("cosign checkpoint %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("checkpoint %d: %w", id, domain.ErrNotFound)
	}
	return nil
}

// Run grows the logs and signs their checkpoints until ctx ends: a builder
// pass at once while one finds a full batch, else every interval; the due
// checkpoints (SignDue, at most every every) after each pass that grew.
func Run(ctx context.Context, b *Builder, s *Store, originBase string, keys Keys, interval, every time.Duration,
	now func() time.Time) error {
	if interval <= 0 {
		interval = time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		n, err := b.Pass(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			b.log.Error("verifiable log: a pass failed", "error", err)
		}
		if _, err := s.SignDue(ctx, originBase, keys, every, now()); err != nil && ctx.Err() == nil {
			b.log.Error("verifiable log: checkpoints", "error", err)
		}
		if err == nil && n == b.batch {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
