package logstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/ledgerlog"
)

// What the log's HTTP routes read (api/vlog's Store port; cmd checks the
// assignment): the signed notes, the tiles, the entries and which event a
// leaf is.

// LatestNote is log's newest signed checkpoint note, with any witness
// cosignatures; domain.ErrNotFound when it has none yet.
func (s *Store) LatestNote(ctx context.Context, log string) ([]byte, error) {
	c, err := s.LatestCheckpoint(ctx, log)
	return c.Note, err
}

// NoteOfSize is the signed note of log's checkpoint of exactly size
// leaves; domain.ErrNotFound when no checkpoint has that size.
func (s *Store) NoteOfSize(ctx context.Context, log string, size int64) ([]byte, error) {
	c, err := s.CheckpointOfSize(ctx, log, size)
	return c.Note, err
}

// Tiles is TileReader as a tlog.TileReader.
func (s *Store) Tiles(ctx context.Context, log string) tlog.TileReader { return s.TileReader(ctx, log) }

// EventOf is the position of an event of log — the event eventID, or
// when eventID is "" the event at position — whether or not the log holds
// it yet: any event for the platform's log, the client's own for a
// client's (its stream's client, as the builder files it). Another
// client's event, or none, is domain.ErrNotFound. eventID must be a UUID.
func (s *Store) EventOf(ctx context.Context, log, eventID string, position int64) (int64, error) {
	client := ""
	if log != ledgerlog.PlatformLog {
		client = ledgerlog.ClientOf(log)
	}
	where, arg, what := `position = $1`, any(position), fmt.Sprintf("event at %d", position)
	if eventID != "" {
		where, arg, what = `event_id = $1::uuid`, eventID, "event "+eventID
	}
	var pos int64
	err := s.pool.QueryRow(ctx, `SELECT position FROM events WHERE `+where+
		` AND ($2 = '' OR split_part(stream_id, ':', 2) = $2)`, arg, client).Scan(&pos)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("%s of %s: %w", what, log, domain.ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("%s of %s: %w", what, log, err)
	}
	return pos, nil
}
