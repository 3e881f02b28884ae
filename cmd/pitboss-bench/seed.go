package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/domain"
)

// The read side's data set: a generated ledger written straight into the
// event store by eventstore.GenerateLedger (COPY, with the secondary
// indexes built after it), fast enough for ten million events; this file
// is its traffic.
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
	opts.setDefaults()
	var t *benchTraffic
	gen, err := eventstore.GenerateLedger(ctx, pool, eventstore.GenerateOptions{Events: opts.Events,
		Start: opts.End.Add(-opts.Span), Span: opts.Span, Seed: opts.Seed, RequestIDPrefix: "bench", Correlate: true,
		Tries: 20, CompactEvery: 100_000, Progress: opts.Progress, RebuildIndexes: true},
		func(g *eventstore.Generator) (eventstore.Traffic, error) {
			var err error
			t, err = newBenchTraffic(g, opts)
			return t, err
		})
	if err != nil {
		return seedResult{}, err
	}
	res := seedResult{Events: gen.Events, Accounts: gen.Accounts, Took: gen.Took, Copy: gen.Copy, Index: gen.Index,
		From: opts.End.Add(-opts.Span), To: t.g.Now()}
	for c := range opts.Clients {
		res.Clients = append(res.Clients, clientName(c))
	}
	for p := range opts.Providers {
		res.Providers = append(res.Providers, providerName(p))
	}
	for i := 0; i < len(t.players) && len(res.Players) < 200; i += max(len(t.players)/200, 1) {
		p := t.players[i]
		res.Players = append(res.Players, seedPlayerRef{Client: p.client, Player: p.id, Currency: p.cur.Code()})
	}
	return res, nil
}

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

// benchTraffic is the benchmark's mix (see the top of this file).
type benchTraffic struct {
	g       *eventstore.Generator
	opts    seedOptions
	players []*genPlayer
	games   [][]string
}

// currencyWeights: the share of players per currency, in percent.
var currencyWeights = map[string]int{"EUR": 50, "USD": 25, "BRL": 12, "JPY": 8, "BTC": 5}

func newBenchTraffic(g *eventstore.Generator, o seedOptions) (*benchTraffic, error) {
	if o.Events < 0 || o.Clients < 1 || o.Players < 1 || o.Providers < 1 || o.Games < 1 || o.Span <= 0 {
		return nil, fmt.Errorf("seed options %+v: %w", o, domain.ErrInvalidArgument)
	}
	t := &benchTraffic{g: g, opts: o}
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
		t.games = append(t.games, gs)
	}
	clientWeights := []int{60, 30, 10}
	for i := range o.Players {
		c := pickWeighted(g.Rand(), clientWeights, o.Clients)
		cur := curs[pickWeighted(g.Rand(), weights, len(curs))]
		p := &genPlayer{client: clientName(c), id: "player-" + strconv.Itoa(i+1), cur: cur, mult: betStep(cur)}
		p.wallet = domain.PlayerWallet(p.client, p.id, cur)
		t.players = append(t.players, p)
	}
	return t, nil
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

// Open keeps the records of the spins still open.
func (t *benchTraffic) Open(keep func(key string)) {
	for _, p := range t.players {
		if p.bet == "" {
			continue
		}
		keep(domain.GameTxKey(p.client, p.provider, p.bet))
		keep(domain.RoundKey(p.client, p.provider, p.round))
	}
}

// pick chooses a player, skewed: a few players make much of the traffic.
func (t *benchTraffic) pick() *genPlayer {
	u := int64(t.g.Rand().IntN(1 << 20))
	i := int((((u * u) >> 20) * int64(len(t.players))) >> 20) // len * (u/2^20)^2
	return t.players[min(i, len(t.players)-1)]
}

// Decide picks what happens next for a random player.
func (t *benchTraffic) Decide(g *eventstore.Generator) (domain.Change, error) {
	view, rnd := g.View(), g.Rand()
	p := t.pick()
	ctx := domain.ClientTx{Client: p.client, Player: p.id, Currency: p.cur}
	bal := view.Account(p.wallet).Balance
	switch {
	case p.bet != "":
		return t.settle(p)
	case p.session == "":
		if bal < 100*p.mult {
			ctx.ExternalTxID = g.NextID("dep")
			return domain.DecideDeposit(view, ctx, money(p, int64(200+rnd.IntN(5)*200)*p.mult), g.Env())
		}
		prov := rnd.IntN(t.opts.Providers)
		p.provider, p.game = providerName(prov), t.games[prov][rnd.IntN(len(t.games[prov]))]
		p.session, p.spins = g.NextID("sess"), 20+rnd.IntN(180)
		ch, err := domain.DecideLaunch(view, domain.Launch{Client: p.client, Player: p.id, Provider: p.provider,
			Game: p.game, Session: p.session, ExternalTxID: g.NextID("launch"), Currency: p.cur,
			ExpiresAt: g.Now().Add(4 * time.Hour)}, g.Env())
		if err != nil {
			p.session = ""
		}
		return ch, err
	}
	r := rnd.IntN(1000)
	switch {
	case r < 3 && bal > 50*p.mult:
		ctx.ExternalTxID = g.NextID("wd")
		return domain.DecideWithdrawal(view, ctx, money(p, bal/2), g.Env())
	case r < 4:
		ctx.ExternalTxID, ctx.Reason = g.NextID("adj"), "goodwill"
		return domain.DecideAdjustment(view, ctx, money(p, int64(1+rnd.IntN(10))*p.mult), g.Env())
	case bal < 10*p.mult:
		ctx.ExternalTxID = g.NextID("dep")
		return domain.DecideDeposit(view, ctx, money(p, int64(200+rnd.IntN(5)*200)*p.mult), g.Env())
	}
	steps := []int64{1, 2, 5, 10, 20, 50, 100}
	amount := steps[rnd.IntN(len(steps))] * p.mult
	if amount > bal {
		amount = p.mult
	}
	gt := gameTx(p, g.NextID("round"), g.NextID("bet"))
	ch, err := domain.DecideBet(view, gt, money(p, amount), g.Env())
	if err == nil {
		p.round, p.bet, p.betAmount = gt.Round, gt.ExternalTxID, amount
	}
	return ch, err
}

// settle ends the open spin: a win (zero more often than not) or, one
// time in twenty, a rollback of the bet.
func (t *benchTraffic) settle(p *genPlayer) (domain.Change, error) {
	g, rnd := t.g, t.g.Rand()
	var (
		ch  domain.Change
		err error
	)
	if rnd.IntN(20) == 0 {
		gt := gameTx(p, p.round, g.NextID("rb"))
		gt.RoundClosed = true
		ch, err = domain.DecideRollback(g.View(), gt, p.bet, g.Env())
	} else {
		gt := gameTx(p, p.round, g.NextID("win"))
		gt.RoundClosed = true
		mults := []int64{0, 0, 0, 0, 0, 1, 1, 2, 2, 3, 4, 10, 40}
		ch, err = domain.DecideWin(g.View(), gt, money(p, p.betAmount*mults[rnd.IntN(len(mults))]/2), p.bet, g.Env())
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

func gameTx(p *genPlayer, round, ext string) domain.GameTx {
	return domain.GameTx{Client: p.client, Player: p.id, Provider: p.provider, Game: p.game, Round: round,
		Session: p.session, ExternalTxID: ext, Currency: p.cur}
}

func money(p *genPlayer, minor int64) domain.Money {
	return domain.FromMinor(minor, p.cur)
}
