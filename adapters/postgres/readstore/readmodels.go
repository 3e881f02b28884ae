// Package readstore is the Postgres store of the read models: it applies
// the projections' changes with their checkpoints (one event or a batch;
// one projection, or several in one transaction: ApplyProjections),
// moves the watermarks, answers the history and report queries, and
// rebuilds the read models from the event store to compare them with the
// live tables or to swap the rebuild in (Compare, Swap).
package readstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/projections"
)

// advanceLimit bounds the events one watermark step looks at.
const advanceLimit = 10_000

// advanceChunk is the first chunk a watermark step reads.
const advanceChunk = 64

// ReadModels is the Postgres store of the read models: it applies a
// projection's Changes with the stream's checkpoint in one transaction,
// moves the watermarks, answers the queries, and rebuilds (replay.go,
// swap.go).
type ReadModels struct {
	pool   *pgxpool.Pool
	schema string
	sql    readModelSQL
	// countBudget bounds the count behind a filtered page's exact total
	// (boundedCount); DefaultCountBudget unless WithCountBudget.
	countBudget time.Duration
	// inMemory makes a rebuild written to the shadow schema run as a
	// comparison does, in passes held whole in memory: the rebuild as it
	// was before compareSliced, which the tests hold it to.
	inMemory bool
	// shadow and staging are the schemas a rebuild writes (ShadowSchema
	// and StagingSchema; a verification's scratch ones with WithScratch).
	shadow, staging string
}

var (
	_ projections.TransactionReader = (*ReadModels)(nil)
	_ projections.ReportReader      = (*ReadModels)(nil)
	_ projections.PositionReader    = (*ReadModels)(nil)
)

// NewReadModels returns the store of the live read models.
func NewReadModels(pool *pgxpool.Pool) *ReadModels {
	return newReadModelsIn(pool, ReadModelSchema)
}

func newReadModelsIn(pool *pgxpool.Pool, schema string) *ReadModels {
	return &ReadModels{pool: pool, schema: schema, sql: newReadModelSQL(schema), countBudget: DefaultCountBudget,
		shadow: ShadowSchema, staging: StagingSchema}
}

// WithCountBudget returns the store with another bound on the count behind
// a filtered page's exact total (DefaultCountBudget). Tests that check
// exact totals on a loaded machine give it more room.
func (m *ReadModels) WithCountBudget(d time.Duration) *ReadModels {
	c := *m
	c.countBudget = d
	return &c
}

// roundLockClass is the first key of the two-key advisory locks on GGR
// rounds ("PLGR"); see deliverystore's queueLockClass.
const roundLockClass int32 = 0x504C4752

// readModelSQL holds the statements with the schema filled in.
type readModelSQL struct {
	skipCheckpoint, markRolledBack, lockRound, addRound                                                   string
	position, lockPosition, waitPosition, savePosition, scanEvents, sequence, sequenceDays, sequenceMarks string
	// Statements over a whole batch of events (arrays, one per column).
	ensureCheckpoints, lockCheckpoints, saveCheckpoints, lookupGameTxs, insertTxs, upsertGameResults string
	upsertGGRs, addPlayers, upsertBalances                                                           string
}

func newReadModelSQL(schema string) readModelSQL {
	t := func(name string) string { return pgx.Identifier{schema, name}.Sanitize() }
	txCols := `id, client_id, type, amount, currency, scale, base_status, created_at, provider, game, player_id,
		round_id, external_id, reference_id, seq, sub, position, balance_after, promo, open_bets, rolled_bets, wins, closed,
		jackpot, campaign_id, reward_id`
	// The rows of txArrays.args, for insertTxs and upsertGameResults.
	txRows := `
			SELECT id::uuid, client_id, type, amount, currency, scale, base_status, created_at, nullif(provider, ''),
			       nullif(game, ''), nullif(player_id, ''), nullif(round_id, ''), nullif(external_id, ''),
			       nullif(reference_id, ''), seq, sub, position, CASE WHEN has_balance THEN balance_after END, promo,
			       open_bets, rolled_bets, wins, closed, jackpot, nullif(campaign_id, ''), nullif(reward_id, '')
			FROM unnest($1::text[], $2::text[], $3::text[], $4::int8[], $5::text[], $6::int2[], $7::text[],
			            $8::timestamptz[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[],
			            $15::int8[], $16::int2[], $17::int8[], $18::int8[], $19::bool[], $20::bool[], $21::int8[],
			            $22::int8[], $23::int8[], $24::bool[], $25::int8[], $26::text[], $27::text[])
			  AS r(id, client_id, type, amount, currency, scale, base_status, created_at, provider, game, player_id,
			       round_id, external_id, reference_id, seq, sub, position, balance_after, has_balance, promo,
			       open_bets, rolled_bets, wins, closed, jackpot, campaign_id, reward_id)`
	ggrAmounts := []string{"bets", "bet_refunds", "wins", "win_reversals", "promo_bets", "promo_bet_refunds",
		"promo_wins", "promo_win_reversals", "jackpot_wins", "jackpot_win_reversals"}
	var adds []string
	for _, c := range ggrAmounts {
		adds = append(adds, c+" = g."+c+" + excluded."+c)
	}
	ggrArrays := make([]string, 0, len(ggrAmounts))
	for i := range ggrAmounts {
		ggrArrays = append(ggrArrays, "$"+strconv.Itoa(7+i)+"::int8[]")
	}
	return readModelSQL{
		ensureCheckpoints: `INSERT INTO ` + t("checkpoints") + ` (projection, stream_id, version, position)
			SELECT $1, s, 0, 0 FROM unnest($2::text[]) AS s ON CONFLICT DO NOTHING`,
		// Locked in byte order of the stream ids (the rows are locked as the
		// sorted rows come out), the order ApplyBatch sorts its events in.
		// One per projection (in name order): with projection = ANY($1), the
		// generic plan read every checkpoint of the projection per batch.
		lockCheckpoints: `SELECT stream_id, version FROM ` + t("checkpoints") + `
			WHERE projection = $1 AND stream_id = ANY($2::text[]) ORDER BY stream_id COLLATE "C" FOR UPDATE`,
		saveCheckpoints: `UPDATE ` + t("checkpoints") + ` c SET version = u.version, position = u.position
			FROM unnest($2::text[], $3::int8[], $4::int8[]) AS u(stream_id, version, position)
			WHERE c.projection = $1 AND c.stream_id = u.stream_id`,
		// One probe of the game-transaction key per lookup, whatever the
		// statistics say: as a plain join, a plan made while the table held
		// no bets walked every bet for each batch once it did (46 ms).
		lookupGameTxs: `SELECT k.i, t.type, coalesce(t.game, ''), t.promo, t.jackpot
			FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS k(client_id, provider, external_id, i)
			CROSS JOIN LATERAL (
				SELECT type, game, promo, jackpot FROM ` + t("transactions") + `
				WHERE client_id = k.client_id AND provider = k.provider AND external_id = k.external_id
				  AND type IN ('bet', 'win')
				LIMIT 1) t`,
		insertTxs: `INSERT INTO ` + t("transactions") + ` (` + txCols + `)` + txRows,
		// A batch's game results, merged per row beforehand (Transaction.AddGameResult
		// keeps these rules), since one statement may not update a row
		// twice; in id order, the lock order of every writer.
		upsertGameResults: `INSERT INTO ` + t("transactions") + ` AS t (` + txCols + `)` + txRows + `
			ON CONFLICT (id) DO UPDATE SET
				amount = t.amount + excluded.amount,
				open_bets = t.open_bets + excluded.open_bets,
				rolled_bets = t.rolled_bets + excluded.rolled_bets,
				wins = t.wins + excluded.wins,
				closed = t.closed OR excluded.closed,
				position = greatest(t.position, excluded.position),
				seq = least(t.seq, excluded.seq),
				created_at = CASE WHEN excluded.seq < t.seq THEN excluded.created_at ELSE t.created_at END,
				game = CASE WHEN excluded.seq < t.seq THEN excluded.game ELSE t.game END,
				player_id = CASE WHEN excluded.seq < t.seq THEN excluded.player_id ELSE t.player_id END`,
		upsertGGRs: `INSERT INTO ` + t("ggr_daily") + ` AS g (client_id, day, provider, game, currency, scale, ` +
			strings.Join(ggrAmounts, ", ") + `)
			SELECT * FROM unnest($1::text[], $2::date[], $3::text[], $4::text[], $5::text[], $6::int2[], ` +
			strings.Join(ggrArrays, ", ") + `)
			ON CONFLICT (client_id, day, provider, game, currency) DO UPDATE SET ` + strings.Join(adds, ", "),
		upsertBalances: `INSERT INTO ` + t("balances") + ` AS b (account_id, kind, client_id, player_id, currency, scale, balance, position)
			SELECT account_id, kind, client_id, nullif(player_id, ''), currency, scale, balance, position
			FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int2[], $7::int8[], $8::int8[])
			  AS u(account_id, kind, client_id, player_id, currency, scale, balance, position)
			ON CONFLICT (account_id) DO UPDATE
			SET balance = b.balance + excluded.balance, position = greatest(b.position, excluded.position)`,
		skipCheckpoint: `INSERT INTO ` + t("checkpoints") + ` AS c (projection, stream_id, version, position)
			VALUES ($1, $2, $3, $4) ON CONFLICT (projection, stream_id) DO UPDATE
			SET version = excluded.version, position = excluded.position WHERE c.version < excluded.version`,
		// One per key marked (its greatest position): as an UPDATE … FROM
		// unnest, the generic plan hashed every bet and win per batch.
		markRolledBack: `UPDATE ` + t("transactions") + ` SET base_status = 'rolled_back', position = greatest(position, $4)
			WHERE client_id = $1 AND provider = $2 AND external_id = $3 AND type IN ('bet', 'win')`,
		// A batch's player members (distinct, in key order: one lock order
		// for every writer) and, for the rows that are new, their days in
		// their months' bitmaps (projections.PlayerMonthOf), in key order
		// too: one statement, so a bit is set exactly when a member row of
		// that day exists, and a month that has the days already is not
		// written again.
		addPlayers: `WITH member AS (
				INSERT INTO ` + t("ggr_players") + ` (client_id, day, provider, game, currency, player_id)
				SELECT * FROM unnest($1::text[], $2::date[], $3::text[], $4::text[], $5::text[], $6::text[])
				ON CONFLICT DO NOTHING RETURNING client_id, day, currency, player_id)
			INSERT INTO ` + t("ggr_player_months") + ` AS m (client_id, month, currency, player_id, days)
			SELECT client_id, day - (extract(day FROM day)::int - 1), currency, player_id,
			       bit_or(1::bigint << (extract(day FROM day)::int - 1))
			FROM member GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
			ON CONFLICT (client_id, month, currency, player_id) DO UPDATE SET days = m.days | excluded.days
			WHERE m.days | excluded.days <> m.days`,
		// Serialises the transactions that record a round ($2: the batch's
		// round keys, sorted: one lock order), so addRound's prev (read
		// after these locks) is committed state: two projector processes
		// may apply bets of one round from two streams at once.
		lockRound: `SELECT count(pg_advisory_xact_lock($1, hashtext(k)))
			FROM (SELECT k FROM unnest($2::text[]) WITH ORDINALITY AS u(k, i) ORDER BY i) s`,
		// A batch's rounds (each the least (day, game) of its bets in it,
		// projections.RoundStart): recorded where they start, counted in
		// that group's ggr_daily.rounds (upserted just before), moved (a
		// count from the old group to the new) when started earlier.
		addRound: `WITH u AS (
				SELECT * FROM unnest($1::text[], $2::date[], $3::text[], $4::text[], $5::text[], $6::text[])
				  AS u(client_id, day, provider, game, currency, round_key)),
			prev AS (
				SELECT r.client_id, r.day, r.provider, r.game, r.currency, r.round_key FROM u JOIN ` + t("ggr_rounds") + ` r
				USING (client_id, provider, currency, round_key)),
			moved AS (
				INSERT INTO ` + t("ggr_rounds") + ` AS r (client_id, provider, currency, round_key, day, game)
				SELECT client_id, provider, currency, round_key, day, game FROM u
				ON CONFLICT (client_id, provider, currency, round_key) DO UPDATE SET day = excluded.day, game = excluded.game
				WHERE (excluded.day, excluded.game COLLATE "C") < (r.day, r.game COLLATE "C")
				RETURNING client_id, provider, currency, round_key),
			delta AS (
				SELECT client_id, day, provider, game, currency, 1 AS d FROM u JOIN moved USING (client_id, provider, currency, round_key)
				UNION ALL
				SELECT client_id, day, provider, game, currency, -1 FROM prev JOIN moved USING (client_id, provider, currency, round_key)),
			sums AS (SELECT client_id, day, provider, game, currency, sum(d) AS d FROM delta GROUP BY 1, 2, 3, 4, 5)
			UPDATE ` + t("ggr_daily") + ` g SET rounds = g.rounds + s.d FROM sums s
			WHERE s.d <> 0 AND g.client_id = s.client_id AND g.day = s.day AND g.provider = s.provider AND g.game = s.game
			  AND g.currency = s.currency`,
		position:     `SELECT coalesce((SELECT position FROM ` + t("positions") + ` WHERE projection = $1), 0)`,
		lockPosition: `SELECT position FROM ` + t("positions") + ` WHERE projection = $1 FOR UPDATE SKIP LOCKED`,
		waitPosition: `SELECT position FROM ` + t("positions") + ` WHERE projection = $1 FOR UPDATE`,
		savePosition: `INSERT INTO ` + t("positions") + ` AS p (projection, position) VALUES ($1, $2)
			ON CONFLICT (projection) DO UPDATE SET position = excluded.position`,
		// The events after the watermark, in position order, and whether
		// the projection has applied each (its stream's checkpoint is at or
		// past it). Positions only appear in commit order (the ledger's
		// batch lock), so a hole below a committed position never fills.
		scanEvents: `SELECT e.position, e.stream_version <= coalesce(c.version, 0)
			FROM events e LEFT JOIN ` + t("checkpoints") + ` c ON c.projection = $1 AND c.stream_id = e.stream_id
			WHERE e.position > $2 ORDER BY e.position LIMIT $3`,
		// Numbers the history rows that just fell under the watermark, per
		// client in (seq, sub) order, after the client's rows so far.
		sequence: `WITH new AS (
				SELECT client_id, id, row_number() OVER (PARTITION BY client_id ORDER BY seq, sub) AS k,
				       count(*) OVER (PARTITION BY client_id) AS n
				FROM ` + t("transactions") + ` WHERE seq > $1 AND seq <= $2),
			counts AS (
				INSERT INTO ` + t("tx_counts") + ` AS c (client_id, rows)
				SELECT client_id, max(n) FROM new GROUP BY client_id
				ON CONFLICT (client_id) DO UPDATE SET rows = c.rows + excluded.rows
				RETURNING client_id, rows)
			INSERT INTO ` + t("tx_order") + ` (client_id, rn, id)
			SELECT new.client_id, counts.rows - new.n + new.k, new.id FROM new JOIN counts USING (client_id)`,
		// Counts the rows just numbered per client and type and per client
		// and player, and marks every projections.MarkEvery-th of each
		// (counted from the oldest).
		sequenceMarks: `WITH numbered AS (
				SELECT client_id, '` + projections.FilterType + `' AS filter, type AS value, seq, sub
				FROM ` + t("transactions") + ` WHERE seq > $1 AND seq <= $2
				UNION ALL
				SELECT client_id, '` + projections.FilterPlayer + `', player_id, seq, sub
				FROM ` + t("transactions") + ` WHERE seq > $1 AND seq <= $2 AND player_id IS NOT NULL),
			new AS (
				SELECT client_id, filter, value, seq, sub,
				       row_number() OVER (PARTITION BY client_id, filter, value ORDER BY seq, sub) AS k,
				       count(*) OVER (PARTITION BY client_id, filter, value) AS n
				FROM numbered),
			counts AS (
				INSERT INTO ` + t("tx_filter_counts") + ` AS c (client_id, filter, value, rows)
				SELECT client_id, filter, value, max(n) FROM new GROUP BY client_id, filter, value
				ON CONFLICT (client_id, filter, value) DO UPDATE SET rows = c.rows + excluded.rows
				RETURNING client_id, filter, value, rows)
			INSERT INTO ` + t("tx_filter_marks") + ` (client_id, filter, value, rn, seq, sub)
			SELECT new.client_id, new.filter, new.value, counts.rows - new.n + new.k, new.seq, new.sub
			FROM new JOIN counts USING (client_id, filter, value)
			WHERE (counts.rows - new.n + new.k) % ` + strconv.Itoa(projections.MarkEvery) + ` = 0`,
		// Widens each client's day bounds by the rows just numbered.
		sequenceDays: `INSERT INTO ` + t("tx_days") + ` AS d (client_id, day, min_seq, max_seq)
			SELECT client_id, (created_at AT TIME ZONE 'UTC')::date, min(seq), max(seq) FROM ` + t("transactions") + `
			WHERE seq > $1 AND seq <= $2 GROUP BY 1, 2
			ON CONFLICT (client_id, day) DO UPDATE
			SET min_seq = least(d.min_seq, excluded.min_seq), max_seq = greatest(d.max_seq, excluded.max_seq)`,
	}
}

// batcher is a connection or transaction that can pipeline statements.
type batcher interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// Apply applies event e to projection p: in one transaction it locks the
// stream's checkpoint, skips e if the checkpoint is at or past it (applied
// false), refuses it with a *projections.GapError if a version is missing,
// and otherwise writes p's Changes and moves the checkpoint to e. A
// *projections.InvalidEventError means e can never be applied; any other
// error is worth a retry (the transaction rolled back).
//
// It is ApplyBatch with a batch of one event (two round trips in all).
func (m *ReadModels) Apply(ctx context.Context, p projections.Projection, e domain.Event) (applied bool, err error) {
	res, err := m.ApplyBatch(ctx, p, []domain.Event{e})
	if err != nil {
		return false, err
	}
	return res[0].Applied, res[0].Err
}

// applyOn applies e on db, a transaction the caller ends (Swap's catch-up),
// as a batch of one event.
func (m *ReadModels) applyOn(ctx context.Context, db batcher, p projections.Projection, e domain.Event) (bool, error) {
	res, err := m.applyEvents(ctx, db, []projections.Projection{p}, []domain.Event{e}, false)
	if err != nil {
		return false, err
	}
	return res[0][0].Applied, res[0][0].Err
}

// nullText stores "" as NULL.
func nullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// RecordDeadLetter logs d and moves its stream's checkpoint past it (when
// the stream and version are known), so the stream's later events apply.
func (m *ReadModels) RecordDeadLetter(ctx context.Context, d projections.DeadLetter) error {
	tx, err := m.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx)
	_, err = tx.Exec(ctx, `INSERT INTO projection_dead_letters
		(projection, event_id, stream_id, stream_version, position, reason, topic, kafka_partition, kafka_offset)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		string(d.Projection), d.EventID, d.StreamID, d.Version, d.Position, d.Reason, d.Topic, d.Partition, d.Offset)
	if err != nil {
		return fmt.Errorf("record dead letter: %w", err)
	}
	if d.StreamID != "" && d.Version > 0 {
		if _, err := tx.Exec(ctx, m.sql.skipCheckpoint, string(d.Projection), d.StreamID, d.Version, d.Position); err != nil {
			return fmt.Errorf("move checkpoint of %s past version %d: %w", d.StreamID, d.Version, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit dead letter: %w", err)
	}
	return nil
}

// Position returns projection p's watermark.
func (m *ReadModels) Position(ctx context.Context, p projections.Name) (int64, error) {
	var pos int64
	if err := m.pool.QueryRow(ctx, m.sql.position, string(p)).Scan(&pos); err != nil {
		return 0, fmt.Errorf("position of %s: %w", p, err)
	}
	return pos, nil
}

// Advance moves projection p's watermark up to the last event before the
// first one p has not applied, numbers the history rows that fell under it
// (History), and returns the watermark. One process advances a projection
// at a time; the others return the watermark as it is.
func (m *ReadModels) Advance(ctx context.Context, p projections.Name) (int64, error) {
	for {
		pos, more, err := m.advanceStep(ctx, m.pool, p, true)
		if err != nil || !more {
			return pos, err
		}
	}
}

// advanceStep looks at up to advanceLimit events after the watermark. db is
// the pool (own transaction) or the caller's transaction.
func (m *ReadModels) advanceStep(ctx context.Context, db interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}, p projections.Name, skipLocked bool) (int64, bool, error) {
	tx, err := db.Begin(ctx)
	if err != nil {
		return 0, false, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx)
	var from int64
	lock := m.sql.waitPosition
	if skipLocked {
		lock = m.sql.lockPosition
	}
	err = tx.QueryRow(ctx, lock, string(p)).Scan(&from)
	if errors.Is(err, pgx.ErrNoRows) {
		if !skipLocked {
			return 0, false, fmt.Errorf("no watermark row for %s", p)
		}
		pos, err := m.Position(ctx, p) // another process is advancing it
		return pos, false, err
	}
	if err != nil {
		return 0, false, fmt.Errorf("lock watermark of %s: %w", p, err)
	}
	// The scan stops at the first event not yet applied. It reads in
	// chunks, growing from advanceChunk: under load the first unapplied
	// event is near the watermark, and reading (and joining) every event
	// up to advanceLimit behind it, on every step, cost Postgres 65 ms a
	// step once the history projection lagged by a few thousand events —
	// and the cost grew with the lag it caused.
	to, seen, stopped := from, 0, false
	for chunk := advanceChunk; !stopped && seen < advanceLimit; chunk = min(chunk*4, advanceLimit) {
		limit := min(chunk, advanceLimit-seen)
		rows, _ := tx.Query(ctx, m.sql.scanEvents, string(p), to, limit)
		var (
			position int64
			applied  bool
			n        int
		)
		_, err = pgx.ForEachRow(rows, []any{&position, &applied}, func() error {
			n++
			if stopped || !applied {
				stopped = true
				return nil
			}
			to = position
			return nil
		})
		if err != nil {
			return 0, false, fmt.Errorf("scan events after %d: %w", to, err)
		}
		seen += n
		if n < limit {
			stopped = true // the head
		}
	}
	if to == from {
		return from, false, nil
	}
	if p == projections.History {
		if _, err := tx.Exec(ctx, m.sql.sequence, from, to); err != nil {
			return 0, false, fmt.Errorf("number history rows %d..%d: %w", from+1, to, err)
		}
		if _, err := tx.Exec(ctx, m.sql.sequenceDays, from, to); err != nil {
			return 0, false, fmt.Errorf("day bounds of history rows %d..%d: %w", from+1, to, err)
		}
		if _, err := tx.Exec(ctx, m.sql.sequenceMarks, from, to); err != nil {
			return 0, false, fmt.Errorf("marks of history rows %d..%d: %w", from+1, to, err)
		}
	}
	if _, err := tx.Exec(ctx, m.sql.savePosition, string(p), to); err != nil {
		return 0, false, fmt.Errorf("save watermark of %s: %w", p, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, false, fmt.Errorf("commit watermark of %s: %w", p, err)
	}
	return to, !stopped && seen == advanceLimit, nil
}
