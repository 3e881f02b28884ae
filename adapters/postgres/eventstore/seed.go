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

// SeedOptions shapes a generated ledger. Zero fields take their defaults.
type SeedOptions struct {
	Events           int // default 10,000
	Clients          int // default 3
	PlayersPerClient int // default 200
	Providers        int // default 3
	GamesPerProvider int // default 4
	Currency         string
	Start            time.Time     // default 2025-01-01T00:00:00Z
	Span             time.Duration // time the events cover, default 30 days
	Seed             uint64        // same seed, same ledger
}

// SeedResult tells what SeedEvents wrote.
type SeedResult struct {
	Events int64
	Head   int64
	Took   time.Duration
}

// ErrLedgerNotEmpty is returned by SeedEvents on a database with events.
var ErrLedgerNotEmpty = errors.New("the event store is not empty")

// SeedEvents fills an empty event store with a generated but valid ledger,
// fast, for benchmarks and rebuild tests: deposits and transfers into
// wallets, rounds of bets and wins, refunds, win reversals, promo bets,
// launches, withdrawals and adjustments, all decided by the domain's
// decisions on a View (so every posting balances and no wallet goes below
// zero), with real canonical bodies and a correct hash chain, written by
// COPY. The accounts table gets the final state. Idempotency records
// (tx_records) are not written: the store is for reading, not for further
// commands on the same ids.
func SeedEvents(ctx context.Context, pool *pgxpool.Pool, opts SeedOptions) (SeedResult, error) {
	start := time.Now()
	g, err := newSeeder(opts)
	if err != nil {
		return SeedResult{}, err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return SeedResult{}, fmt.Errorf("acquire connection: %w", err)
	}
	defer conn.Release()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return SeedResult{}, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, DefaultLedgerLockKey); err != nil {
		return SeedResult{}, fmt.Errorf("take ledger lock: %w", err)
	}
	var any bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM events)`).Scan(&any); err != nil {
		return SeedResult{}, fmt.Errorf("check event store: %w", err)
	}
	if any {
		return SeedResult{}, ErrLedgerNotEmpty
	}
	n, err := tx.CopyFrom(ctx, pgx.Identifier{"events"}, eventColumns, g)
	if err != nil {
		return SeedResult{}, fmt.Errorf("copy events: %w", err)
	}
	ids, kinds, curs, bals, vers, last := g.accountColumns()
	if _, err := tx.Exec(ctx, sqlUpsertAccounts, ids, kinds, curs, bals, vers, last); err != nil {
		return SeedResult{}, fmt.Errorf("save accounts: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return SeedResult{}, fmt.Errorf("commit: %w", err)
	}
	return SeedResult{Events: n, Head: g.pos, Took: time.Since(start)}, nil
}

type seedPlayer struct {
	client, id, provider, game string
	round                      string
	bets                       []string // the open round's bets still standing
	lastWin, lastWinRound      string
	reverse                    bool // reverse lastWin next
}

// seeder generates events one at a time for COPY.
type seeder struct {
	opts     SeedOptions
	cur      domain.Currency
	rnd      *rand.Rand
	view     *domain.View
	accounts map[domain.AccountID]int64 // last position
	players  []*seedPlayer
	pending  []domain.Event // setup events still to emit
	pos      int64
	prev     []byte
	step     time.Duration
	n        int // events emitted
	ids      int
	vals     [9]any
	err      error
}

func newSeeder(o SeedOptions) (*seeder, error) {
	if o.Events == 0 {
		o.Events = 10_000
	}
	if o.Clients == 0 {
		o.Clients = 3
	}
	if o.PlayersPerClient == 0 {
		o.PlayersPerClient = 200
	}
	if o.Providers == 0 {
		o.Providers = 3
	}
	if o.GamesPerProvider == 0 {
		o.GamesPerProvider = 4
	}
	if o.Currency == "" {
		o.Currency = "EUR"
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if o.Span == 0 {
		o.Span = 30 * 24 * time.Hour
	}
	if o.Events < 0 || o.Clients < 1 || o.PlayersPerClient < 1 || o.Providers < 1 || o.GamesPerProvider < 1 {
		return nil, fmt.Errorf("seed options %+v: %w", o, domain.ErrInvalidArgument)
	}
	cur, err := domain.ParseCurrency(o.Currency)
	if err != nil {
		return nil, err
	}
	s := &seeder{opts: o, cur: cur, rnd: rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15)),
		view: domain.NewView(), accounts: map[domain.AccountID]int64{}, prev: domain.GenesisHash,
		step: max(o.Span/time.Duration(max(o.Events, 1)), time.Microsecond)}
	for c := range o.Clients {
		client := "client-" + strconv.Itoa(c+1)
		for p := range o.PlayersPerClient {
			prov := s.rnd.IntN(o.Providers)
			s.players = append(s.players, &seedPlayer{client: client, id: "player-" + strconv.Itoa(p+1),
				provider: "provider-" + strconv.Itoa(prov+1),
				game:     "game-" + strconv.Itoa(prov+1) + "-" + strconv.Itoa(s.rnd.IntN(o.GamesPerProvider)+1)})
		}
	}
	return s, nil
}

func (s *seeder) now() time.Time { return s.opts.Start.Add(time.Duration(s.n) * s.step) }

func (s *seeder) env() domain.Env {
	s.ids++
	var b [16]byte
	hi, lo := s.rnd.Uint64(), s.rnd.Uint64()
	for i := range 8 {
		b[i], b[8+i] = byte(hi>>(8*i)), byte(lo>>(8*i))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return domain.Env{Now: s.now(), EventID: postgres.UUIDText(b), Meta: domain.Metadata{RequestID: "seed-" + strconv.Itoa(s.ids)}}
}

func (s *seeder) money(minor int64) domain.Money { return domain.FromMinor(minor, s.cur) }

// Next decides the next event. COPY calls it until it returns false.
func (s *seeder) Next() bool {
	if s.n >= s.opts.Events || s.err != nil {
		return false
	}
	for range 100 {
		ch, err := s.decide()
		if err != nil {
			continue // a refused decision (funds): pick another
		}
		e, err := s.view.Apply(ch)
		if err != nil {
			continue
		}
		if err := s.emit(e); err != nil {
			s.err = err
			return false
		}
		return true
	}
	s.err = errors.New("seed: no decision succeeded in 100 tries")
	return false
}

func (s *seeder) emit(e domain.Event) error {
	s.pos++
	s.n++
	e.Position = s.pos
	body, err := domain.EncodeBody(e)
	if err != nil {
		return err
	}
	hash := domain.ChainHash(s.prev, body)
	var id pgtype.UUID
	if err := id.Scan(e.ID); err != nil {
		return err
	}
	s.vals = [9]any{e.Position, id, string(e.StreamID), e.Version, string(e.Type), e.OccurredAt, body, s.prev, hash}
	s.prev = hash
	s.accounts[e.StreamID] = e.Position
	for _, p := range e.Data.Postings {
		s.accounts[p.Account] = e.Position
	}
	// Keep the view small: after each round it only needs the accounts.
	if s.n%50_000 == 0 {
		s.compact()
	}
	return nil
}

// compact starts a new view with the accounts and the records of rounds
// still open.
func (s *seeder) compact() {
	v := domain.NewView()
	for id := range s.accounts {
		v.LoadAccount(id, s.view.Account(id))
	}
	for _, p := range s.players {
		keys := []string{domain.RoundKey(p.client, p.provider, p.round)}
		for _, b := range p.bets {
			keys = append(keys, domain.GameTxKey(p.client, p.provider, b))
		}
		if p.lastWin != "" {
			keys = append(keys, domain.GameTxKey(p.client, p.provider, p.lastWin))
		}
		for _, k := range keys {
			if r, ok := s.view.Record(k); ok {
				v.LoadRecord(r)
			}
		}
	}
	s.view = v
}

func (s *seeder) Values() ([]any, error) { return s.vals[:], nil }

func (s *seeder) Err() error { return s.err }

// decide picks what happens next: setup first (client floats, player
// wallets), then play.
func (s *seeder) decide() (domain.Change, error) {
	if s.n < s.opts.Clients {
		c := domain.ClientTx{Client: "client-" + strconv.Itoa(s.n+1), ExternalTxID: "float-1", Currency: s.cur}
		return domain.DecideDeposit(s.view, c, s.money(1_000_000_000_00), s.env())
	}
	p := s.players[s.rnd.IntN(len(s.players))]
	wallet := domain.PlayerWallet(p.client, p.id, s.cur)
	ext := func(kind string) string { return kind + "-" + strconv.Itoa(s.ids+1) }
	ctx := domain.ClientTx{Client: p.client, Player: p.id, Currency: s.cur}
	if s.view.Account(wallet).Balance < 100_00 {
		ctx.ExternalTxID = ext("topup")
		return domain.DecideTransfer(s.view, ctx, s.money(1_000_00), domain.ToPlayer, s.env())
	}
	g := domain.GameTx{Client: p.client, Player: p.id, Provider: p.provider, Game: p.game, Currency: s.cur,
		Session: "session-" + p.client + "-" + p.id}
	roll := s.rnd.IntN(1000)
	switch {
	case roll < 10:
		ctx.ExternalTxID = ext("launch")
		return domain.DecideLaunch(s.view, domain.Launch{Client: p.client, Player: p.id, Provider: p.provider,
			Game: p.game, Session: g.Session, ExternalTxID: ctx.ExternalTxID, Currency: s.cur,
			ExpiresAt: s.now().Add(4 * time.Hour)}, s.env())
	case roll < 15:
		ctx.ExternalTxID = ext("withdrawal")
		return domain.DecideWithdrawal(s.view, ctx, s.money(int64(s.rnd.IntN(50_00)+1)), s.env())
	case roll < 20:
		ctx.ExternalTxID, ctx.Reason = ext("adjustment"), "goodwill"
		return domain.DecideAdjustment(s.view, ctx, s.money(int64(s.rnd.IntN(10_00)+1)), s.env())
	case roll < 25:
		ctx.ExternalTxID = ext("cashout")
		return domain.DecideTransfer(s.view, ctx, s.money(int64(s.rnd.IntN(20_00)+1)), domain.FromPlayer, s.env())
	case roll < 30:
		ctx.ExternalTxID = ext("deposit")
		return domain.DecideDeposit(s.view, ctx, s.money(int64(s.rnd.IntN(100_00)+1)), s.env())
	}
	if p.reverse {
		g.Round, g.ExternalTxID = p.lastWinRound, ext("reversal")
		p.reverse = false
		return domain.DecideRollback(s.view, g, p.lastWin, s.env())
	}
	if p.round == "" {
		g.Round = "round-" + strconv.Itoa(s.ids+1)
		return s.bet(p, g, ext("bet"))
	}
	g.Round = p.round
	switch {
	case roll < 80 && len(p.bets) > 0:
		// refund the last bet
		ref := p.bets[len(p.bets)-1]
		g.ExternalTxID = ext("rollback")
		ch, err := domain.DecideRollback(s.view, g, ref, s.env())
		if err == nil {
			p.bets = p.bets[:len(p.bets)-1]
			if len(p.bets) == 0 {
				p.round = ""
			}
		}
		return ch, err
	case roll < 180:
		return s.bet(p, g, ext("bet"))
	default:
		amount := int64(0)
		if s.rnd.IntN(3) > 0 {
			amount = int64(s.rnd.IntN(40_00))
		}
		g.ExternalTxID, g.RoundClosed = ext("win"), true
		g.Promo = s.rnd.IntN(20) == 0
		ch, err := domain.DecideWin(s.view, g, s.money(amount), "", s.env())
		if err == nil {
			p.round, p.bets, p.lastWin, p.lastWinRound = "", nil, g.ExternalTxID, g.Round
			// Now and then the provider reverses the win (next call).
			p.reverse = amount > 0 && s.rnd.IntN(50) == 0
		}
		return ch, err
	}
}

func (s *seeder) bet(p *seedPlayer, g domain.GameTx, id string) (domain.Change, error) {
	g.ExternalTxID = id
	g.Promo = s.rnd.IntN(20) == 0
	amount := int64(s.rnd.IntN(20_00) + 10)
	if g.Promo && s.rnd.IntN(2) == 0 {
		amount = 0 // a free spin
	}
	ch, err := domain.DecideBet(s.view, g, s.money(amount), s.env())
	if err == nil {
		p.round = g.Round
		p.bets = append(p.bets, id)
	}
	return ch, err
}

// accountColumns is the final state of every account for the accounts
// table.
func (s *seeder) accountColumns() (ids, kinds, curs []string, bals, vers, last []int64) {
	for id, pos := range s.accounts {
		st := s.view.Account(id)
		ids = append(ids, string(id))
		kinds = append(kinds, id.Kind().String())
		curs = append(curs, id.CurrencyCode())
		bals = append(bals, st.Balance)
		vers = append(vers, st.Version)
		last = append(last, pos)
	}
	return
}
