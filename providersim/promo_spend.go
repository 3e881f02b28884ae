package providersim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// Spend is the free bets of one reward a PromoServer granted, played
// through Pitboss's wallet in the provider's protocol.
type Spend struct {
	// Config is the provider as for Run: Protocol (the server's),
	// BaseURL, Provider, its wallet credential (Secret; PrivateKey for
	// caleta), HTTP, Out, Timeout; Player, Game and Currency default to
	// the reward's (Game: our catalog id or the provider's code, as the
	// wallet takes either). The rest is not used.
	Config
	// Session is the game session id the provider was handed at launch:
	// the token of every call.
	Session string
	// Reward is the reward's FreeBetReward.Ref: Caleta's reward_uuid
	// (Pitboss's reward id), TBB's bonus_id.
	Reward string
	// Bets is how many free bets are played; 0: every one left.
	Bets int
	// Wins are each free bet's win, decimal amounts of the currency
	// ("1.50"); one not given is 0.
	Wins []string
}

// SpendFreeBets plays sp's free bets against Pitboss's wallet, each a bet
// and its win in a round of its own, and checks every answer as Run's
// steps do (deviations in the report): a balance read first (the balance
// the rest is judged against), then per free bet
//
//   - caleta: /wallet/bet with is_free true, the reward's campaign_uuid
//     and reward_uuid and its bet value as amount (the player pays
//     nothing), then /wallet/win with the same ids and the win;
//   - tbb: a bet of amount 0 (the Game Events have no free-spin mark:
//     Pitboss takes a zero bet on a game where the player holds an active
//     reward for a free spin of it), then its round's win;
//
// and a balance read last. Each free bet Pitboss accepts is taken off the
// reward's count here. err is ErrConfig when sp cannot be played, ErrAborted
// when a call could not be made.
func (s *PromoServer) SpendFreeBets(ctx context.Context, sp Spend) (*Report, error) {
	if sp.Protocol != s.cfg.Protocol {
		return nil, fmt.Errorf("%w: the spend's protocol %q is not the server's %s", ErrConfig, sp.Protocol, s.cfg.Protocol)
	}
	d, err := newDialect(sp.Config)
	if err != nil {
		return nil, err
	}
	rw, ok := s.Reward(sp.Reward)
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: no reward %q was granted here", ErrConfig, sp.Reward)
	case rw.Canceled:
		return nil, fmt.Errorf("%w: reward %s was cancelled", ErrConfig, rw.Ref)
	case sp.Bets < 0 || sp.Bets > rw.Remaining:
		return nil, fmt.Errorf("%w: %d free bets asked, reward %s has %d left", ErrConfig, sp.Bets, rw.Ref, rw.Remaining)
	case sp.BaseURL == "" || sp.Provider == "" || sp.Session == "":
		return nil, fmt.Errorf("%w: a base URL, a provider and a session are required", ErrConfig)
	}
	n := sp.Bets
	if n == 0 {
		n = rw.Remaining
	}
	code := sp.Currency
	if code == "" {
		code = rw.Currency
	}
	cur, err := domain.ParseCurrency(strings.ToUpper(code))
	if err != nil || cur.Code() != rw.Currency {
		return nil, fmt.Errorf("%w: currency %q is not the reward's %s", ErrConfig, code, rw.Currency)
	}
	wins := make([]int64, n)
	for i, w := range sp.Wins {
		if i >= n {
			break
		}
		m, err := domain.ParseMoney(w, cur)
		if err != nil || m.IsNegative() {
			return nil, fmt.Errorf("%w: win %d %q is not an amount of %s", ErrConfig, i+1, w, cur.Code())
		}
		wins[i] = m.Minor()
	}
	sess := session{ID: sp.Session, Player: firstText(sp.Player, rw.Player), Game: firstText(sp.Game, rw.Game), Currency: cur}
	nonce := make([]byte, 4)
	_, _ = rand.Read(nonce)
	r := &run{cfg: sp.Config, http: sp.HTTP, out: sp.Out, d: d, sess: sess, nonce: "fb" + hex.EncodeToString(nonce),
		timeout: sp.Timeout, report: &Report{Protocol: sp.Protocol, Session: sp.Session}}
	if r.http == nil {
		r.http = &http.Client{}
	}
	if r.out == nil {
		r.out = io.Discard
	}
	if r.timeout == 0 {
		r.timeout = 10 * time.Second
	}
	r.cfg.BaseURL = strings.TrimRight(sp.BaseURL, "/")
	if u, err := url.Parse(r.cfg.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: base URL %q is not an http(s) address", ErrConfig, sp.BaseURL)
	}

	r.step = "free-bets"
	a, err := r.do(ctx, d.build(r, callBalance, tx{}))
	if err != nil {
		return r.report, fmt.Errorf("%w: %s: %w", ErrAborted, r.step, err)
	}
	if a.Status != d.status(accepted) || a.Balance == nil {
		r.deviate("balance: status %q without a balance, want %q and the player's balance", a.Status, d.status(accepted))
		return r.report, fmt.Errorf("%w: %s: the session's balance could not be read", ErrAborted, r.step)
	}
	r.expect = *a.Balance
	r.report.Start = domain.FromMinor(r.expect, cur)
	r.printf("ok     %-16s reward %s: %d free bets of %s %s, balance %s", r.step, rw.Ref, n, r.money(rw.BetValue),
		cur.Code(), r.money(r.expect))
	for i := range n {
		if err := s.spendOne(ctx, r, rw, wins[i]); err != nil {
			r.report.Final = domain.FromMinor(r.expect, cur)
			return r.report, fmt.Errorf("%w: %s: %w", ErrAborted, r.step, err)
		}
	}
	_, _, err = r.call(ctx, callBalance, tx{}, accepted)
	r.report.Final = domain.FromMinor(r.expect, cur)
	if err != nil {
		return r.report, fmt.Errorf("%w: %s: %w", ErrAborted, r.step, err)
	}
	return r.report, nil
}

// spendOne plays one free bet of rw and its win, in a round of its own.
func (s *PromoServer) spendOne(ctx context.Context, r *run, rw FreeBetReward, win int64) error {
	round := r.id("round")
	betKind, winKind := callBet, callWin
	bet := tx{ID: r.id("freespin"), Round: round} // tbb: a bet of 0
	if s.cfg.Protocol == gateway.WalletProtocolCaleta {
		betKind, winKind = callPromoBet, callPromoWin
		bet = tx{ID: r.id("freebet"), Round: round, Amount: rw.BetValue, Campaign: rw.Campaign, Reward: rw.Ref}
	}
	a, _, err := r.call(ctx, betKind, bet, accepted)
	if err != nil {
		return err
	}
	if a.Status != r.d.status(accepted) {
		return nil // refused (a deviation): no free bet taken, no win to send
	}
	if !s.useFreeBet(rw.Ref) {
		r.deviate("%s: accepted, but reward %s had no free bet left", betKind, rw.Ref)
	}
	_, _, err = r.call(ctx, winKind, tx{ID: r.id("freewin"), Ref: bet.ID, Round: round, Amount: win, Closed: true,
		Campaign: bet.Campaign, Reward: bet.Reward}, accepted)
	return err
}

// firstText is a unless it is empty, else b.
func firstText(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
