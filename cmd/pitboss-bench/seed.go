package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/domain"
)

// The read side's data set: a generated ledger written straight into the
// event store by COPY, fast enough for ten million events. Every event is
// decided by the domain's own decision functions on a domain.View (so the
// postings balance, no wallet goes below zero and stream versions follow
// on), encoded with domain.EncodeBody and linked with domain.ChainHash, so
// `pitboss verify` and `pitboss replay` treat it like a ledger the writer
// produced. The accounts table gets the final state; idempotency records
// (tx_records) are not written: the store is for reading.
//
// The traffic looks like a gateway's: players of several operators, in
// several currencies, open a game of one of several providers and spin —
// a bet, then a win (often zero) or, about one spin in twenty, a rollback
// of the bet — top their wallets up when they run low, now and then
// withdraw; operators adjust a wallet once in a while. Some players are
// much more active than others.

// seedOptions shapes the generated ledger. Zero fields take defaults.
type seedOptions struct {
	Events     int
	Clients    int      // operators; default 3, weighted 60/30/10 %
	Players    int      // in all; default Events/1000, at least 100
	Providers  int      // default 4
	Games      int      // per provider; default 6
	Currencies []string // default EUR, USD, BRL, JPY, BTC (weighted)
	End        time.Time
	Span       time.Duration // occurred_at runs from End-Span to End; default 60 days
	Seed       uint64
	// Progress, when set, is called every 100,000 events.
	Progress func(events int)
}

// seedResult is what the generator wrote, and what the read benchmark
// queries.
type seedResult struct {
	Events   int64         `json:"events"`
	Accounts int           `json:"accounts"`
	Took     time.Duration `json:"took_ns"`
	Copy     time.Duration `json:"copy_ns"`  // generating and copying the events
	Index    time.Duration `json:"index_ns"` // building the secondary indexes
	Clients  []string      `json:"clients"`
	// Players are a sample of generated players (client, player,
	// currency), for balance and filtered history queries.
	Players   []seedPlayerRef `json:"-"`
	Providers []string        `json:"providers"`
	From, To  time.Time       `json:"-"`
}

type seedPlayerRef struct{ Client, Player, Currency string }

var errStoreNotEmpty = errors.New("the event store is not empty")

func (o *seedOptions) setDefaults() {
	if o.Clients == 0 {
		o.Clients = 3
	}
	if o.Players == 0 {
		o.Players = max(o.Events/1000, 100)
	}
	if o.Providers == 0 {
		o.Providers = 4
	}
	if o.Games == 0 {
		o.Games = 6
	}
	if len(o.Currencies) == 0 {
		o.Currencies = []string{"EUR", "USD", "BRL", "JPY", "BTC"}
	}
	if o.End.IsZero() {
		o.End = time.Now().UTC()
	}
	if o.Span == 0 {
		o.Span = 60 * 24 * time.Hour
	}
}

// seedLedger fills an empty event store (and its accounts table) with
// opts.Events generated events, in one transaction holding the ledger lock.
func seedLedger(ctx context.Context, pool *pgxpool.Pool, opts seedOptions) (seedResult, error) {
	start := time.Now()
	opts.setDefaults()
	g, err := newGenerator(opts)
	if err != nil {
		return seedResult{}, err
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		return seedResult{}, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx)
	// The writer's lock: no ledger writer can interleave a batch.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, ledgerLockKey); err != nil {
		return seedResult{}, fmt.Errorf("take ledger lock: %w", err)
	}
	var busy bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM events)`).Scan(&busy); err != nil {
		return seedResult{}, fmt.Errorf("check event store: %w", err)
	}
	if busy {
		return seedResult{}, errStoreNotEmpty
	}
	// Secondary indexes are dropped for the load and built again after
	// it, in the same transaction: a sorted build is many times faster than
	// ten million random inserts into the event id and stream indexes. The
	// definitions are read from the catalog, so they are the migrations'.
	rebuild, err := dropSecondaryIndexes(ctx, tx)
	if err != nil {
		return seedResult{}, err
	}
	n, err := tx.CopyFrom(ctx, pgx.Identifier{"events"}, []string{"position", "event_id", "stream_id",
		"stream_version", "event_type", "occurred_at", "body", "prev_hash", "hash"}, g)
	if err != nil {
		return seedResult{}, fmt.Errorf("copy events: %w", err)
	}
	copied := time.Now()
	if _, err := tx.Exec(ctx, `SET LOCAL maintenance_work_mem = '256MB'`); err != nil {
		return seedResult{}, fmt.Errorf("set maintenance_work_mem: %w", err)
	}
	for _, stmt := range rebuild {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return seedResult{}, fmt.Errorf("rebuild index: %s: %w", stmt, err)
		}
	}
	indexed := time.Now()
	rows := g.accountRows()
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"accounts"},
		[]string{"account_id", "kind", "currency", "balance", "version", "last_position"}, pgx.CopyFromRows(rows)); err != nil {
		return seedResult{}, fmt.Errorf("copy accounts: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return seedResult{}, fmt.Errorf("commit: %w", err)
	}
	res := seedResult{Events: n, Accounts: len(rows), Took: time.Since(start), Copy: copied.Sub(start),
		Index: indexed.Sub(copied), From: opts.End.Add(-opts.Span), To: g.now()}
	for c := range opts.Clients {
		res.Clients = append(res.Clients, clientName(c))
	}
	for p := range opts.Providers {
		res.Providers = append(res.Providers, providerName(p))
	}
	for i := 0; i < len(g.players) && len(res.Players) < 200; i += max(len(g.players)/200, 1) {
		p := g.players[i]
		res.Players = append(res.Players, seedPlayerRef{Client: p.client, Player: p.id, Currency: p.cur.Code()})
	}
	return res, nil
}

// dropSecondaryIndexes drops every index and unique constraint of events
// but the primary key (positions arrive in order, so it is cheap to keep),
// and returns the statements that make them again.
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

// ledgerLockKey is eventstore.DefaultLedgerLockKey ("pitbossL"); repeated so
// this file needs nothing unexported from the adapter.
const ledgerLockKey int64 = 0x706974626f73734c

func clientName(i int) string   { return "bench-op-" + strconv.Itoa(i+1) }
func providerName(i int) string { return "bench-prov-" + strconv.Itoa(i+1) }

type genPlayer struct {
	client, id string
	cur        domain.Currency
	wallet     domain.AccountID
	mult       int64 // minor units of one bet step

	session, provider, game string
	spins                   int    // spins left in this session
	round, bet              string // the open spin: its round and bet id
	betAmount               int64
}

// generator decides events one at a time for COPY (pgx.CopyFromSource).
type generator struct {
	opts     seedOptions
	rnd      *rand.Rand
	view     *domain.View
	accounts map[domain.AccountID]int64 // last position that touched it
	players  []*genPlayer
	games    [][]string

	start, step time.Duration
	begin       time.Time
	n           int // events emitted
	ids         int
	prev        []byte
	vals        [9]any
	err         error
}

// currencyWeights: the share of players per currency, in percent.
var currencyWeights = map[string]int{"EUR": 50, "USD": 25, "BRL": 12, "JPY": 8, "BTC": 5}

func newGenerator(o seedOptions) (*generator, error) {
	if o.Events < 0 || o.Clients < 1 || o.Players < 1 || o.Providers < 1 || o.Games < 1 || o.Span <= 0 {
		return nil, fmt.Errorf("seed options %+v: %w", o, domain.ErrInvalidArgument)
	}
	g := &generator{opts: o, rnd: rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15)), view: domain.NewView(),
		accounts: map[domain.AccountID]int64{}, prev: domain.GenesisHash,
		begin: o.End.Add(-o.Span), step: max(o.Span/time.Duration(max(o.Events, 1)), time.Microsecond)}
	var curs []domain.Currency
	var weights []int
	for _, code := range o.Currencies {
		c, err := domain.ParseCurrency(code)
		if err != nil {
			return nil, fmt.Errorf("seed currency %s: %w", code, err)
		}
		curs = append(curs, c)
		weights = append(weights, max(currencyWeights[c.Code()], 5))
	}
	for p := range o.Providers {
		var gs []string
		for i := range o.Games {
			gs = append(gs, "bench-game-"+strconv.Itoa(p+1)+"-"+strconv.Itoa(i+1))
		}
		g.games = append(g.games, gs)
	}
	clientWeights := []int{60, 30, 10}
	for i := range o.Players {
		c := pickWeighted(g.rnd, clientWeights, o.Clients)
		cur := curs[pickWeighted(g.rnd, weights, len(curs))]
		p := &genPlayer{client: clientName(c), id: "player-" + strconv.Itoa(i+1), cur: cur, mult: betStep(cur)}
		p.wallet = domain.PlayerWallet(p.client, p.id, cur)
		g.players = append(g.players, p)
	}
	return g, nil
}

// pickWeighted picks an index below n by weights (missing weights count 1).
func pickWeighted(rnd *rand.Rand, weights []int, n int) int {
	total := 0
	for i := range n {
		total += weightAt(weights, i)
	}
	x := rnd.IntN(total)
	for i := range n {
		if x -= weightAt(weights, i); x < 0 {
			return i
		}
	}
	return n - 1
}

func weightAt(w []int, i int) int {
	if i < len(w) {
		return w[i]
	}
	return 1
}

// betStep is the minor units of the smallest bet step in cur: 0.10 in a
// currency with cents, 10 in one without, 0.00001 BTC.
func betStep(cur domain.Currency) int64 {
	switch e := cur.Exponent(); {
	case e == 0:
		return 10
	case e <= 2:
		return 10
	default:
		m := int64(1)
		for range e - 3 {
			m *= 10
		}
		return m
	}
}

func (g *generator) now() time.Time { return g.begin.Add(time.Duration(g.n) * g.step) }

// Next decides the next event. COPY calls it until it returns false.
func (g *generator) Next() bool {
	if g.n >= g.opts.Events || g.err != nil {
		return false
	}
	for range 20 {
		ch, err := g.decide()
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
	g.err = errors.New("seed: no decision succeeded in 20 tries")
	return false
}

func (g *generator) Values() ([]any, error) { return g.vals[:], nil }

func (g *generator) Err() error { return g.err }

func (g *generator) emit(e domain.Event) error {
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
	if g.n%100_000 == 0 {
		g.compact()
		if g.opts.Progress != nil {
			g.opts.Progress(g.n)
		}
	}
	return nil
}

// compact starts a new view holding the accounts and the records of the
// spins still open, so memory stays flat however many events are made.
func (g *generator) compact() {
	v := domain.NewView()
	for id := range g.accounts {
		v.LoadAccount(id, g.view.Account(id))
	}
	for _, p := range g.players {
		if p.bet == "" {
			continue
		}
		for _, k := range []string{domain.GameTxKey(p.client, p.provider, p.bet), domain.RoundKey(p.client, p.provider, p.round)} {
			if r, ok := g.view.Record(k); ok {
				v.LoadRecord(r)
			}
		}
	}
	g.view = v
}

func (g *generator) env() domain.Env {
	g.ids++
	var b [16]byte
	hi, lo := g.rnd.Uint64(), g.rnd.Uint64()
	for i := range 8 {
		b[i], b[8+i] = byte(hi>>(8*i)), byte(lo>>(8*i))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	rid := "bench-" + strconv.Itoa(g.ids)
	return domain.Env{Now: g.now(), EventID: uuidString(b), Meta: domain.Metadata{RequestID: rid, CorrelationID: rid}}
}

func (g *generator) nextID(prefix string) string { return prefix + "-" + strconv.Itoa(g.ids+1) }

// pick chooses a player, skewed: a few players make much of the traffic.
func (g *generator) pick() *genPlayer {
	u := int64(g.rnd.IntN(1 << 20))
	i := int((((u * u) >> 20) * int64(len(g.players))) >> 20) // len * (u/2^20)^2
	return g.players[min(i, len(g.players)-1)]
}

// decide picks what happens next for a random player.
func (g *generator) decide() (domain.Change, error) {
	p := g.pick()
	ctx := domain.ClientTx{Client: p.client, Player: p.id, Currency: p.cur}
	bal := g.view.Account(p.wallet).Balance
	switch {
	case p.bet != "":
		return g.settle(p)
	case p.session == "":
		if bal < 100*p.mult {
			ctx.ExternalTxID = g.nextID("dep")
			return domain.DecideDeposit(g.view, ctx, g.money(p, int64(200+g.rnd.IntN(5)*200)*p.mult), g.env())
		}
		prov := g.rnd.IntN(g.opts.Providers)
		p.provider, p.game = providerName(prov), g.games[prov][g.rnd.IntN(len(g.games[prov]))]
		p.session, p.spins = g.nextID("sess"), 20+g.rnd.IntN(180)
		ch, err := domain.DecideLaunch(g.view, domain.Launch{Client: p.client, Player: p.id, Provider: p.provider,
			Game: p.game, Session: p.session, ExternalTxID: g.nextID("launch"), Currency: p.cur,
			ExpiresAt: g.now().Add(4 * time.Hour)}, g.env())
		if err != nil {
			p.session = ""
		}
		return ch, err
	}
	r := g.rnd.IntN(1000)
	switch {
	case r < 3 && bal > 50*p.mult:
		ctx.ExternalTxID = g.nextID("wd")
		return domain.DecideWithdrawal(g.view, ctx, g.money(p, bal/2), g.env())
	case r < 4:
		ctx.ExternalTxID, ctx.Reason = g.nextID("adj"), "goodwill"
		return domain.DecideAdjustment(g.view, ctx, g.money(p, int64(1+g.rnd.IntN(10))*p.mult), g.env())
	case bal < 10*p.mult:
		ctx.ExternalTxID = g.nextID("dep")
		return domain.DecideDeposit(g.view, ctx, g.money(p, int64(200+g.rnd.IntN(5)*200)*p.mult), g.env())
	}
	steps := []int64{1, 2, 5, 10, 20, 50, 100}
	amount := steps[g.rnd.IntN(len(steps))] * p.mult
	if amount > bal {
		amount = p.mult
	}
	gt := g.gameTx(p, g.nextID("round"), g.nextID("bet"))
	ch, err := domain.DecideBet(g.view, gt, g.money(p, amount), g.env())
	if err == nil {
		p.round, p.bet, p.betAmount = gt.Round, gt.ExternalTxID, amount
	}
	return ch, err
}

// settle ends the open spin: a win (zero more often than not) or, one
// time in twenty, a rollback of the bet.
func (g *generator) settle(p *genPlayer) (domain.Change, error) {
	var (
		ch  domain.Change
		err error
	)
	if g.rnd.IntN(20) == 0 {
		gt := g.gameTx(p, p.round, g.nextID("rb"))
		gt.RoundClosed = true
		ch, err = domain.DecideRollback(g.view, gt, p.bet, g.env())
	} else {
		gt := g.gameTx(p, p.round, g.nextID("win"))
		gt.RoundClosed = true
		mults := []int64{0, 0, 0, 0, 0, 1, 1, 2, 2, 3, 4, 10, 40}
		ch, err = domain.DecideWin(g.view, gt, g.money(p, p.betAmount*mults[g.rnd.IntN(len(mults))]/2), p.bet, g.env())
	}
	if err != nil {
		return ch, err
	}
	p.bet, p.round = "", ""
	if p.spins--; p.spins <= 0 {
		p.session = ""
	}
	return ch, nil
}

func (g *generator) gameTx(p *genPlayer, round, ext string) domain.GameTx {
	return domain.GameTx{Client: p.client, Player: p.id, Provider: p.provider, Game: p.game, Round: round,
		Session: p.session, ExternalTxID: ext, Currency: p.cur}
}

func (g *generator) money(p *genPlayer, minor int64) domain.Money {
	return domain.FromMinor(minor, p.cur)
}

// accountRows is the final state of every account, for COPY into accounts.
func (g *generator) accountRows() [][]any {
	ids := make([]domain.AccountID, 0, len(g.accounts))
	for id := range g.accounts {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	rows := make([][]any, 0, len(ids))
	for _, id := range ids {
		st := g.view.Account(id)
		rows = append(rows, []any{string(id), id.Kind().String(), id.CurrencyCode(), st.Balance, st.Version, g.accounts[id]})
	}
	return rows
}

func uuidString(b [16]byte) string {
	const hexd = "0123456789abcdef"
	out := make([]byte, 36)
	j := 0
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out[j] = '-'
			j++
		}
		out[j], out[j+1] = hexd[c>>4], hexd[c&0x0f]
		j += 2
	}
	return string(out)
}
