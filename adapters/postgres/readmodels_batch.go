package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
)

// ErrSameStreamInBatch refuses a batch with two events of one stream:
// the second may depend on the first (a rollback of a bet), which the
// batch's lookups, made before either is applied, cannot see.
var ErrSameStreamInBatch = errors.New("two events of one stream in a batch")

// ApplyBatch applies events of distinct streams to projection p in one
// transaction: the checkpoints are locked (in stream order) and the lookups
// made in one round trip, each event is decided as Apply decides it, and
// the changes of those that apply are written and committed in a second.
// One commit for many events is what lets a projector keep up: it takes at
// most one message per partition at a time, and a commit per message is
// bounded by the disk's flushes. An event that is a redelivery, a gap or
// invalid only gets its own result; an error (the database) means nothing
// was applied.
func (m *ReadModels) ApplyBatch(ctx context.Context, p projections.Projection, events []domain.Event) ([]projections.ApplyResult, error) {
	order := make([]int, len(events))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(events[a].StreamID, events[b].StreamID) })
	for k := 1; k < len(order); k++ {
		if events[order[k]].StreamID == events[order[k-1]].StreamID {
			return nil, fmt.Errorf("stream %s: %w", events[order[k]].StreamID, ErrSameStreamInBatch)
		}
	}
	conn, err := m.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("acquire connection: %w", err)
	}
	defer func() {
		if conn.Conn().PgConn().TxStatus() != 'I' {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_, _ = conn.Exec(rctx, "ROLLBACK")
			cancel()
		}
		conn.Release()
	}()

	name := string(p.Name())
	lookups := make([][]projections.GameTxKey, len(events))
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	for _, i := range order {
		lookups[i] = p.Lookups(events[i])
		b.Queue(m.sql.ensureCheckpoint, name, string(events[i].StreamID))
		b.Queue(m.sql.lockCheckpoint, name, string(events[i].StreamID))
		for _, k := range lookups[i] {
			b.Queue(m.sql.lookupGameTx, k.ClientID, k.Provider, k.ExternalID)
		}
	}
	versions := make([]int64, len(events))
	found := make([]map[projections.GameTxKey]projections.GameTx, len(events))
	err = func() error {
		br := conn.SendBatch(ctx, b)
		defer br.Close()
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		for _, i := range order {
			stream := events[i].StreamID
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("checkpoint of %s: %w", stream, err)
			}
			if err := br.QueryRow().Scan(&versions[i]); err != nil {
				return fmt.Errorf("lock checkpoint of %s: %w", stream, err)
			}
			found[i] = map[projections.GameTxKey]projections.GameTx{}
			for _, k := range lookups[i] {
				var g projections.GameTx
				err := br.QueryRow().Scan(&g.Type, &g.Game, &g.Promo)
				switch {
				case errors.Is(err, pgx.ErrNoRows):
				case err != nil:
					return fmt.Errorf("look up %s: %w", k.ExternalID, err)
				default:
					found[i][k] = g
				}
			}
		}
		return br.Close()
	}()
	if err != nil {
		return nil, err
	}

	results := make([]projections.ApplyResult, len(events))
	b = &pgx.Batch{}
	n := 0
	for _, i := range order {
		e := events[i]
		ok, err := projections.Checkpoint(p.Name(), e, versions[i])
		if err != nil || !ok {
			results[i].Err = err
			continue
		}
		f := found[i]
		ch, err := p.Apply(e, func(k projections.GameTxKey) (projections.GameTx, bool) {
			g, ok := f[k]
			return g, ok
		})
		if err != nil {
			results[i].Err = err
			continue
		}
		n += m.queueChanges(b, ch)
		b.Queue(m.sql.saveCheckpoint, name, string(e.StreamID), e.Version, e.Position)
		n++
		results[i].Applied = true
	}
	b.Queue("COMMIT")
	br := conn.SendBatch(ctx, b)
	defer br.Close()
	for k := range n {
		if _, err := br.Exec(); err != nil {
			return nil, fmt.Errorf("apply statement %d of a batch of %d events: %w", k+1, len(events), err)
		}
	}
	tag, err := br.Exec()
	if err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	if tag.String() != "COMMIT" {
		return nil, fmt.Errorf("commit: transaction ended with %s", tag.String())
	}
	return results, br.Close()
}
