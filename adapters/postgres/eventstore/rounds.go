package eventstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
)

// roundCloseLockClass is the class of the session advisory lock that lets
// one stale-round job at a time work (adapters/roundclose).
const roundCloseLockClass = 0x726e6463 // "rndc"

// sqlStaleRounds finds the open rounds (a bet standing, not closed: the
// predicate of tx_records_open_rounds_idx, migrations/00024) of the
// providers whose wallet protocol has a limit ($1, $2: protocol and
// milliseconds), opened at or before now ($3) less that limit. A round
// opens with its record's created_at; one recorded before rounds kept it
// (the zero time) by the time its row was written. Closed rounds leave the
// index, so each run sees only what is still to do.
const sqlStaleRounds = `
WITH ages AS (
	SELECT p.id, a.ms FROM providers p
	JOIN unnest($1::text[], $2::bigint[]) AS a(protocol, ms) ON a.protocol = p.wallet_protocol
	WHERE a.ms > 0
), open AS (
	SELECT r.key, r.record, ages.ms,
	       CASE WHEN coalesce(r.record->>'created_at', '') IN ('', '0001-01-01T00:00:00Z') THEN r.created_at
	            ELSE (r.record->>'created_at')::timestamptz END AS opened
	FROM ages
	JOIN tx_records r ON split_part(r.key, '|', 3) = ages.id
	WHERE r.kind = 'round' AND NOT coalesce((r.record->>'closed')::boolean, false)
	  AND coalesce((r.record->>'open_bets')::bigint, 0) > 0
)
SELECT key, record, ms FROM open
WHERE opened <= $3::timestamptz - ms * interval '1 millisecond'
ORDER BY opened, key
LIMIT $4`

// Rounds finds the rounds the ledger closes on its own
// (adapters/roundclose).
type Rounds struct{ pool *pgxpool.Pool }

// NewRounds returns the stale-round finder over pool.
func NewRounds(pool *pgxpool.Pool) *Rounds { return &Rounds{pool: pool} }

// Exclusive runs fn while it holds the stale-round job's session advisory
// lock; when another instance holds it, it returns false at once without
// running fn.
func (s *Rounds) Exclusive(ctx context.Context, fn func(context.Context) error) (ran bool, err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return false, fmt.Errorf("stale rounds: acquire connection: %w", err)
	}
	defer conn.Release()
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, 0)`, roundCloseLockClass).Scan(&ran); err != nil {
		return false, fmt.Errorf("stale rounds: lock: %w", err)
	}
	if !ran {
		return false, nil
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1, 0)`, roundCloseLockClass)
	}()
	return true, fn(ctx)
}

// StaleRounds returns up to limit rounds open past their provider's limit
// at now, oldest first. ages maps a wallet protocol to its limit; a
// protocol missing or at zero closes nothing.
func (s *Rounds) StaleRounds(ctx context.Context, ages map[string]time.Duration, now time.Time, limit int) ([]commands.StaleRound, error) {
	var protocols []string
	var ms []int64
	for p, a := range ages {
		if a > 0 {
			protocols, ms = append(protocols, p), append(ms, a.Milliseconds())
		}
	}
	if len(protocols) == 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, sqlStaleRounds, protocols, ms, now, limit)
	if err != nil {
		return nil, fmt.Errorf("stale rounds: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (commands.StaleRound, error) {
		var (
			key string
			raw []byte
			age int64
			rec domain.TxRecord
		)
		if err := row.Scan(&key, &raw, &age); err != nil {
			return commands.StaleRound{}, err
		}
		if err := json.Unmarshal(raw, &rec); err != nil {
			return commands.StaleRound{}, fmt.Errorf("decode the record of %s: %w", key, err)
		}
		client, provider, round, ok := splitRoundKey(key)
		if !ok {
			return commands.StaleRound{}, fmt.Errorf("round record key %q is not a round key", key)
		}
		return commands.StaleRound{Wallet: rec.Account, RoundClose: domain.RoundClose{Client: client, Provider: provider,
			Round: round, After: time.Duration(age) * time.Millisecond}}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("stale rounds: %w", err)
	}
	return out, nil
}

// splitRoundKey reads domain.RoundKey back: ids have no '|'
// (domain.ValidateID).
func splitRoundKey(key string) (client, provider, round string, ok bool) {
	p := strings.Split(key, "|")
	if len(p) != 4 || p[0] != "round" {
		return "", "", "", false
	}
	return p[1], p[2], p[3], true
}
