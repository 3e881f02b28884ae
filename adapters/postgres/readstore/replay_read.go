package readstore

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
)

// replayProgress reports a rebuild's progress about every 200 ms.
type replayProgress struct {
	report       func(ReplayProgress)
	total        int64
	resumed      int64 // events an interrupted rebuild had done
	pass, passes int   // of a rebuild in slices
	start, last  time.Time
}

func (p *replayProgress) tick(events int64) {
	if p.report != nil && time.Since(p.last) >= 200*time.Millisecond {
		p.last = time.Now()
		p.report(p.at(events, false))
	}
}

func (p *replayProgress) at(events int64, done bool) ReplayProgress {
	return ReplayProgress{Events: events, Total: p.total, Resumed: p.resumed, Pass: min(p.pass, p.passes), Passes: p.passes,
		Elapsed: time.Since(p.start), Done: done}
}

// end reports the last events read.
func (p *replayProgress) end(events int64) {
	if p.report != nil {
		p.report(p.at(events, true))
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

// replayProjections is every projection, in projections.All's order.
func replayProjections() ([]projections.Projection, error) {
	projs := make([]projections.Projection, 0, len(projections.All))
	for _, n := range projections.All {
		p, err := projections.ByName(n)
		if err != nil {
			return nil, err
		}
		projs = append(projs, p)
	}
	return projs, nil
}

// replayEvents reads every event (of the clients' streams, if any are named)
// in position order (client by client) and hands it to apply, decoded (or
// with the decoding error): one goroutine reads, the others decode chunks
// in parallel, and this one applies them in order. An error of apply ends
// the reading.
func replayEvents(ctx context.Context, tx pgx.Tx, clients []string, after int64, progress *replayProgress,
	apply func(r rawEvent, e domain.Event, decodeErr error) error, rep *ReplayReport) error {
	// Every event: the position index, the heap read in order. Some
	// clients: client by client, each one range of
	// events_client_position_idx in position order (events of different
	// clients never touch the same read-model rows, so only the order
	// within a client, and so within a stream, matters). For a client with
	// most of the store the planner prefers a sequential scan and a sort of
	// every body (gigabytes, on disk); the index range reads the heap in
	// position order, that is nearly sequentially, and needs no sort.
	query, args := `SELECT position, stream_id, stream_version, body FROM events WHERE position > $1 ORDER BY position`, []any{after}
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
	g.Go(func() error { return readEventChunks(gctx, tx, query, args, todo) })
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
					if err := apply(r, c.events[i], c.errs[i]); err != nil {
						return err
					}
				}
				progress.tick(rep.Events)
			}
		}
		return nil
	})
	return g.Wait()
}

// readEventChunks reads the events of query in chunks of replayChunkSize,
// numbered from 0, onto todo, which it closes.
func readEventChunks(ctx context.Context, tx pgx.Tx, query string, args []any, todo chan<- *replayChunk) error {
	defer close(todo)
	rows, err := tx.Query(ctx, query, args...)
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
			case <-ctx.Done():
				return ctx.Err()
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
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
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
