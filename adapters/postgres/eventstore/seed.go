package eventstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

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

// SeedEvents fills an empty event store with a generated but valid ledger,
// fast, for benchmarks and rebuild tests (see GenerateLedger): deposits
// and transfers into wallets, rounds of bets and wins, refunds, win
// reversals, promo bets, launches, withdrawals and adjustments.
func SeedEvents(ctx context.Context, pool *pgxpool.Pool, opts SeedOptions) (SeedResult, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return SeedResult{}, err
	}
	return GenerateLedger(ctx, pool, o.generateOptions(), func(g *Generator) (Traffic, error) { return newSeedTraffic(g, o) })
}

func (o SeedOptions) generateOptions() GenerateOptions {
	return GenerateOptions{Events: o.Events, Start: o.Start, Span: o.Span, Seed: o.Seed, RequestIDPrefix: "seed",
		Tries: 100, CompactEvery: 50_000}
}

type seedPlayer struct {
	client, id, provider, game string
	round                      string
	bets                       []string // the open round's bets still standing
	lastWin, lastWinRound      string
	reverse                    bool // reverse lastWin next
}

// seedTraffic is SeedEvents' mix: every client's float first, then players
// picked at random, each with one provider and game, playing rounds.
type seedTraffic struct {
	g       *Generator
	opts    SeedOptions
	cur     domain.Currency
	players []*seedPlayer
}

// withDefaults fills the zero fields of o and checks the rest.
func (o SeedOptions) withDefaults() (SeedOptions, error) {
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
		return o, fmt.Errorf("seed options %+v: %w", o, domain.ErrInvalidArgument)
	}
	return o, nil
}

func newSeedTraffic(g *Generator, o SeedOptions) (*seedTraffic, error) {
	cur, err := domain.ParseCurrency(o.Currency)
	if err != nil {
		return nil, err
	}
	s := &seedTraffic{g: g, opts: o, cur: cur}
	rnd := g.Rand()
	for c := range o.Clients {
		client := "client-" + strconv.Itoa(c+1)
		for p := range o.PlayersPerClient {
			prov := rnd.IntN(o.Providers)
			s.players = append(s.players, &seedPlayer{client: client, id: "player-" + strconv.Itoa(p+1),
				provider: "provider-" + strconv.Itoa(prov+1),
				game:     "game-" + strconv.Itoa(prov+1) + "-" + strconv.Itoa(rnd.IntN(o.GamesPerProvider)+1)})
		}
	}
	return s, nil
}

func (s *seedTraffic) money(minor int64) domain.Money { return domain.FromMinor(minor, s.cur) }

// Open keeps each player's open round, its bets and the last win.
func (s *seedTraffic) Open(keep func(key string)) {
	for _, p := range s.players {
		keep(domain.RoundKey(p.client, p.provider, p.round))
		for _, b := range p.bets {
			keep(domain.GameTxKey(p.client, p.provider, b))
		}
		if p.lastWin != "" {
			keep(domain.GameTxKey(p.client, p.provider, p.lastWin))
		}
	}
}

// Decide picks what happens next: setup first (client floats, player
// wallets), then play.
func (s *seedTraffic) Decide(g *Generator) (domain.Change, error) {
	view, rnd := g.View(), g.Rand()
	if g.Emitted() < s.opts.Clients {
		c := domain.ClientTx{Client: "client-" + strconv.Itoa(g.Emitted()+1), ExternalTxID: "float-1", Currency: s.cur}
		return domain.DecideDeposit(view, c, s.money(1_000_000_000_00), g.Env())
	}
	p := s.players[rnd.IntN(len(s.players))]
	wallet := domain.PlayerWallet(p.client, p.id, s.cur)
	ctx := domain.ClientTx{Client: p.client, Player: p.id, Currency: s.cur}
	if view.Account(wallet).Balance < 100_00 {
		ctx.ExternalTxID = g.NextID("topup")
		return domain.DecideTransfer(view, ctx, s.money(1_000_00), domain.ToPlayer, g.Env())
	}
	gt := domain.GameTx{Client: p.client, Player: p.id, Provider: p.provider, Game: p.game, Currency: s.cur,
		Session: "session-" + p.client + "-" + p.id}
	roll := rnd.IntN(1000)
	switch {
	case roll < 10:
		ctx.ExternalTxID = g.NextID("launch")
		return domain.DecideLaunch(view, domain.Launch{Client: p.client, Player: p.id, Provider: p.provider,
			Game: p.game, Session: gt.Session, ExternalTxID: ctx.ExternalTxID, Currency: s.cur,
			ExpiresAt: g.Now().Add(4 * time.Hour)}, g.Env())
	case roll < 15:
		ctx.ExternalTxID = g.NextID("withdrawal")
		return domain.DecideWithdrawal(view, ctx, s.money(int64(rnd.IntN(50_00)+1)), g.Env())
	case roll < 20:
		ctx.ExternalTxID, ctx.Reason = g.NextID("adjustment"), "goodwill"
		return domain.DecideAdjustment(view, ctx, s.money(int64(rnd.IntN(10_00)+1)), g.Env())
	case roll < 25:
		ctx.ExternalTxID = g.NextID("cashout")
		return domain.DecideTransfer(view, ctx, s.money(int64(rnd.IntN(20_00)+1)), domain.FromPlayer, g.Env())
	case roll < 30:
		ctx.ExternalTxID = g.NextID("deposit")
		return domain.DecideDeposit(view, ctx, s.money(int64(rnd.IntN(100_00)+1)), g.Env())
	}
	if p.reverse {
		gt.Round, gt.ExternalTxID = p.lastWinRound, g.NextID("reversal")
		p.reverse = false
		return domain.DecideRollback(view, gt, p.lastWin, g.Env())
	}
	if p.round == "" {
		gt.Round = g.NextID("round")
		return s.bet(p, gt, g.NextID("bet"))
	}
	gt.Round = p.round
	switch {
	case roll < 80 && len(p.bets) > 0:
		// refund the last bet
		ref := p.bets[len(p.bets)-1]
		gt.ExternalTxID = g.NextID("rollback")
		ch, err := domain.DecideRollback(view, gt, ref, g.Env())
		if err == nil {
			p.bets = p.bets[:len(p.bets)-1]
			if len(p.bets) == 0 {
				p.round = ""
			}
		}
		return ch, err
	case roll < 180:
		return s.bet(p, gt, g.NextID("bet"))
	default:
		amount := int64(0)
		if rnd.IntN(3) > 0 {
			amount = int64(rnd.IntN(40_00))
		}
		gt.ExternalTxID, gt.RoundClosed = g.NextID("win"), true
		gt.Promo = rnd.IntN(20) == 0
		seedKinds(&gt, amount, s.money)
		ch, err := domain.DecideWin(view, gt, s.money(amount), "", g.Env())
		if err == nil {
			p.round, p.bets, p.lastWin, p.lastWinRound = "", nil, gt.ExternalTxID, gt.Round
			// Now and then the provider reverses the win (next call).
			p.reverse = amount > 0 && rnd.IntN(50) == 0
		}
		return ch, err
	}
}

func (s *seedTraffic) bet(p *seedPlayer, gt domain.GameTx, id string) (domain.Change, error) {
	rnd := s.g.Rand()
	gt.ExternalTxID = id
	gt.Promo = rnd.IntN(20) == 0
	amount := int64(rnd.IntN(20_00) + 10)
	if gt.Promo && rnd.IntN(2) == 0 {
		amount = 0 // a free spin
	}
	seedKinds(&gt, 0, s.money)
	ch, err := domain.DecideBet(s.g.View(), gt, s.money(amount), s.g.Env())
	if err == nil {
		p.round = gt.Round
		p.bets = append(p.bets, id)
	}
	return ch, err
}

// seedKinds gives a promo call free-bet ids, and a win (amount > 0) now and
// then a jackpot part: two thirds of every win whose amount is a multiple
// of 7 minor units. Derived from what was drawn, not drawn itself, so the
// rest of the traffic stays what each seed made before.
func seedKinds(gt *domain.GameTx, winAmount int64, money func(int64) domain.Money) {
	if gt.Promo {
		gt.Campaign, gt.Reward = "camp-"+gt.Game, "reward-"+gt.Player
	}
	if winAmount > 0 && winAmount%7 == 0 {
		gt.Jackpot = money(winAmount - winAmount/3)
	}
}
