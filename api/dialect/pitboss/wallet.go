// Package pitboss is our own provider wallet protocol (/provider/v1/wallet,
// docs/provider-wallet.md): what game providers call during play to read a
// player's balance and to bet, win and roll back in a game session. It is
// a dialect of the wallet core (package wallet): it authenticates (the
// provider's signature scheme), decodes, and answers the core's verdict
// with our error codes (status.go), the ledger's own errors by the API's
// one mapping (wire.Classify).
package pitboss

import (
	"context"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/wallet"
)

// Each call carries X-Provider-Id and X-Signature, checked by the
// provider's signature scheme (gateway.VerifyProviderCall): v2 signs the
// time, the method, the path and the raw body, v1 (legacy) the body alone.
// Calls are idempotent by the provider's transaction_id; each debit or
// credit is applied at once and answered with the new balance.
const (
	headerProviderID = "X-Provider-Id"
	headerSignature  = "X-Signature"
)

// Deps are what the protocol uses.
type Deps struct {
	// Core answers the calls.
	Core *wallet.Core
	// Clock is the server's time, which a v2 signature's t must be near
	// (gateway.ProviderSignatureWindow).
	Clock wallet.Clock
	// Rounds reads a provider's rounds of a day for the daily round
	// export; without it that route answers 503.
	Rounds RoundExport
}

// Handlers answer the protocol's calls. Package api registers them on the
// /provider/v1/wallet group, whose error bodies carry details.retryable.
type Handlers struct{ deps Deps }

// New returns the protocol's handlers over deps; without a Clock they
// read the wall clock.
func New(deps Deps) *Handlers {
	if deps.Clock == nil {
		deps.Clock = wallClock{}
	}
	return &Handlers{deps: deps}
}

// Register adds the protocol's routes to e, each behind mw (the API's
// retryable marking of error bodies): the wallet calls under
// /provider/v1/wallet and the daily round export.
func (h *Handlers) Register(e *echo.Echo, mw ...echo.MiddlewareFunc) {
	p := e.Group("/provider/v1/wallet", mw...)
	p.POST("/balance", h.Balance)
	p.POST("/status", h.Status)
	p.POST("/bet", h.Bet)
	p.POST("/win", h.Win)
	p.POST("/rollback", h.Rollback)
	e.Group("/provider/v1/reports", mw...).GET("/rounds/:day", h.Rounds)
}

type walletCall struct {
	SessionID              string            `json:"session_id"`
	PlayerID               string            `json:"player_id"`
	ExternalTxID           string            `json:"transaction_id"`
	RoundID                string            `json:"round_id"`
	RoundClosed            bool              `json:"round_closed"`
	GameID                 string            `json:"game_id"`
	Amount                 domain.AmountText `json:"amount"`
	Currency               string            `json:"currency"`
	ReferenceTransactionID string            `json:"reference_transaction_id"`
	Promo                  bool              `json:"promo"`
	// Jackpot is a win's jackpot part; only a win may carry one (the
	// domain refuses it on a bet or rollback).
	Jackpot domain.AmountText `json:"jackpot"`
}

type walletAnswer struct {
	Status       string      `json:"status"`
	Balance      wire.Number `json:"balance"`
	Currency     string      `json:"currency"`
	EventID      string      `json:"transaction_id,omitempty"`
	ExternalTxID string      `json:"external_transaction_id,omitempty"`
	RoundID      string      `json:"round_id,omitempty"`
	RoundClosed  bool        `json:"round_closed,omitempty"`
	Replayed     bool        `json:"replayed,omitempty"`
}

// providerCall authenticates the provider, decodes the call and resolves
// its session. It does not look at the session's expiry: wins and
// rollbacks are accepted after it, and a bet's expiry is decided by the
// ledger after the idempotency check (wallet.Core.Bet), so a retried bet
// still gets its original answer. See docs/provider-wallet.md.
func (h *Handlers) providerCall(c echo.Context) (walletCall, wallet.Session, error) {
	call, s, err := h.providerCallOf(c, false)
	return call, s, refusal(err)
}

// providerCallOf is providerCall; anyProtocol lets a provider on another
// wallet protocol in too (the status query: each provider may ask it,
// signed with its secret, whatever protocol its money calls speak).
func (h *Handlers) providerCallOf(c echo.Context, anyProtocol bool) (walletCall, wallet.Session, error) {
	var call walletCall
	raw, err := wire.ReadBody(c)
	if err != nil {
		return call, wallet.Session{}, err
	}
	ctx := c.Request().Context()
	prov, err := h.caller(c)
	if err != nil {
		return call, wallet.Session{}, err
	}
	if prov.Protocol() != gateway.WalletProtocolPitboss && !anyProtocol {
		// A provider speaks one protocol (docs/providers-and-games.md):
		// its secret does not open this one.
		return call, wallet.Session{}, wallet.Refuse(wallet.Unauthenticated,
			"provider is on the "+prov.Protocol()+" wallet protocol; it calls /provider/"+prov.Protocol()+"/"+prov.ID+"/wallet")
	}
	if err := h.checkSignature(c, prov, raw); err != nil {
		return call, wallet.Session{}, err
	}
	// As on every other JSON body (issue 17, item 11): a proxy or WAF
	// that trusts the declared type must see the body we read.
	if err := wire.CheckJSONContentType(c); err != nil {
		return call, wallet.Session{}, err
	}
	if err := wire.DecodeJSON(raw, &call); err != nil {
		return call, wallet.Session{}, err
	}
	if err := wire.RequireField("session_id", call.SessionID); err != nil {
		return call, wallet.Session{}, err
	}
	sess, err := h.deps.Core.Session(ctx, prov, call.SessionID, call.PlayerID)
	if err != nil {
		return call, wallet.Session{}, err
	}
	if call.Currency != "" {
		if err := sess.SameCurrency(call.Currency); err != nil {
			return call, wallet.Session{}, err
		}
	}
	return call, sess, nil
}

// caller is the enabled provider X-Provider-Id names, on any protocol (its
// signature not yet checked); 401 for a missing header or an unknown or
// disabled one.
func (h *Handlers) caller(c echo.Context) (gateway.Provider, error) {
	pid := c.Request().Header.Get(headerProviderID)
	if pid == "" {
		return gateway.Provider{}, wire.NewError(http.StatusUnauthorized, wire.CodeUnauthorized, "missing "+headerProviderID+" header")
	}
	prov, err := h.deps.Core.Caller(c.Request().Context(), pid, "")
	return prov, refusal(err)
}

// tx is the call as the core books it, under the session's game or the
// game game_id names, which must be a game of the session's provider in
// the catalog (our id or its provider code: wallet.Core.Game). The
// session's own game was checked at launch and is not read again, so the
// usual call (no game_id) costs no lookup.
func (h *Handlers) tx(ctx context.Context, call walletCall, sess wallet.Session) (wallet.Tx, error) {
	t := wallet.Tx{ID: call.ExternalTxID, Round: call.RoundID, RoundClosed: call.RoundClosed, Promo: call.Promo}
	if call.Jackpot != "" {
		j, err := domain.ParseMoney(string(call.Jackpot), sess.Cur)
		if err != nil {
			return wallet.Tx{}, fmt.Errorf("jackpot: %w", err)
		}
		t.Jackpot = j
	}
	game, err := h.deps.Core.Game(ctx, sess, call.GameID)
	if err != nil {
		return wallet.Tx{}, refusal(err)
	}
	t.Game = game
	return t, nil
}

func answer(c echo.Context, call walletCall, r wallet.Result) error {
	return c.JSON(http.StatusOK, walletAnswer{Status: "OK", Balance: wire.Number(r.BalanceAfter.String()),
		Currency: r.BalanceAfter.Currency().Code(), EventID: r.EventID, ExternalTxID: r.ExternalTxID,
		RoundID: call.RoundID, RoundClosed: call.RoundClosed,
		Replayed: r.Replayed})
}

// walletAmount parses the call's amount, which must be present.
func walletAmount(call walletCall, cur domain.Currency) (domain.Money, error) {
	if err := wire.RequireField("amount", string(call.Amount)); err != nil {
		return domain.Money{}, err
	}
	return domain.ParseMoney(string(call.Amount), cur)
}

// Balance answers POST /provider/v1/wallet/balance: the player's balance
// in the session's currency.
func (h *Handlers) Balance(c echo.Context) error {
	_, sess, err := h.providerCall(c)
	if err != nil {
		return err
	}
	bal, err := h.deps.Core.Balance(c.Request().Context(), sess)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, walletAnswer{Status: "OK", Balance: wire.Number(bal.String()), Currency: bal.Currency().Code()})
}

// moneyCall is a provider call that moves an amount: bet or win.
type moneyCall func(ctx context.Context, call walletCall, sess wallet.Session, t wallet.Tx, amount domain.Money) (wallet.Result, error)

// providerMoneyCall authenticates, validates and runs a bet or a win.
func (h *Handlers) providerMoneyCall(c echo.Context, run moneyCall) error {
	call, sess, err := h.providerCall(c)
	if err != nil {
		return err
	}
	if err := wire.RequireField("transaction_id", call.ExternalTxID); err != nil {
		return err
	}
	amount, err := walletAmount(call, sess.Cur)
	if err != nil {
		return err
	}
	t, err := h.tx(c.Request().Context(), call, sess)
	if err != nil {
		return err
	}
	res, err := run(c.Request().Context(), call, sess, t, amount)
	if err != nil {
		return err
	}
	return answer(c, call, res)
}

// Bet answers POST /provider/v1/wallet/bet: a stake debited at once, while
// the session takes bets.
func (h *Handlers) Bet(c echo.Context) error {
	return h.providerMoneyCall(c, func(ctx context.Context, _ walletCall, sess wallet.Session, t wallet.Tx, amount domain.Money) (wallet.Result, error) {
		return h.deps.Core.Bet(ctx, sess, t, amount)
	})
}

// Win answers POST /provider/v1/wallet/win: a win credited at once.
func (h *Handlers) Win(c echo.Context) error {
	return h.providerMoneyCall(c, func(ctx context.Context, call walletCall, sess wallet.Session, t wallet.Tx, amount domain.Money) (wallet.Result, error) {
		return h.deps.Core.Win(ctx, sess, t, amount, call.ReferenceTransactionID)
	})
}

// Rollback answers POST /provider/v1/wallet/rollback: the call of
// reference_transaction_id undone.
func (h *Handlers) Rollback(c echo.Context) error {
	call, sess, err := h.providerCall(c)
	if err != nil {
		return err
	}
	for _, f := range []struct{ n, v string }{{"transaction_id", call.ExternalTxID},
		{"reference_transaction_id", call.ReferenceTransactionID}} {
		if err := wire.RequireField(f.n, f.v); err != nil {
			return err
		}
	}
	t, err := h.tx(c.Request().Context(), call, sess)
	if err != nil {
		return err
	}
	res, err := h.deps.Core.Rollback(c.Request().Context(), sess, t, call.ReferenceTransactionID)
	if err != nil {
		return err
	}
	return answer(c, call, res)
}

// The states of a transaction the status query reports.
const (
	TxFound      = "found"
	TxRolledBack = "rolled_back"
	TxNotFound   = "not_found"
)

type statusAnswer struct {
	Status      string       `json:"status"`
	Transaction txStatusView `json:"transaction"`
}

type txStatusView struct {
	ExternalTxID string       `json:"external_transaction_id"`
	State        string       `json:"state"`
	Kind         string       `json:"kind,omitempty"`
	EventID      string       `json:"transaction_id,omitempty"`
	Amount       *wire.Number `json:"amount,omitempty"`
	Currency     string       `json:"currency,omitempty"`
	RoundID      string       `json:"round_id,omitempty"`
	Position     int64        `json:"position,omitempty"`
	CreatedAt    string       `json:"created_at,omitempty"`
}

// Status answers POST /provider/v1/wallet/status: what the ledger holds of
// the provider's transaction_id in the session's client — found (with our
// event id, kind and amount), rolled_back, or not_found. It moves nothing;
// a provider asks it to reconcile a call whose answer it never received.
func (h *Handlers) Status(c echo.Context) error {
	if !h.deps.Core.HasRecords() {
		return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "the transaction status query is not configured")
	}
	call, sess, err := h.providerCallOf(c, true)
	if err != nil {
		return refusal(err)
	}
	if err := wire.RequireField("transaction_id", call.ExternalTxID); err != nil {
		return err
	}
	if err := wire.CheckID("transaction_id", call.ExternalTxID); err != nil {
		return err
	}
	rec, found, err := h.deps.Core.Record(c.Request().Context(), sess, call.ExternalTxID)
	if err != nil {
		return err
	}
	v := txStatusView{ExternalTxID: call.ExternalTxID, State: TxNotFound}
	if found {
		v.State = TxFound
		if rec.RolledBack {
			v.State = TxRolledBack
		}
		v.Kind, v.EventID, v.Currency, v.RoundID, v.Position = string(rec.Kind), rec.EventID, rec.Currency, rec.RoundID, rec.Position
		if cur, err := domain.ParseCurrency(rec.Currency); err == nil {
			n := wire.Number(domain.FromMinor(rec.Amount, cur).String())
			v.Amount = &n
		}
		if !rec.CreatedAt.IsZero() {
			v.CreatedAt = wire.FormatTime(rec.CreatedAt)
		}
	}
	return c.JSON(http.StatusOK, statusAnswer{Status: "OK", Transaction: v})
}
