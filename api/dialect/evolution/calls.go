package evolution

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/wallet"
)

// Check answers POST .../wallet/check: whether sid is a session of userId
// here, and the sid to use (the one given: a session id serves every call).
func (h *Handlers) Check(c echo.Context) error {
	var b checkCall
	raw, err := h.decode(c, &b)
	if err == nil {
		_, err = h.session(c.Request().Context(), c.Param("provider"), b.base)
	}
	if err != nil {
		status := h.status(c, err, StatusInvalidParameter)
		return c.JSON(httpStatus(status), checkAnswer{Status: status, UUID: requestUUID(raw)})
	}
	return c.JSON(http.StatusOK, checkAnswer{Status: StatusOK, SID: b.SID, UUID: b.UUID})
}

// Balance answers POST .../wallet/balance: the player's balance in the
// session's currency. Its game, if any, is not looked at: nothing is booked.
func (h *Handlers) Balance(c echo.Context) error {
	var b balanceCall
	raw, err := h.decode(c, &b)
	if err != nil {
		return h.reply(c, raw, nil, domain.Money{}, StatusInvalidParameter, err)
	}
	ctx := c.Request().Context()
	cl, err := h.session(ctx, c.Param("provider"), b.base)
	if err == nil {
		err = cl.SameCurrency(b.Currency)
	}
	if err != nil {
		return h.reply(c, raw, cl, domain.Money{}, StatusInvalidParameter, err)
	}
	bal, err := h.balanceOf(ctx, *cl)
	if err != nil {
		return h.reply(c, raw, nil, domain.Money{}, StatusInvalidParameter, err)
	}
	return h.reply(c, raw, cl, bal, "", nil)
}

// money is a debit, credit or cancel decoded and checked up to the
// ledger: its session, its transaction, the amount (zero when a cancel
// leaves it out), the game it is booked under and its round.
type money struct {
	cl     *call
	tx     transaction
	amount domain.Money
	game   string
	round  string
}

// gameTx is m as the core books it, under id.
func (m money) gameTx(id string) wallet.Tx { return wallet.Tx{ID: id, Game: m.game, Round: m.round} }

// moneyCall checks what a debit, a credit and a cancel share, in this
// order: the body, the session and its player, the currency, the
// transaction's ids, the amount at the currency's precision, the game.
func (h *Handlers) moneyCall(c echo.Context, amountRequired bool) ([]byte, money, error) {
	var b moneyCall
	raw, err := h.decode(c, &b)
	if err != nil {
		return raw, money{}, err
	}
	ctx := c.Request().Context()
	cl, err := h.session(ctx, c.Param("provider"), b.base)
	if err != nil {
		return raw, money{cl: cl}, err
	}
	m := money{cl: cl, round: b.Game.roundID()}
	if err := cl.SameCurrency(b.Currency); err != nil {
		return raw, m, err
	}
	if b.Transaction == nil {
		return raw, m, wallet.Refuse(wallet.InvalidRequest, "transaction is required")
	}
	m.tx = *b.Transaction
	if err := required([2]string{"transaction.id", m.tx.ID}, [2]string{"transaction.refId", m.tx.RefID}); err != nil {
		return raw, m, err
	}
	if amountRequired || m.tx.Amount != nil {
		if m.amount, err = toMoney("transaction.amount", m.tx.Amount, cl.Cur); err != nil {
			return raw, m, err
		}
	}
	if m.game, err = h.game(ctx, cl, b.Game.tableID()); err != nil {
		return raw, m, err
	}
	return raw, m, nil
}

// Debit answers POST .../wallet/debit: the bet refId names, debited at
// once while the session takes bets (after it, INVALID_SID). The same
// refId again is the same bet: with the same fields it answers as the
// first time and books nothing; with others, BET_ALREADY_EXIST.
func (h *Handlers) Debit(c echo.Context) error {
	raw, m, err := h.moneyCall(c, true)
	if err != nil {
		return h.reply(c, raw, m.cl, domain.Money{}, StatusBetAlreadyExist, err)
	}
	res, err := h.deps.Core.Bet(c.Request().Context(), *m.cl, m.gameTx(betID(m.tx.RefID)), m.amount)
	if err != nil {
		return h.reply(c, raw, m.cl, domain.Money{}, StatusBetAlreadyExist, err)
	}
	return h.reply(c, raw, m.cl, res.BalanceAfter, "", nil)
}

// Credit answers POST .../wallet/credit: the bet refId names settled with
// amount (0 for a lost bet), credited at once, also after the session's
// end. One credit per bet: a retry answers as the first time; a second
// credit with another amount, round or table is BET_ALREADY_SETTLED.
func (h *Handlers) Credit(c echo.Context) error {
	raw, m, err := h.moneyCall(c, true)
	if err != nil {
		return h.reply(c, raw, m.cl, domain.Money{}, StatusBetAlreadySettled, err)
	}
	res, err := h.deps.Core.Win(c.Request().Context(), *m.cl, m.gameTx(creditID(m.tx.RefID)), m.amount,
		betID(m.tx.RefID))
	if err != nil {
		return h.reply(c, raw, m.cl, domain.Money{}, StatusBetAlreadySettled, err)
	}
	return h.reply(c, raw, m.cl, res.BalanceAfter, "", nil)
}

// Cancel answers POST .../wallet/cancel: the bet refId names refunded in
// full (the amount the ledger debited; the call's amount, optional, is
// only checked for its form), also after the session's end. A cancel of a
// bet we never booked moves nothing and answers BET_DOES_NOT_EXIST; the
// ledger keeps it, so the late debit is refused (BET_ALREADY_SETTLED).
func (h *Handlers) Cancel(c echo.Context) error {
	raw, m, err := h.moneyCall(c, false)
	if err != nil {
		return h.reply(c, raw, m.cl, domain.Money{}, StatusBetAlreadySettled, err)
	}
	res, err := h.deps.Core.Rollback(c.Request().Context(), *m.cl, m.gameTx(cancelID(m.tx.RefID)), betID(m.tx.RefID))
	if err != nil {
		return h.reply(c, raw, m.cl, domain.Money{}, StatusBetAlreadySettled, err)
	}
	if res.Amount.IsZero() {
		// The ledger refunded nothing: it had no bet (a debit is never 0
		// here), and recorded the cancel so the late debit is refused.
		return h.reply(c, raw, m.cl, domain.Money{}, "", wallet.Refuse(wallet.UnknownTransaction, "no bet "+m.tx.RefID))
	}
	return h.reply(c, raw, m.cl, res.BalanceAfter, "", nil)
}

// PromoPayout answers POST .../wallet/promo_payout: money Evolution pays
// the player from a promotion (a tournament, a reward game, a promo
// jackpot), booked as a promo win on no bet and no round, so finance sees
// it in the promo column of GGR. One payout per promoTransaction.id: a
// retry answers as the first time; another amount is BET_ALREADY_EXIST.
func (h *Handlers) PromoPayout(c echo.Context) error {
	var b promoCall
	raw, err := h.decode(c, &b)
	if err != nil {
		return h.reply(c, raw, nil, domain.Money{}, StatusBetAlreadyExist, err)
	}
	ctx := c.Request().Context()
	cl, err := h.session(ctx, c.Param("provider"), b.base)
	if err == nil {
		var res wallet.Result
		if res, err = h.promoPayout(ctx, cl, b); err == nil {
			return h.reply(c, raw, cl, res.BalanceAfter, "", nil)
		}
	}
	return h.reply(c, raw, cl, domain.Money{}, StatusBetAlreadyExist, err)
}

// promoPayout checks a promo payout of cl's session, in this order: the
// currency, the promoTransaction's id, its amount, the game; and books it.
func (h *Handlers) promoPayout(ctx context.Context, cl *call, b promoCall) (wallet.Result, error) {
	if err := cl.SameCurrency(b.Currency); err != nil {
		return wallet.Result{}, err
	}
	p := b.PromoTransaction
	if p == nil {
		return wallet.Result{}, wallet.Refuse(wallet.InvalidRequest, "promoTransaction is required")
	}
	if err := required([2]string{"promoTransaction.id", p.ID}); err != nil {
		return wallet.Result{}, err
	}
	amount, err := toMoney("promoTransaction.amount", p.Amount, cl.Cur)
	if err != nil {
		return wallet.Result{}, err
	}
	game, err := h.game(ctx, cl, b.Game.tableID())
	if err != nil {
		return wallet.Result{}, err
	}
	return h.deps.Core.Win(ctx, *cl, wallet.Tx{ID: promoID(p.ID), Game: game, Promo: true}, amount, "")
}
