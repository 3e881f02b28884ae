package eventstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/domain"
)

// A generated ledger is written straight into an empty event store by
// COPY, fast enough for tens of millions of events. Every event is decided
// by the domain's own decisions on a domain.View (so the postings balance,
// no wallet goes below zero and stream versions follow on), encoded with
// domain.EncodeBody and linked with domain.ChainHash, so `pitboss verify`
// and `pitboss replay` treat it like a ledger the writer produced. The
// accounts table gets the final state; idempotency records (tx_records)
// are not written: the store is for reading, not for further commands on
// the same ids.
//
// GenerateLedger does the writing; what happens in the ledger is a
// Traffic's: SeedEvents' (every kind of event, for the rebuild tests) and
// the benchmark's (a gateway's mix, cmd/pitboss-bench).

// Traffic decides the events of a generated ledger, one at a time.
type Traffic interface {
	// Decide returns the next change, decided on g.View() with g's clock
	// and ids. An error (a refused decision) makes g ask again.
	Decide(g *Generator) (domain.Change, error)
	// Open calls keep with the key of every idempotency record a later
	// decision may still need (open rounds, bets that may be rolled back,
	// wins that may be reversed). The generator keeps those, and the
	// accounts, when it starts a new view to bound its memory.
	Open(keep func(key string))
}

// GenerateOptions shapes the writing of a generated ledger.
type GenerateOptions struct {
	Events int           // how many
	Start  time.Time     // occurred_at of the first event
	Span   time.Duration // the events are spread evenly over it
	Seed   uint64        // same seed (and traffic), same ledger
	// RequestIDPrefix names the events' requests: "<prefix>-<n>".
	RequestIDPrefix string
	// Correlate sets each event's correlation id to its request id.
	Correlate bool
	// Tries bounds the decisions asked for one event.
	Tries int
	// CompactEvery is how many events pass between two new views (and
	// two calls of Progress).
	CompactEvery int
	// Progress, when set, is called every CompactEvery events.
	Progress func(events int)
	// RebuildIndexes drops the secondary indexes of events for the COPY
	// and builds them again after it, in the same transaction: a sorted
	// build is many times faster than millions of random inserts.
	RebuildIndexes bool
}

// ErrLedgerNotEmpty is returned by SeedEvents and GenerateLedger on a
// database with events.
var ErrLedgerNotEmpty = errors.New("the event store is not empty")

// SeedResult tells what a generated ledger holds and how long it took.
type SeedResult struct {
	Events   int64
	Head     int64
	Accounts int
	Took     time.Duration
	Copy     time.Duration // deciding and copying the events
	Index    time.Duration // building the secondary indexes again
}

// Generator is the state of a ledger being generated: the random source,
// the view the decisions read, the clock and the ids.
type Generator struct {
	opts     GenerateOptions
	rnd      *rand.Rand
	view     *domain.View
	accounts map[domain.AccountID]int64 // last position that touched it
	traffic  Traffic
	step     time.Duration
	n        int // events emitted
	ids      int
	prev     []byte
	vals     [9]any
	err      error
}

// Rand is the generator's random source, seeded with GenerateOptions.Seed.
func (g *Generator) Rand() *rand.Rand { return g.rnd }

// View is the ledger so far (since the last compaction: every account, and
// the records the traffic keeps open).
func (g *Generator) View() *domain.View { return g.view }

// Emitted is the number of events generated so far.
func (g *Generator) Emitted() int { return g.n }

// Now is the time of the next event.
func (g *Generator) Now() time.Time { return g.opts.Start.Add(time.Duration(g.n) * g.step) }

// Env is the envelope of one decision: the time, a random event id and
// the next request id.
func (g *Generator) Env() domain.Env {
	g.ids++
	var b [16]byte
	hi, lo := g.rnd.Uint64(), g.rnd.Uint64()
	for i := range 8 {
		b[i], b[8+i] = byte(hi>>(8*i)), byte(lo>>(8*i))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	meta := domain.Metadata{RequestID: g.opts.RequestIDPrefix + "-" + strconv.Itoa(g.ids)}
	if g.opts.Correlate {
		meta.CorrelationID = meta.RequestID
	}
	return domain.Env{Now: g.Now(), EventID: postgres.UUIDText(b), Meta: meta}
}

// NextID is an external id for the next decision: prefix and the number
// its Env will carry.
func (g *Generator) NextID(prefix string) string { return prefix + "-" + strconv.Itoa(g.ids+1) }

// GenerateLedger fills an empty event store, and its accounts table, with
// opts.Events events that the traffic newTraffic makes (it is called with
// the generator before the first event, and may draw from its Rand), in
// one transaction holding the ledger writers' lock.
func GenerateLedger(ctx context.Context, pool *pgxpool.Pool, opts GenerateOptions,
	newTraffic func(*Generator) (Traffic, error)) (SeedResult, error) {
	start := time.Now()
	g, err := newGenerator(opts, newTraffic)
	if err != nil {
		return SeedResult{}, err
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		return SeedResult{}, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx)
	// The writers' lock: no ledger writer can interleave a batch.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, DefaultLedgerLockKey); err != nil {
		return SeedResult{}, fmt.Errorf("take ledger lock: %w", err)
	}
	var busy bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM events)`).Scan(&busy); err != nil {
		return SeedResult{}, fmt.Errorf("check event store: %w", err)
	}
	if busy {
		return SeedResult{}, ErrLedgerNotEmpty
	}
	var rebuild []string
	if opts.RebuildIndexes {
		if rebuild, err = dropSecondaryIndexes(ctx, tx); err != nil {
			return SeedResult{}, err
		}
	}
	n, err := tx.CopyFrom(ctx, pgx.Identifier{"events"}, eventColumns, copySource{g})
	if err != nil {
		return SeedResult{}, fmt.Errorf("copy events: %w", err)
	}
	copied := time.Now()
	if len(rebuild) > 0 {
		if _, err := tx.Exec(ctx, `SET LOCAL maintenance_work_mem = '256MB'`); err != nil {
			return SeedResult{}, fmt.Errorf("set maintenance_work_mem: %w", err)
		}
		for _, stmt := range rebuild {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return SeedResult{}, fmt.Errorf("rebuild index: %s: %w", stmt, err)
			}
		}
	}
	indexed := time.Now()
	ids, kinds, curs, bals, vers, last := g.accountColumns()
	if _, err := tx.Exec(ctx, sqlUpsertAccounts, ids, kinds, curs, bals, vers, last); err != nil {
		return SeedResult{}, fmt.Errorf("save accounts: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return SeedResult{}, fmt.Errorf("commit: %w", err)
	}
	return SeedResult{Events: n, Head: int64(g.n), Accounts: len(ids), Took: time.Since(start),
		Copy: copied.Sub(start), Index: indexed.Sub(copied)}, nil
}

func newGenerator(opts GenerateOptions, newTraffic func(*Generator) (Traffic, error)) (*Generator, error) {
	if opts.Events < 0 || opts.Tries < 1 || opts.CompactEvery < 1 {
		return nil, fmt.Errorf("generate options %+v: %w", opts, domain.ErrInvalidArgument)
	}
	g := &Generator{opts: opts, rnd: rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)),
		view: domain.NewView(), accounts: map[domain.AccountID]int64{}, prev: domain.GenesisHash,
		step: max(opts.Span/time.Duration(max(opts.Events, 1)), time.Microsecond)}
	t, err := newTraffic(g)
	if err != nil {
		return nil, err
	}
	g.traffic = t
	return g, nil
}

// copySource is the generator as COPY reads it (pgx.CopyFromSource).
type copySource struct{ g *Generator }

// Next decides the next event. COPY calls it until it returns false.
func (c copySource) Next() bool {
	g := c.g
	if g.n >= g.opts.Events || g.err != nil {
		return false
	}
	for range g.opts.Tries {
		ch, err := g.traffic.Decide(g)
		if err != nil {
			continue // a refused decision: pick again
		}
		e, err := g.view.Apply(ch)
		if err != nil {
			continue
		}
		if g.err = g.emit(e); g.err != nil {
			return false
		}
		return true
	}
	g.err = fmt.Errorf("seed: no decision succeeded in %d tries", g.opts.Tries)
	return false
}

func (c copySource) Values() ([]any, error) { return c.g.vals[:], nil }

func (c copySource) Err() error { return c.g.err }

func (g *Generator) emit(e domain.Event) error {
	g.n++
	e.Position = int64(g.n)
	body, err := domain.EncodeBody(e)
	if err != nil {
		return fmt.Errorf("encode event %d: %w", e.Position, err)
	}
	hash := domain.ChainHash(g.prev, body)
	var id pgtype.UUID
	if err := id.Scan(e.ID); err != nil {
		return err
	}
	g.vals = [9]any{e.Position, id, string(e.StreamID), e.Version, string(e.Type), e.OccurredAt, body, g.prev, hash}
	g.prev = hash
	g.accounts[e.StreamID] = e.Position
	for _, p := range e.Data.Postings {
		g.accounts[p.Account] = e.Position
	}
	if g.n%g.opts.CompactEvery == 0 {
		g.compact()
		if g.opts.Progress != nil {
			g.opts.Progress(g.n)
		}
	}
	return nil
}

// compact starts a new view holding the accounts and the records the
// traffic keeps open, so memory stays flat however many events are made.
func (g *Generator) compact() {
	v := domain.NewView()
	for id := range g.accounts {
		v.LoadAccount(id, g.view.Account(id))
	}
	g.traffic.Open(func(key string) {
		if r, ok := g.view.Record(key); ok {
			v.LoadRecord(r)
		}
	})
	g.view = v
}

// accountColumns is the final state of every account for the accounts
// table.
func (g *Generator) accountColumns() (ids, kinds, curs []string, bals, vers, last []int64) {
	for id, pos := range g.accounts {
		st := g.view.Account(id)
		ids = append(ids, string(id))
		kinds = append(kinds, id.Kind().String())
		curs = append(curs, id.CurrencyCode())
		bals = append(bals, st.Balance)
		vers = append(vers, st.Version)
		last = append(last, pos)
	}
	return
}

// dropSecondaryIndexes drops every index and unique constraint of events
// but the primary key (positions arrive in order, so it is cheap to keep),
// and returns the statements that make them again. The definitions are
// read from the catalog, so they are the migrations'.
func dropSecondaryIndexes(ctx context.Context, tx pgx.Tx) ([]string, error) {
	var drop, make []string
	rows, err := tx.Query(ctx, `
SELECT format('ALTER TABLE events DROP CONSTRAINT %I', conname),
       format('ALTER TABLE events ADD CONSTRAINT %I %s', conname, pg_get_constraintdef(oid))
  FROM pg_constraint WHERE conrelid = 'events'::regclass AND contype = 'u'
UNION ALL
SELECT format('DROP INDEX %I.%I', n.nspname, c.relname), pg_get_indexdef(i.indexrelid)
  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE i.indrelid = 'events'::regclass AND NOT i.indisprimary
   AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)`)
	if err != nil {
		return nil, fmt.Errorf("read index definitions: %w", err)
	}
	for rows.Next() {
		var d, m string
		if err := rows.Scan(&d, &m); err != nil {
			return nil, fmt.Errorf("read index definitions: %w", err)
		}
		drop, make = append(drop, d), append(make, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read index definitions: %w", err)
	}
	for _, stmt := range drop {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return nil, fmt.Errorf("%s: %w", stmt, err)
		}
	}
	return make, nil
}
