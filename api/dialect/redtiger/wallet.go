// Package redtiger is the Red Tiger wallet protocol
// (docs/protocols/redtiger.md) for providers on the redtiger wallet
// protocol, a dialect of the wallet core (package wallet): it
// authenticates the provider's API key, decodes the RGI bodies and their
// decimal amounts, and answers the core's verdict in the protocol's
// envelope and numeric codes (codes.go).
package redtiger

import (
	"context"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/wallet"
)

// HeaderAuthorization carries the provider's API key, bare or after
// "Basic " (both spellings are in use).
const HeaderAuthorization = "Authorization"

// Handlers answer the protocol's calls.
type Handlers struct{ deps wire.DialectDeps }

// New returns the protocol's handlers over deps: the core (with the
// ledger's transaction records, so a refund is only ever a stake's; a
// session id is the protocol's token) and the logger of the faults answered
// CodeInternal.
func New(deps wire.DialectDeps) *Handlers { return &Handlers{deps: deps.WithDefaults()} }

// call is what every call shares once authenticated and decoded.
type call struct {
	wallet.Session
	token string
}

// refused answers err with its code.
func (h *Handlers) refused(c echo.Context, err error) error {
	code, msg, known := classify(err)
	if !known {
		wire.LogFault(c, h.deps.Logger, "red tiger wallet call failed", err)
	}
	return c.JSON(httpStatus(code), failure{Success: false,
		Error: failureError{Message: msg, Code: code, RequestID: wire.RequestID(c)}})
}

// answer runs fn and answers its result, or its error as a refusal.
func (h *Handlers) answer(c echo.Context, fn func() (any, error)) error {
	res, err := fn()
	if err != nil {
		return h.refused(c, err)
	}
	return c.JSON(http.StatusOK, res)
}

// decode reads the raw body, checks the provider the path names (enabled,
// on the redtiger protocol) and its API key, then strictly decodes the
// body into v (wire.DecodeJSON: a field this dialect does not know is
// refused, never ignored).
func (h *Handlers) decode(c echo.Context, v any) (gateway.Provider, error) {
	raw, err := wire.ReadBody(c)
	if err != nil {
		return gateway.Provider{}, err
	}
	if !h.deps.Core.HasRecords() {
		return gateway.Provider{}, wallet.ErrNoStores
	}
	prov, err := h.deps.Core.Caller(c.Request().Context(), c.Param("provider"), gateway.WalletProtocolRedTiger)
	if err != nil {
		return prov, err
	}
	key := strings.TrimPrefix(c.Request().Header.Get(HeaderAuthorization), "Basic ")
	if !gateway.SameSecret(key, prov.Secret) {
		return prov, wallet.Refuse(wallet.Unauthenticated, "wrong API key")
	}
	// As on every other JSON body: a proxy or WAF that trusts the declared
	// type must see the body we read.
	if err := wire.CheckJSONContentType(c); err != nil {
		return prov, err
	}
	return prov, wire.DecodeJSON(raw, v)
}

// session resolves the token, our game session id, which must be a
// session of prov; userId and currency, when given, must be its player's
// and its own.
func (h *Handlers) session(ctx context.Context, prov gateway.Provider, b base) (call, error) {
	if strings.TrimSpace(b.Token) == "" {
		return call{}, wallet.Refuse(wallet.InvalidRequest, "token is required")
	}
	s, err := h.deps.Core.Session(ctx, prov, b.Token, b.UserID)
	if err != nil {
		return call{}, err
	}
	if b.Currency != "" {
		if err := s.SameCurrency(b.Currency); err != nil {
			return call{}, err
		}
	}
	return call{Session: s, token: b.Token}, nil
}

// transaction resolves a stake's, payout's or refund's session, checks
// that it names its transaction, and reads the amounts it carries beside
// the one booked (a malformed one is refused, never ignored).
func (h *Handlers) transaction(ctx context.Context, prov gateway.Provider, b base, id string,
	read map[string]domain.AmountText) (call, error) {
	cl, err := h.session(ctx, prov, b)
	if err != nil {
		return call{}, err
	}
	if strings.TrimSpace(id) == "" {
		return call{}, wallet.Refuse(wallet.InvalidRequest, "transaction.id is required")
	}
	for f, v := range read {
		if _, err := amount(f, v, cl.Cur); err != nil {
			return call{}, err
		}
	}
	return cl, nil
}

// tx is a call as the core books it, under the game key names (its
// provider code or our id; the session's game when left out).
func (h *Handlers) tx(ctx context.Context, cl call, key, txID string, r round, promo bool) (wallet.Tx, error) {
	g, err := h.deps.Core.Game(ctx, cl.Session, key)
	return wallet.Tx{ID: txID, Game: g, Round: r.ID, RoundClosed: r.Ends, Promo: promo}, err
}

// Auth answers POST .../auth: the token to use (the one given: a session
// id serves every call), the player and the balance.
func (h *Handlers) Auth(c echo.Context) error {
	return h.answer(c, func() (any, error) {
		var b authCall
		prov, err := h.decode(c, &b)
		if err != nil {
			return nil, err
		}
		ctx := c.Request().Context()
		cl, err := h.session(ctx, prov, b.base)
		if err != nil {
			return nil, err
		}
		bal, err := h.deps.Core.Balance(ctx, cl.Session)
		if err != nil {
			return nil, err
		}
		return success{Success: true, Result: authResult{Token: cl.token, Currency: cl.Cur.Code(),
			UserID: cl.PlayerID, Casino: b.Casino, Balance: cash(bal)}}, nil
	})
}

// split is the one amount a stake or payout books, and whether it is
// promotion money: the player's (cash) or the promotion's, never both in
// one call (one ledger transaction has one kind).
func split(cashField, promoField string, cashText, promoText domain.AmountText, cur domain.Currency) (domain.Money, bool, error) {
	c, err := amount(cashField, cashText, cur)
	if err != nil {
		return domain.Money{}, false, err
	}
	p, err := amount(promoField, promoText, cur)
	if err != nil {
		return domain.Money{}, false, err
	}
	switch {
	case c.IsPositive() && p.IsPositive():
		return domain.Money{}, false, wallet.Refuse(wallet.Unsupported,
			cashField+" and "+promoField+" in one call are not supported: the ledger books one kind per transaction")
	case p.IsPositive():
		return p, true, nil
	}
	return c, false, nil
}

// jackpotPart is the part of a payout a jackpot paid: details.jackpot,
// or the sum of sources.jackpot's pots when only they say it. When both
// are given they must agree; the part must be within the payout paid
// (docs/protocols/redtiger.md, Jackpots). It is booked as jackpot money,
// apart from game and promo wins.
func jackpotPart(tx payoutTx, paid domain.Money) (domain.Money, error) {
	cur := paid.Currency()
	detail, err := amount("transaction.details.jackpot", tx.Details.Jackpot, cur)
	if err != nil {
		return domain.Money{}, err
	}
	pots := domain.Zero(cur)
	for pot, v := range tx.Sources.Jackpot {
		m, err := amount("transaction.sources.jackpot."+pot, v, cur)
		if err != nil {
			return domain.Money{}, err
		}
		if pots, err = pots.Add(m); err != nil {
			return domain.Money{}, wallet.Refuse(wallet.InvalidAmount, "transaction.sources.jackpot: "+err.Error())
		}
	}
	part := detail
	switch {
	case detail.IsZero():
		part = pots
	case !pots.IsZero() && pots.Cmp(detail) != 0:
		return domain.Money{}, wallet.Refuse(wallet.InvalidAmount, "transaction.sources.jackpot adds up to "+pots.String()+
			", transaction.details.jackpot says "+detail.String())
	}
	if part.Cmp(paid) > 0 {
		return domain.Money{}, wallet.Refuse(wallet.InvalidAmount, "the jackpot part "+part.String()+" is more than the payout "+paid.String())
	}
	return part, nil
}

// Stake answers POST .../stake: the player's stake debited at once, while
// the session takes bets. A stake paid by a promotion (stakePromo, free
// rounds) is booked as a promo bet of zero: no money of the player's moves.
func (h *Handlers) Stake(c echo.Context) error {
	return h.answer(c, func() (any, error) { return h.stake(c, false) })
}

// PromoBuyin answers POST .../promo/buyin: the player's buy-in into a
// promotion, debited at once and booked as a promo bet.
func (h *Handlers) PromoBuyin(c echo.Context) error {
	return h.answer(c, func() (any, error) { return h.stake(c, true) })
}

func (h *Handlers) stake(c echo.Context, buyin bool) (any, error) {
	var b stakeCall
	prov, err := h.decode(c, &b)
	if err != nil {
		return nil, err
	}
	ctx := c.Request().Context()
	// A jackpot contribution (details.jackpot) is part of the player's
	// stake: read, booked with it as the bet (docs/protocols/redtiger.md).
	cl, err := h.transaction(ctx, prov, b.base, b.Transaction.ID, map[string]domain.AmountText{
		"transaction.details.game": b.Transaction.Details.Game, "transaction.details.jackpot": b.Transaction.Details.Jackpot})
	if err != nil {
		return nil, err
	}
	m, promo, err := split("transaction.stake", "transaction.stakePromo", b.Transaction.Stake, b.Transaction.StakePromo, cl.Cur)
	if err != nil {
		return nil, err
	}
	if promo {
		// The promotion pays the stake: the player's wallet gives nothing.
		m = domain.Zero(cl.Cur)
	}
	tx, err := h.tx(ctx, cl, b.Game.Key, b.Transaction.ID, b.Round, promo || buyin)
	if err != nil {
		return nil, err
	}
	res, err := h.deps.Core.Bet(ctx, cl.Session, tx, m)
	if err != nil {
		return nil, err
	}
	return success{Success: true, Result: stakeResult{Token: cl.token, Currency: cl.Cur.Code(), ID: res.EventID,
		Stake: cash(res.Amount), Balance: cash(res.BalanceAfter)}}, nil
}

// Payout answers POST .../payout: a win credited at once on the round
// (the ledger's win naming no bet settles the round's stakes). Accepted
// after the session expired.
func (h *Handlers) Payout(c echo.Context) error {
	return h.answer(c, func() (any, error) { return h.payout(c, false) })
}

// PromoSettle answers POST .../promo/settle: a promotion's payout,
// credited at once and booked as a promo win.
func (h *Handlers) PromoSettle(c echo.Context) error {
	return h.answer(c, func() (any, error) { return h.payout(c, true) })
}

func (h *Handlers) payout(c echo.Context, settle bool) (any, error) {
	var b payoutCall
	prov, err := h.decode(c, &b)
	if err != nil {
		return nil, err
	}
	ctx := c.Request().Context()
	cl, err := h.transaction(ctx, prov, b.base, b.Transaction.ID, map[string]domain.AmountText{
		"transaction.details.game": b.Transaction.Details.Game, "transaction.sources.lines": b.Transaction.Sources.Lines,
		"transaction.sources.features": b.Transaction.Sources.Features})
	if err != nil {
		return nil, err
	}
	m, promo, err := split("transaction.payout", "transaction.payoutPromo", b.Transaction.Payout, b.Transaction.PayoutPromo, cl.Cur)
	if err != nil {
		return nil, err
	}
	jp, err := jackpotPart(b.Transaction, m)
	if err != nil {
		return nil, err
	}
	tx, err := h.tx(ctx, cl, b.Game.Key, b.Transaction.ID, b.Round, promo || settle)
	if err != nil {
		return nil, err
	}
	tx.Jackpot = jp
	res, err := h.deps.Core.Win(ctx, cl.Session, tx, m, "")
	if err != nil {
		return nil, err
	}
	return success{Success: true, Result: payoutResult{Token: cl.token, Currency: cl.Cur.Code(), ID: res.EventID,
		Payout: cash(res.Amount), Balance: cash(res.BalanceAfter)}}, nil
}

// Refund answers POST .../refund: the stake transaction.id names given
// back (the ledger's rollback). A refund of a stake we never booked moves
// nothing and answers success; the late stake is then refused. Accepted
// after the session expired.
func (h *Handlers) Refund(c echo.Context) error {
	return h.answer(c, func() (any, error) { return h.refund(c) })
}

// PromoRefund answers POST .../promo/refund: a promo buy-in given back,
// as Refund.
func (h *Handlers) PromoRefund(c echo.Context) error {
	return h.answer(c, func() (any, error) { return h.refund(c) })
}

func (h *Handlers) refund(c echo.Context) (any, error) {
	var b stakeCall
	prov, err := h.decode(c, &b)
	if err != nil {
		return nil, err
	}
	ctx := c.Request().Context()
	stakeID := b.Transaction.ID
	// The amounts are read (a malformed one is refused) but not booked:
	// the ledger gives back what the stake took.
	cl, err := h.transaction(ctx, prov, b.base, stakeID, map[string]domain.AmountText{
		"transaction.stake": b.Transaction.Stake, "transaction.stakePromo": b.Transaction.StakePromo,
		"transaction.details.game": b.Transaction.Details.Game, "transaction.details.jackpot": b.Transaction.Details.Jackpot})
	if err != nil {
		return nil, err
	}
	if err := domain.ValidateID("transaction.id", stakeID); err != nil {
		return nil, err
	}
	tx, err := h.tx(ctx, cl, b.Game.Key, "", b.Round, false)
	if err != nil {
		return nil, err
	}
	// Red Tiger refunds stakes only.
	res, err := h.deps.Core.RefundBet(ctx, cl.Session, tx, stakeID)
	if err != nil {
		return nil, err
	}
	return refundSuccess{Success: true, Result: refundResult{Token: cl.token, ID: res.EventID, Stake: cash(res.Amount)},
		Balance: cash(res.BalanceAfter), Currency: cl.Cur.Code()}, nil
}

// Base is the protocol's base path, one per provider, to which Red Tiger
// appends its calls' paths.
const Base = "/provider/redtiger/:provider/wallet"

// Calls are the protocol's calls (POST), by their path under Base. Its
// answers are the protocol's envelope, never an error body of ours.
func (h *Handlers) Calls() map[string]echo.HandlerFunc {
	return map[string]echo.HandlerFunc{"/auth": h.Auth, "/stake": h.Stake, "/payout": h.Payout, "/refund": h.Refund,
		"/promo/buyin": h.PromoBuyin, "/promo/settle": h.PromoSettle, "/promo/refund": h.PromoRefund}
}
