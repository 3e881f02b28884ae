// Package tbb is The Bet Brothers' supplier-side Game Events wallet
// (docs/protocols/tbb.md): what a provider on the tbb wallet protocol calls
// at /provider/tbb/{provider}/wallet/{balance,bet,win,refund}. It is a
// dialect of the wallet core (package wallet): it authenticates
// (X-REQUEST-SIGN, the hex HMAC-SHA256 of the raw body keyed with the
// provider's secret), decodes the document's bodies and integer minor-unit
// amounts, and answers the core's verdict with the addendum's codes
// (codes.go).
package tbb

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/wallet"
)

// HeaderSignature carries the hex HMAC-SHA256 of the raw body.
const HeaderSignature = "X-REQUEST-SIGN"

// Handlers answer the protocol's calls.
type Handlers struct{ deps wire.DialectDeps }

// New returns the protocol's handlers over deps: the core (with the
// ledger's records, so a refund is only ever a bet's; a session id is the
// document's token) and the logger of the faults answered 500.
func New(deps wire.DialectDeps) *Handlers { return &Handlers{deps: deps.WithDefaults()} }

// answer runs fn and answers its result with 200, or its error with the
// addendum's code as the HTTP status.
func (h *Handlers) answer(c echo.Context, fn func(ctx context.Context) (any, error)) error {
	res, err := fn(c.Request().Context())
	if err == nil {
		return c.JSON(http.StatusOK, res)
	}
	code, msg, known := classify(err)
	if !known {
		wire.LogFault(c, h.deps.Logger, "tbb wallet call failed", err)
	}
	return c.JSON(code, failure{Code: code, Message: msg})
}

// decode reads the raw body, checks the provider the path names (enabled,
// on the tbb protocol) and the body's signature with its secret, then
// strictly decodes the body into v (a field the document does not list is
// refused, never ignored) and checks what every call carries.
func (h *Handlers) decode(c echo.Context, v body) (call, error) {
	raw, err := wire.ReadBody(c)
	if err != nil {
		return call{}, err
	}
	ctx := c.Request().Context()
	prov, err := h.deps.Core.Caller(ctx, c.Param("provider"), gateway.WalletProtocolTBB)
	if err != nil {
		return call{}, err
	}
	if !gateway.ValidSignature(prov.Secret, raw, c.Request().Header.Get(HeaderSignature)) {
		return call{}, wallet.Refuse(wallet.Unauthenticated, HeaderSignature+" is not the HMAC-SHA256 of the body")
	}
	if err := wire.CheckJSONContentType(c); err != nil {
		return call{}, &wallet.Refusal{Verdict: wallet.Malformed, Reason: err.Error(), Err: err}
	}
	if err := wire.DecodeJSON(raw, v); err != nil {
		return call{}, err
	}
	b := v.common()
	if err := b.check(prov.ID); err != nil {
		return call{}, err
	}
	s, err := h.deps.Core.Session(ctx, prov, b.Token, v.player())
	if err != nil {
		return call{}, err
	}
	if err := s.SameCurrency(b.CurrencyCode); err != nil {
		return call{}, err
	}
	return call{Session: s, token: b.Token}, nil
}

// body is a call's body: what every call carries, and the player it names.
type body interface {
	common() *base
	player() string
}

// call is a decoded call's session and token.
type call struct {
	wallet.Session
	token string
}

// tx is m as the core books it under id, in the game game_symbol names
// (its provider code or our id: wallet.Core.Game).
func (h *Handlers) tx(ctx context.Context, cl call, m *money, id string, closed bool) (wallet.Tx, error) {
	game, err := h.deps.Core.Game(ctx, cl.Session, m.GameSymbol)
	return wallet.Tx{ID: id, Game: game, Round: m.RoundID, RoundClosed: closed}, err
}

// Balance answers POST .../balance: the player's balance in minor units.
func (h *Handlers) Balance(c echo.Context) error {
	return h.answer(c, func(ctx context.Context) (any, error) {
		var b balanceCall
		cl, err := h.decode(c, &b)
		if err != nil {
			return nil, err
		}
		bal, err := h.deps.Core.Balance(ctx, cl.Session)
		if err != nil {
			return nil, err
		}
		return balanceAnswer{Token: cl.token, Balance: bal.Minor()}, nil
	})
}

// Bet answers POST .../bet: amount debited at once while the session takes
// bets (after it, 403). The Game Events have no promotion fields: a bet of
// 0 is a free spin of the player's active reward on the game, granted by a
// campaign through the Free Spin API (docs/promotions.md), and refused
// when the player has none (the ledger takes a bet of nothing only as a
// promotion's).
func (h *Handlers) Bet(c echo.Context) error {
	return h.answer(c, func(ctx context.Context) (any, error) {
		var b moneyCall
		cl, err := h.decode(c, &b)
		if err != nil {
			return nil, err
		}
		amount, err := b.amount(cl.Cur, true)
		if err != nil {
			return nil, err
		}
		t, err := h.tx(ctx, cl, &b.money, b.TransactionID, false)
		if err != nil {
			return nil, err
		}
		res, err := h.deps.Core.Bet(ctx, cl.Session, t, amount)
		return moneyAnswerOf(cl, res, err)
	})
}

// Win answers POST .../win: amount credited at once (0: a lost round), also
// after the session ended. A win names no bet: it settles its round's bets
// (the core's win on no bet), and is refused when every bet of the round
// was refunded.
func (h *Handlers) Win(c echo.Context) error {
	return h.answer(c, func(ctx context.Context) (any, error) {
		var b winCall
		cl, err := h.decode(c, &b)
		if err != nil {
			return nil, err
		}
		if b.RoundClose == nil {
			return nil, wallet.Refuse(wallet.InvalidRequest, "round_close is required")
		}
		amount, err := b.amount(cl.Cur, true)
		if err != nil {
			return nil, err
		}
		t, err := h.tx(ctx, cl, &b.money, b.TransactionID, *b.RoundClose)
		if err != nil {
			return nil, err
		}
		res, err := h.deps.Core.Win(ctx, cl.Session, t, amount, "")
		return moneyAnswerOf(cl, res, err)
	})
}

// Refund answers POST .../refund: the bet refunded_transaction_id names
// given back in full (what the ledger debited; the refund's amount is read,
// not booked), also after the session ended. A refund of a bet never booked
// moves nothing and answers 406, and the ledger keeps it, so the late bet
// is refused (408).
func (h *Handlers) Refund(c echo.Context) error {
	return h.answer(c, func(ctx context.Context) (any, error) {
		var b refundCall
		cl, err := h.decode(c, &b)
		if err != nil {
			return nil, err
		}
		if _, err := b.amount(cl.Cur, true); err != nil {
			return nil, err
		}
		if b.RefundedTransactionID == "" {
			return nil, wallet.Refuse(wallet.InvalidRequest, "refunded_transaction_id is required")
		}
		if err := domain.ValidateID("refunded_transaction_id", b.RefundedTransactionID); err != nil {
			return nil, err
		}
		t, err := h.tx(ctx, cl, &b.money, "", false)
		if err != nil {
			return nil, err
		}
		// The Game Events refund bets only.
		res, err := h.deps.Core.RefundBet(ctx, cl.Session, t, b.RefundedTransactionID)
		if err == nil && res.Amount.IsZero() {
			// The ledger refunded nothing: it had no bet (a bet is never
			// 0 here), and recorded the refund so the late bet is refused.
			return nil, wallet.Refuse(wallet.UnknownTransaction, "no bet "+b.RefundedTransactionID)
		}
		return moneyAnswerOf(cl, res, err)
	})
}

// Base is the protocol's base path, one per provider, so the provider, and
// with it its secret, is known before the body is read.
const Base = "/provider/tbb/:provider/wallet"

// Calls are the protocol's calls (POST), by their path under Base.
func (h *Handlers) Calls() map[string]echo.HandlerFunc {
	return map[string]echo.HandlerFunc{"/balance": h.Balance, "/bet": h.Bet, "/win": h.Win, "/refund": h.Refund}
}
