// Package redtigerwallet is the Red Tiger wallet protocol
// (docs/protocols/redtiger.md) for providers on the redtiger wallet
// protocol: it authenticates the provider's API key, decodes the RGI
// bodies and their decimal amounts, and answers the protocol's envelope
// and numeric codes; every rule of money is the ledger's (package
// commands), the same as for our own protocol (package providerwallet)
// and Caleta's (package caletawallet).
package redtigerwallet

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// HeaderAuthorization carries the provider's API key, bare or after
// "Basic " (both spellings are in use).
const HeaderAuthorization = "Authorization"

// refundPrefix makes a refund's own ledger id from the id of the stake it
// refunds: Red Tiger's refund names the stake and has no id of its own.
// '@' keeps it apart from Red Tiger's ids (letters, digits, '-').
const refundPrefix = "refund@"

// TxRecords reads the ledger's record of a transaction (domain.GameTxKey),
// so a refund is only ever a stake's.
type TxRecords interface {
	TxRecord(ctx context.Context, key string) (domain.TxRecord, bool, error)
}

// Deps are the stores and the ledger the protocol uses.
type Deps struct {
	// Catalog knows the providers (their protocol and API key, the
	// provider secret) and the games; Sessions the game sessions, whose id
	// is the protocol's token.
	Catalog  gateway.Catalog
	Sessions gateway.Sessions
	// Commands run the money calls on the ledger; Balances reads a
	// player's balance; Records the ledger's transaction records.
	Commands *commands.Handler
	Balances commands.Balances
	Records  TxRecords
	// Logger records the faults answered CodeInternal.
	Logger *slog.Logger
}

// Handlers answer the protocol's calls.
type Handlers struct{ deps Deps }

// New returns the protocol's handlers over deps.
func New(deps Deps) *Handlers {
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	return &Handlers{deps: deps}
}

// call is what every call shares once authenticated and decoded.
type call struct {
	token string
	sess  gateway.GameSession
	cur   domain.Currency
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

// sameKey compares an API key with the provider's in constant time, the
// lengths included (both are hashed first).
func sameKey(given, want string) bool {
	if want == "" {
		return false
	}
	g, w := sha256.Sum256([]byte(given)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
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
	if h.deps.Catalog == nil || h.deps.Sessions == nil || h.deps.Commands == nil || h.deps.Balances == nil ||
		h.deps.Records == nil {
		return gateway.Provider{}, errors.New("red tiger wallet: the server has no ledger stores")
	}
	ctx := c.Request().Context()
	prov, err := h.deps.Catalog.Provider(ctx, c.Param("provider"))
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return prov, refuse(CodeAPIAuth, "unknown provider")
	case err != nil:
		return prov, fmt.Errorf("look up provider of a red tiger call: %w", err)
	case !prov.Enabled:
		return prov, refuse(CodeAPIAuth, "provider disabled")
	case prov.Protocol() != gateway.WalletProtocolRedTiger:
		return prov, refuse(CodeAPIAuth, "provider is on the "+prov.Protocol()+" wallet protocol")
	}
	key := strings.TrimPrefix(c.Request().Header.Get(HeaderAuthorization), "Basic ")
	if !sameKey(key, prov.Secret) {
		return prov, refuse(CodeAPIAuth, "wrong API key")
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
		return call{}, refuse(CodeInvalidInput, "token is required")
	}
	sess, err := h.deps.Sessions.Session(ctx, b.Token)
	if errors.Is(err, domain.ErrNotFound) || (err == nil && sess.ProviderID != prov.ID) {
		return call{}, refuse(CodeNotAuthorized, "unknown token")
	} else if err != nil {
		return call{}, fmt.Errorf("look up session of a red tiger call: %w", err)
	}
	if b.UserID != "" && b.UserID != sess.PlayerID {
		return call{}, refuse(CodeNotAuthorized, "userId is not the session's player")
	}
	cur, err := domain.ParseCurrency(sess.Currency)
	if err != nil {
		return call{}, fmt.Errorf("currency of session %s: %w", sess.ID, err)
	}
	if b.Currency != "" && b.Currency != sess.Currency {
		return call{}, refuse(CodeInvalidCurrency, "currency is not the session's")
	}
	return call{token: b.Token, sess: sess, cur: cur}, nil
}

// game is the game the ledger books a call under: the session's, or the
// game key names (its provider code or our id), which must be a game of
// the session's provider.
func (h *Handlers) game(ctx context.Context, cl call, key string) (string, error) {
	g, err := gateway.SessionGame(ctx, h.deps.Catalog, cl.sess, key)
	switch {
	case errors.Is(err, gateway.ErrNotSessionsGame):
		return "", refuse(CodeInvalidInput, "game.key is not a game of the session's provider")
	case err != nil:
		return "", fmt.Errorf("game of a red tiger call: %w", err)
	}
	return g, nil
}

// gameTx is a call as the ledger books it.
func (cl call) gameTx(game, txID string, r round, promo bool) domain.GameTx {
	return domain.GameTx{Client: cl.sess.ClientID, Player: cl.sess.PlayerID, Provider: cl.sess.ProviderID,
		Game: game, Round: r.ID, Session: cl.sess.ID, ExternalTxID: txID, Currency: cl.cur,
		RoundClosed: r.Ends, Promo: promo}
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
		st, err := h.deps.Balances.Account(ctx, domain.PlayerWallet(cl.sess.ClientID, cl.sess.PlayerID, cl.cur))
		if err != nil {
			return nil, fmt.Errorf("balance of a red tiger auth: %w", err)
		}
		return success{Success: true, Result: authResult{Token: cl.token, Currency: cl.cur.Code(),
			UserID: cl.sess.PlayerID, Casino: b.Casino, Balance: cash(domain.FromMinor(st.Balance, cl.cur))}}, nil
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
		return domain.Money{}, false, refuse(CodeGeneric,
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
			return domain.Money{}, refuse(CodeInvalidInput, "transaction.sources.jackpot: "+err.Error())
		}
	}
	part := detail
	switch {
	case detail.IsZero():
		part = pots
	case !pots.IsZero() && pots.Cmp(detail) != 0:
		return domain.Money{}, refuse(CodeInvalidInput, "transaction.sources.jackpot adds up to "+pots.String()+
			", transaction.details.jackpot says "+detail.String())
	}
	if part.Cmp(paid) > 0 {
		return domain.Money{}, refuse(CodeInvalidInput, "the jackpot part "+part.String()+" is more than the payout "+paid.String())
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
	cl, err := h.session(ctx, prov, b.base)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(b.Transaction.ID) == "" {
		return nil, refuse(CodeInvalidInput, "transaction.id is required")
	}
	// A jackpot contribution (details.jackpot) is part of the player's
	// stake: read, booked with it as the bet (docs/protocols/redtiger.md).
	for f, v := range map[string]domain.AmountText{"transaction.details.game": b.Transaction.Details.Game,
		"transaction.details.jackpot": b.Transaction.Details.Jackpot} {
		if _, err := amount(f, v, cl.cur); err != nil {
			return nil, err
		}
	}
	m, promo, err := split("transaction.stake", "transaction.stakePromo", b.Transaction.Stake, b.Transaction.StakePromo, cl.cur)
	if err != nil {
		return nil, err
	}
	if promo {
		// The promotion pays the stake: the player's wallet gives nothing.
		m = domain.Zero(cl.cur)
	}
	g, err := h.game(ctx, cl, b.Game.Key)
	if err != nil {
		return nil, err
	}
	res, err := h.deps.Commands.PlaceBetInSession(ctx, cl.gameTx(g, b.Transaction.ID, b.Round, promo || buyin), m,
		cl.sess.ExpiresAt)
	if err != nil {
		return nil, err
	}
	return success{Success: true, Result: stakeResult{Token: cl.token, Currency: cl.cur.Code(), ID: res.EventID,
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
	cl, err := h.session(ctx, prov, b.base)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(b.Transaction.ID) == "" {
		return nil, refuse(CodeInvalidInput, "transaction.id is required")
	}
	for f, v := range map[string]domain.AmountText{"transaction.details.game": b.Transaction.Details.Game,
		"transaction.sources.lines": b.Transaction.Sources.Lines, "transaction.sources.features": b.Transaction.Sources.Features} {
		if _, err := amount(f, v, cl.cur); err != nil {
			return nil, err
		}
	}
	m, promo, err := split("transaction.payout", "transaction.payoutPromo", b.Transaction.Payout, b.Transaction.PayoutPromo, cl.cur)
	if err != nil {
		return nil, err
	}
	jp, err := jackpotPart(b.Transaction, m)
	if err != nil {
		return nil, err
	}
	g, err := h.game(ctx, cl, b.Game.Key)
	if err != nil {
		return nil, err
	}
	tx := cl.gameTx(g, b.Transaction.ID, b.Round, promo || settle)
	tx.Jackpot = jp
	res, err := h.deps.Commands.CreditWin(ctx, tx, m, "")
	if err != nil {
		return nil, err
	}
	return success{Success: true, Result: payoutResult{Token: cl.token, Currency: cl.cur.Code(), ID: res.EventID,
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
	cl, err := h.session(ctx, prov, b.base)
	if err != nil {
		return nil, err
	}
	stakeID := b.Transaction.ID
	if strings.TrimSpace(stakeID) == "" {
		return nil, refuse(CodeInvalidInput, "transaction.id is required")
	}
	if err := domain.ValidateID("transaction.id", stakeID); err != nil {
		return nil, err
	}
	// The amounts are read (a malformed one is refused) but not booked:
	// the ledger gives back what the stake took.
	for f, v := range map[string]domain.AmountText{"transaction.stake": b.Transaction.Stake,
		"transaction.stakePromo": b.Transaction.StakePromo, "transaction.details.game": b.Transaction.Details.Game,
		"transaction.details.jackpot": b.Transaction.Details.Jackpot} {
		if _, err := amount(f, v, cl.cur); err != nil {
			return nil, err
		}
	}
	rec, found, err := h.deps.Records.TxRecord(ctx, domain.GameTxKey(cl.sess.ClientID, cl.sess.ProviderID, stakeID))
	if err != nil {
		return nil, fmt.Errorf("look up the stake of a red tiger refund: %w", err)
	}
	if found && rec.Kind != domain.TxBet && rec.Kind != domain.TxTombstone {
		// Red Tiger refunds stakes only: the ledger's rollback of a win
		// would take a payout back.
		return nil, refuse(CodeTransactionNotFound, "transaction.id is not a stake")
	}
	g, err := h.game(ctx, cl, b.Game.Key)
	if err != nil {
		return nil, err
	}
	res, err := h.deps.Commands.Rollback(ctx, cl.gameTx(g, refundPrefix+stakeID, b.Round, false), stakeID)
	if err != nil {
		return nil, err
	}
	return refundSuccess{Success: true, Result: refundResult{Token: cl.token, ID: res.EventID, Stake: cash(res.Amount)},
		Balance: cash(res.BalanceAfter), Currency: cl.cur.Code()}, nil
}
