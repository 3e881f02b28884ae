package readstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/adapters/postgres"
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
//
// The statements are per batch where the changes commute: the checkpoints
// (locked and saved; made only for streams new to the projection), the
// lookups, the new history rows, the game
// results, the GGR sums, the players, the rollback marks, the rounds
// (merged per round, with their advisory locks in one statement more) and
// the balances are one statement each over arrays, whatever the batch's
// size. Per event, before, the history projection
// sent about nine statements and the balances five: most of the database's
// CPU under the wallet load of `make bench`.
func (m *ReadModels) ApplyBatch(ctx context.Context, p projections.Projection, events []domain.Event) ([]projections.ApplyResult, error) {
	res, err := m.ApplyProjections(ctx, []projections.Projection{p}, events)
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// ApplyProjections is ApplyBatch for several projections in one transaction
// (the combined projector); results[k] are ps[k]'s. Each projection keeps
// its own checkpoints, so each skips, gap-checks and rejects on its own
// terms: an event invalid for one (or applied by it) applies to the others.
func (m *ReadModels) ApplyProjections(ctx context.Context, ps []projections.Projection, events []domain.Event) ([][]projections.ApplyResult, error) {
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
	return m.applyEvents(ctx, conn, ps, events, true)
}

// ckKey is a checkpoint: a projection's stream.
type ckKey struct{ projection, stream string }

// applyEvents runs ApplyProjections' two round trips on db; with ownTx it
// opens and commits the transaction itself, without it db is a transaction
// the caller ends (Swap's catch-up).
func (m *ReadModels) applyEvents(ctx context.Context, db batcher, ps []projections.Projection, events []domain.Event,
	ownTx bool) ([][]projections.ApplyResult, error) {
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
	names := make([]string, len(ps))
	for k, p := range ps {
		names[k] = string(p.Name())
	}
	lockNames := slices.Sorted(slices.Values(names)) // the lock order of the projections
	// Round trip 1: begin; each projection's checkpoints locked, in
	// (projection, stream) order, one lock order for every writer; the
	// lookups. Another round trip if a checkpoint is missing.
	streams := make([]string, len(order))
	for k, i := range order {
		streams[k] = string(events[i].StreamID)
	}
	var lk struct{ clients, providers, externals []string }
	var lookupOf []int // the event of each lookup
	for _, i := range order {
		for _, p := range ps {
			for _, k := range p.Lookups(events[i]) {
				lk.clients, lk.providers, lk.externals = append(lk.clients, k.ClientID), append(lk.providers, k.Provider),
					append(lk.externals, k.ExternalTxID)
				lookupOf = append(lookupOf, i)
			}
		}
	}
	b := &pgx.Batch{}
	if ownTx {
		b.Queue("BEGIN")
		b.Queue("SET LOCAL " + postgres.PlanCacheModeParam + " = " + postgres.GenericPlans) // see postgres.GenericPlans
	}
	for _, name := range lockNames {
		b.Queue(m.sql.lockCheckpoints, name, streams)
	}
	if len(lookupOf) > 0 {
		b.Queue(m.sql.lookupGameTxs, lk.clients, lk.providers, lk.externals)
	}
	locked := make(map[ckKey]int64, len(streams)*len(ps))
	found := make([]map[projections.GameTxKey]projections.GameTx, len(events))
	for i := range found {
		found[i] = map[projections.GameTxKey]projections.GameTx{}
	}
	err := func() error {
		br := db.SendBatch(ctx, b)
		defer br.Close()
		if ownTx {
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("begin: %w", err)
			}
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("generic plans: %w", err)
			}
		}
		for _, name := range lockNames {
			rows, _ := br.Query()
			if err := readCheckpoints(rows, name, locked); err != nil {
				return fmt.Errorf("lock %s checkpoints of %d streams: %w", name, len(streams), err)
			}
		}
		if len(lookupOf) > 0 {
			rows, _ := br.Query()
			var (
				idx int64
				g   projections.GameTx
			)
			if _, err := pgx.ForEachRow(rows, []any{&idx, &g.Type, &g.Game, &g.Promo, &g.Jackpot}, func() error {
				k := idx - 1
				i := lookupOf[k]
				key := projections.GameTxKey{ClientID: lk.clients[k], Provider: lk.providers[k], ExternalTxID: lk.externals[k]}
				found[i][key] = g
				return nil
			}); err != nil {
				return fmt.Errorf("look up %d bets and wins: %w", len(lookupOf), err)
			}
		}
		return br.Close()
	}()
	if err != nil {
		return nil, err
	}
	if err := m.ensureCheckpoints(ctx, db, lockNames, streams, locked); err != nil {
		return nil, err
	}

	results := make([][]projections.ApplyResult, len(ps))
	var all batchChanges
	for k, p := range ps {
		results[k] = make([]projections.ApplyResult, len(events))
		for _, i := range order {
			e := events[i]
			v, ok := locked[ckKey{names[k], string(e.StreamID)}]
			if !ok {
				return nil, fmt.Errorf("lock checkpoint of %s for %s: not found", e.StreamID, names[k])
			}
			ok, err := projections.Checkpoint(p.Name(), e, v)
			if err != nil || !ok {
				results[k][i].Err = err
				continue
			}
			f := found[i]
			ch, err := p.Apply(e, func(k projections.GameTxKey) (projections.GameTx, bool) {
				g, ok := f[k]
				return g, ok
			})
			if err != nil {
				results[k][i].Err = err
				continue
			}
			all.add(names[k], ch, e)
			results[k][i].Applied = true
		}
	}
	// Round trip 2: the changes and the commit.
	b = &pgx.Batch{}
	n := m.queueBatchChanges(b, &all)
	if ownTx {
		b.Queue("COMMIT")
	}
	if b.Len() == 0 {
		return results, nil
	}
	br := db.SendBatch(ctx, b)
	defer br.Close()
	for k := range n {
		if _, err := br.Exec(); err != nil {
			return nil, fmt.Errorf("apply statement %d of a batch of %d events: %w", k+1, len(events), err)
		}
	}
	if ownTx {
		tag, err := br.Exec()
		if err != nil {
			return nil, fmt.Errorf("commit: %w", err)
		}
		if tag.String() != "COMMIT" {
			return nil, fmt.Errorf("commit: transaction ended with %s", tag.String())
		}
	}
	return results, br.Close()
}

// ensureCheckpoints makes and locks the checkpoints the lock found none
// for (a projection's first events of streams). Making every row before
// locking it was a statement per batch that found them there: 17 µs of
// Postgres time per event at 64 wallet calls (docs/benchmarks.md). The new
// rows are locked after the existing ones, both in the same order.
func (m *ReadModels) ensureCheckpoints(ctx context.Context, db batcher, names, streams []string, locked map[ckKey]int64) error {
	missing := map[string][]string{}
	b := &pgx.Batch{}
	for _, p := range names {
		for _, s := range streams {
			if _, ok := locked[ckKey{p, s}]; !ok {
				missing[p] = append(missing[p], s)
			}
		}
		if len(missing[p]) > 0 {
			b.Queue(m.sql.ensureCheckpoints, p, missing[p])
			b.Queue(m.sql.lockCheckpoints, p, missing[p])
		}
	}
	if b.Len() == 0 {
		return nil
	}
	br := db.SendBatch(ctx, b)
	defer br.Close()
	for _, p := range names {
		if len(missing[p]) == 0 {
			continue
		}
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("make %s checkpoints of %d streams: %w", p, len(missing[p]), err)
		}
		rows, _ := br.Query()
		if err := readCheckpoints(rows, p, locked); err != nil {
			return fmt.Errorf("lock new %s checkpoints of %d streams: %w", p, len(missing[p]), err)
		}
	}
	return br.Close()
}

// readCheckpoints adds projection's (stream, version) rows to locked.
func readCheckpoints(rows pgx.Rows, projection string, locked map[ckKey]int64) error {
	var (
		stream  string
		version int64
	)
	_, err := pgx.ForEachRow(rows, []any{&stream, &version}, func() error {
		locked[ckKey{projection, stream}] = version
		return nil
	})
	return err
}

// batchChanges gathers the Changes of a batch's events for
// queueBatchChanges: the kinds that commute (new rows, game results, GGR
// sums, players, rollback marks, rounds, balance sums, checkpoints) as one
// statement each, merged per key where a statement may not touch a row
// twice.
type batchChanges struct {
	txs       []projections.Transaction
	results   merged[string, projections.Transaction] // game results by id
	ggr       merged[projections.GGRKey, projections.GGRDelta]
	players   merged[projections.GGRMember, struct{}]
	balances  merged[domain.AccountID, projections.Balance]
	marks     merged[projections.GameTxKey, int64]  // rollback marks: the greatest position
	rounds    merged[string, projections.GGRMember] // by round key: the least (day, game)
	projs     []string                              // the checkpoints: projection, stream, version, position
	streams   []string
	versions  []int64
	positions []int64
}

// merged holds a batch's values by key: the first value of each key, with
// the later ones merged into it, and the keys in the order first seen.
type merged[K comparable, V any] struct {
	byKey map[K]*V
	keys  []K
}

// add keeps v under k, or merges it into the value there (merge nil: the
// first value stands).
func (m *merged[K, V]) add(k K, v V, merge func(into *V, v V)) {
	if p, ok := m.byKey[k]; ok {
		if merge != nil {
			merge(p, v)
		}
		return
	}
	if m.byKey == nil {
		m.byKey = map[K]*V{}
	}
	m.byKey[k] = &v
	m.keys = append(m.keys, k)
}

func (c *batchChanges) add(projection string, ch projections.Changes, e domain.Event) {
	c.txs = append(c.txs, ch.Transactions...)
	for _, t := range ch.GameResults {
		c.results.add(t.ID, t, (*projections.Transaction).AddGameResult)
	}
	for _, g := range ch.GGR {
		c.ggr.add(g.GGRKey, g, (*projections.GGRDelta).Add)
	}
	for _, x := range ch.Balances {
		c.balances.add(x.Account, x, func(into *projections.Balance, x projections.Balance) {
			into.Balance += x.Balance
			into.Position = max(into.Position, x.Position)
		})
	}
	for _, p := range ch.Players {
		c.players.add(p, struct{}{}, nil)
	}
	for _, r := range ch.RolledBack {
		c.marks.add(r.Key, r.Position, func(into *int64, p int64) { *into = max(*into, p) })
	}
	for _, r := range ch.Rounds {
		c.rounds.add(r.ClientID+"|"+r.Provider+"|"+r.Currency+"|"+r.Member, r, func(into *projections.GGRMember, r projections.GGRMember) {
			if r.Day.Before(into.Day) || r.Day.Equal(into.Day) && r.Game < into.Game {
				*into = r
			}
		})
	}
	c.projs, c.streams = append(c.projs, projection), append(c.streams, string(e.StreamID))
	c.versions = append(c.versions, e.Version)
	c.positions = append(c.positions, e.Position)
}

// queueBatchChanges queues c's statements and returns how many. The order
// keeps what Apply's order guarantees: rows exist before a rollback marks
// them, a bet's GGR row exists before its round is counted in it. The game
// results and players of the whole batch may go before the marks and
// rounds: a mark only touches bets and wins, never a game result, and a
// round neither. Game results, GGR rows, players, marks, round locks and
// balances are written in key order, so two projector processes lock shared
// rows in one order.
func (m *ReadModels) queueBatchChanges(b *pgx.Batch, c *batchChanges) int {
	n := b.Len()
	if len(c.txs) > 0 {
		var a txArrays
		for i := range c.txs {
			a.add(&c.txs[i])
		}
		b.Queue(m.sql.insertTxs, a.args()...)
	}
	if len(c.results.keys) > 0 {
		slices.Sort(c.results.keys) // canonical uuid text: byte order is the uuid order
		var a txArrays
		for _, id := range c.results.keys {
			a.add(c.results.byKey[id])
		}
		b.Queue(m.sql.upsertGameResults, a.args()...)
	}
	if len(c.ggr.keys) > 0 {
		m.queueGGRs(b, c)
	}
	if len(c.players.keys) > 0 {
		slices.SortFunc(c.players.keys, func(a, b projections.GGRMember) int {
			return cmp.Or(cmpGGRKey(a.GGRKey, b.GGRKey), strings.Compare(a.Member, b.Member))
		})
		var (
			clients, providers, games, currencies, players []string
			days                                           []time.Time
		)
		for _, p := range c.players.keys {
			clients, days, providers, games, currencies, players = append(clients, p.ClientID), append(days, p.Day),
				append(providers, p.Provider), append(games, p.Game), append(currencies, p.Currency), append(players, p.Member)
		}
		b.Queue(m.sql.addPlayers, clients, days, providers, games, currencies, players)
	}
	if len(c.marks.keys) > 0 {
		slices.SortFunc(c.marks.keys, func(a, b projections.GameTxKey) int {
			return cmp.Or(strings.Compare(a.ClientID, b.ClientID), strings.Compare(a.Provider, b.Provider),
				strings.Compare(a.ExternalTxID, b.ExternalTxID))
		})
		for _, k := range c.marks.keys {
			b.Queue(m.sql.markRolledBack, k.ClientID, k.Provider, k.ExternalTxID, *c.marks.byKey[k])
		}
	}
	if len(c.rounds.keys) > 0 {
		slices.Sort(c.rounds.keys)
		var clients, providers, games, currencies, members []string
		var days []time.Time
		for _, k := range c.rounds.keys {
			r := c.rounds.byKey[k]
			clients, days, providers, games = append(clients, r.ClientID), append(days, r.Day), append(providers, r.Provider), append(games, r.Game)
			currencies, members = append(currencies, r.Currency), append(members, r.Member)
		}
		b.Queue(m.sql.lockRound, roundLockClass, c.rounds.keys)
		b.Queue(m.sql.addRound, clients, days, providers, games, currencies, members)
	}
	if len(c.balances.keys) > 0 {
		m.queueBalances(b, c)
	}
	if len(c.streams) > 0 {
		for _, p := range slices.Compact(slices.Sorted(slices.Values(c.projs))) {
			var streams []string
			var versions, positions []int64
			for k := range c.projs {
				if c.projs[k] == p {
					streams, versions, positions = append(streams, c.streams[k]), append(versions, c.versions[k]), append(positions, c.positions[k])
				}
			}
			b.Queue(m.sql.saveCheckpoints, p, streams, versions, positions)
		}
	}
	return b.Len() - n
}

// queueGGRs queues the upsert of c's GGR groups, in key order
// (queueBatchChanges).
func (m *ReadModels) queueGGRs(b *pgx.Batch, c *batchChanges) {
	slices.SortFunc(c.ggr.keys, cmpGGRKey)
	var (
		clients, providers, games, currencies []string
		days                                  []time.Time
		scales                                []int16
		sums                                  [10][]int64
	)
	for _, k := range c.ggr.keys {
		g := c.ggr.byKey[k]
		clients, days, providers, games, currencies = append(clients, k.ClientID), append(days, k.Day),
			append(providers, k.Provider), append(games, k.Game), append(currencies, k.Currency)
		scales = append(scales, int16(g.Scale))
		for j, v := range []int64{g.Bets, g.BetRefunds, g.Wins, g.WinReversals, g.PromoBets, g.PromoBetRefunds,
			g.PromoWins, g.PromoWinReversals, g.JackpotWins, g.JackpotWinReversals} {
			sums[j] = append(sums[j], v)
		}
	}
	args := []any{clients, days, providers, games, currencies, scales}
	for _, s := range sums {
		args = append(args, s)
	}
	b.Queue(m.sql.upsertGGRs, args...)
}

// queueBalances queues the upsert of c's balances, in key order
// (queueBatchChanges).
func (m *ReadModels) queueBalances(b *pgx.Batch, c *batchChanges) {
	slices.Sort(c.balances.keys)
	var (
		accounts, kinds, clients, players, currencies []string
		scales                                        []int16
		balances, positions                           []int64
	)
	for _, a := range c.balances.keys {
		x := c.balances.byKey[a]
		accounts, kinds, clients, players, currencies = append(accounts, string(a)), append(kinds, x.Kind),
			append(clients, x.ClientID), append(players, x.PlayerID), append(currencies, x.Currency)
		scales, balances, positions = append(scales, int16(x.Scale)), append(balances, x.Balance), append(positions, x.Position)
	}
	b.Queue(m.sql.upsertBalances, accounts, kinds, clients, players, currencies, scales, balances, positions)
}

// txArrays holds history rows column by column, for insertTxs and
// upsertGameResults.
type txArrays struct {
	ids, clients, types, currencies, statuses, providers, games, players, rounds, externals, references []string
	amounts, seqs, positions, balances, openBets, rolledBets, wins, jackpots                            []int64
	campaigns, rewards                                                                                  []string
	scales, subs                                                                                        []int16
	createdAt                                                                                           []time.Time
	hasBalance, promos, closed                                                                          []bool
}

func (a *txArrays) add(t *projections.Transaction) {
	a.ids, a.clients, a.types, a.currencies, a.statuses = append(a.ids, t.ID), append(a.clients, t.ClientID),
		append(a.types, string(t.Type)), append(a.currencies, t.Currency), append(a.statuses, string(t.Status))
	a.providers, a.games, a.players, a.rounds = append(a.providers, t.Provider), append(a.games, t.Game),
		append(a.players, t.PlayerID), append(a.rounds, t.RoundID)
	a.externals, a.references = append(a.externals, t.ExternalTxID), append(a.references, t.ReferenceTx)
	a.amounts, a.seqs, a.positions, a.balances = append(a.amounts, t.Amount), append(a.seqs, t.Seq),
		append(a.positions, t.Position), append(a.balances, t.BalanceAfter)
	a.openBets, a.rolledBets, a.wins = append(a.openBets, t.OpenBets), append(a.rolledBets, t.RolledBets), append(a.wins, t.Wins)
	a.scales, a.subs, a.createdAt = append(a.scales, int16(t.Scale)), append(a.subs, int16(t.Sub)), append(a.createdAt, t.CreatedAt)
	a.hasBalance, a.promos, a.closed = append(a.hasBalance, t.HasBalanceAfter), append(a.promos, t.Promo), append(a.closed, t.Closed)
	a.jackpots, a.campaigns, a.rewards = append(a.jackpots, t.Jackpot), append(a.campaigns, t.CampaignID), append(a.rewards, t.RewardID)
}

// args are insertTxs' and upsertGameResults' parameters, in their unnest's
// order.
func (a *txArrays) args() []any {
	return []any{a.ids, a.clients, a.types, a.amounts, a.currencies, a.scales, a.statuses, a.createdAt, a.providers,
		a.games, a.players, a.rounds, a.externals, a.references, a.seqs, a.subs, a.positions, a.balances, a.hasBalance,
		a.promos, a.openBets, a.rolledBets, a.wins, a.closed, a.jackpots, a.campaigns, a.rewards}
}
