// Package caleta is the Caleta Gaming System API 1.5 wallet
// (docs/protocols/caleta.md): what a provider on the caleta wallet protocol
// calls at /provider/caleta/{provider}/wallet/{check,balance,bet,win,rollback}.
// It is a dialect of the wallet core (package wallet): it authenticates
// (RSA-SHA256 of the raw body in X-Auth-Signature, verified with the
// provider's public key), decodes the document's bodies and integer
// amounts, and answers the core's verdict with the document's status
// (statuses, in status.go).
package caleta

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/gateway/rsasig"
	"github.com/pitboss/pitboss/wallet"
)

// HeaderSignature carries the standard base64 of the RSA-SHA256 (PKCS #1
// v1.5) signature of the raw body.
const HeaderSignature = "X-Auth-Signature"

// Handlers answer the protocol's calls. Every answer is HTTP 200 with the
// document's status in its body.
type Handlers struct {
	deps wire.DialectDeps

	// keys holds each provider's parsed public key with the PEM it was
	// parsed from, so a call does not parse it again; a changed PEM (the
	// provider cache's TTL) is parsed anew.
	mu   sync.RWMutex
	keys map[string]parsedKey
}

type parsedKey struct {
	pem string
	key *rsasig.Key
}

// New returns the protocol's handlers over deps: the core (a session id is
// the document's token) and the logger of the faults answered
// RS_ERROR_UNKNOWN.
func New(deps wire.DialectDeps) *Handlers {
	return &Handlers{deps: deps.WithDefaults(), keys: map[string]parsedKey{}}
}

// publicKey is prov's parsed WalletPublicKey, prepared for verification
// once (rsasig.Prepare) rather than on every call.
func (h *Handlers) publicKey(prov gateway.Provider) (*rsasig.Key, error) {
	h.mu.RLock()
	k, ok := h.keys[prov.ID]
	h.mu.RUnlock()
	if ok && k.pem == prov.WalletPublicKey {
		return k.key, nil
	}
	pub, err := gateway.ParseRSAPublicKey(prov.WalletPublicKey)
	if err != nil {
		return nil, fmt.Errorf("public key of provider %s: %w", prov.ID, err)
	}
	key, err := rsasig.Prepare(pub)
	if err != nil {
		return nil, fmt.Errorf("public key of provider %s: %w", prov.ID, err)
	}
	h.mu.Lock()
	h.keys[prov.ID] = parsedKey{pem: prov.WalletPublicKey, key: key}
	h.mu.Unlock()
	return key, nil
}

// call is what every call shares once authenticated and decoded: its
// session.
type call = wallet.Session

// refused answers err with its status.
func (h *Handlers) refused(c echo.Context, raw []byte, err error) error {
	return c.JSON(http.StatusOK, answer{Status: h.status(c, err), RequestUUID: requestUUID(raw)})
}

// status is err's status (classify); an unknown error, a fault of ours,
// is logged.
func (h *Handlers) status(c echo.Context, err error) string {
	status, known := classify(err)
	if !known {
		wire.LogFault(c, h.deps.Logger, "caleta wallet call failed", err)
	}
	return status
}

// authenticate reads the raw body and checks it was signed by the
// provider the path names, which must be enabled and on the caleta
// protocol. Any other provider has no key here: its calls are refused as
// RS_ERROR_INVALID_SIGNATURE, as a wrong signature is.
func (h *Handlers) authenticate(c echo.Context) ([]byte, gateway.Provider, error) {
	raw, err := wire.ReadBody(c)
	if err != nil {
		return nil, gateway.Provider{}, err
	}
	prov, err := h.deps.Core.Caller(c.Request().Context(), c.Param("provider"), gateway.WalletProtocolCaleta)
	if err != nil {
		return raw, prov, err
	}
	key, err := h.publicKey(prov)
	if err != nil {
		return raw, prov, err
	}
	if err := gateway.VerifyRSASHA256(key, raw, c.Request().Header.Get(HeaderSignature)); err != nil {
		return raw, prov, wallet.Refuse(wallet.Unauthenticated, err.Error())
	}
	// As on every other JSON body (issue 17, item 11): a proxy or WAF that
	// trusts the declared type must see the body we read.
	if err := wire.CheckJSONContentType(c); err != nil {
		return raw, prov, &wallet.Refusal{Verdict: wallet.Malformed, Reason: err.Error(), Err: err}
	}
	return raw, prov, nil
}

// session resolves the document's token, our game session id, which must
// be a session of prov in a currency the document's amounts can carry.
func (h *Handlers) session(ctx context.Context, prov gateway.Provider, token string) (call, error) {
	cl, err := h.deps.Core.Session(ctx, prov, token, "")
	if err != nil {
		return cl, err
	}
	return cl, checkCurrency(cl.Cur)
}

// decode authenticates the call and strictly decodes its body into v
// (wire.DecodeJSON: unknown fields are refused, so a field this dialect
// does not know is never ignored).
func (h *Handlers) decode(c echo.Context, v any) ([]byte, gateway.Provider, error) {
	raw, prov, err := h.authenticate(c)
	if err != nil {
		return raw, prov, err
	}
	return raw, prov, wire.DecodeJSON(raw, v)
}

// tx is a call as the core books it, under the game game_code names (the
// provider's code of the game, games.provider_game_code, or our game id;
// the session's game when left out: wallet.Core.Game).
func (h *Handlers) tx(ctx context.Context, cl call, code, txID, round string, closed bool) (wallet.Tx, error) {
	game, err := h.deps.Core.Game(ctx, cl, code)
	return wallet.Tx{ID: txID, Game: game, Round: round, RoundClosed: closed}, err
}

// ok answers RS_OK with the player's balance after the call.
func (h *Handlers) ok(c echo.Context, cl call, requestUUID string, balance domain.Money) error {
	units, err := toUnits(balance)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, answer{User: cl.PlayerID, Status: StatusOK, RequestUUID: requestUUID,
		Currency: cl.Cur.Code(), Balance: &units})
}

// Check answers POST .../wallet/check: the token to use for the wallet
// calls, which is the one given (a session id serves every call).
func (h *Handlers) Check(c echo.Context) error {
	var b checkCall
	_, prov, err := h.decode(c, &b)
	if err == nil {
		err = required([2]string{"token", b.Token})
	}
	if err == nil {
		_, err = h.session(c.Request().Context(), prov, b.Token)
	}
	if err != nil {
		return c.JSON(http.StatusOK, checkAnswer{Status: h.status(c, err)})
	}
	return c.JSON(http.StatusOK, checkAnswer{Token: b.Token, Status: StatusOK})
}

// Balance answers POST .../wallet/balance: the player's balance in the
// session's currency.
func (h *Handlers) Balance(c echo.Context) error {
	var b balanceCall
	raw, err := h.balance(c, &b)
	if err != nil {
		return h.refused(c, raw, err)
	}
	return nil
}

func (h *Handlers) balance(c echo.Context, b *balanceCall) ([]byte, error) {
	raw, prov, err := h.decode(c, b)
	if err != nil {
		return raw, err
	}
	if err := required([2]string{"token", b.Token}, [2]string{"request_uuid", b.RequestUUID}); err != nil {
		return raw, err
	}
	ctx := c.Request().Context()
	cl, err := h.session(ctx, prov, b.Token)
	if err != nil {
		return raw, err
	}
	if _, err := h.deps.Core.Game(ctx, cl, b.GameCode); err != nil {
		return raw, err
	}
	bal, err := h.deps.Core.Balance(ctx, cl)
	if err != nil {
		return raw, err
	}
	return raw, h.ok(c, cl, b.RequestUUID, bal)
}

// Bet answers POST .../wallet/bet: a stake debited at once, while the
// session takes bets (after it, RS_ERROR_TOKEN_EXPIRED).
func (h *Handlers) Bet(c echo.Context) error {
	var b betCall
	raw, err := h.bet(c, &b)
	if err != nil {
		return h.refused(c, raw, err)
	}
	return nil
}

func (h *Handlers) bet(c echo.Context, b *betCall) ([]byte, error) {
	raw, prov, err := h.decode(c, b)
	if err != nil {
		return raw, err
	}
	ctx := c.Request().Context()
	cl, amount, g, err := h.moneyCall(ctx, prov, &b.moneyBody)
	if err != nil {
		return raw, err
	}
	if b.free() {
		// A free bet: the campaign pays the stake, the player's wallet
		// gives nothing. It is booked as a promo bet of zero under the
		// campaign's ids (amount is the bet's nominal value).
		amount = domain.Zero(cl.Cur)
	}
	res, err := h.deps.Core.Bet(ctx, cl, g, amount)
	if err != nil {
		return raw, err
	}
	return raw, h.ok(c, cl, b.RequestUUID, res.BalanceAfter)
}

// moneyCall checks what a bet and a win share, in the document's order:
// the required fields (and extra, the call's own), the session of the
// token, its currency, the amount at the currency's precision, the game.
// A free bet's call is booked as promo money under the campaign's ids.
func (h *Handlers) moneyCall(ctx context.Context, prov gateway.Provider, b *moneyBody, extra ...[2]string) (call,
	domain.Money, wallet.Tx, error) {
	if err := required(append([][2]string{{"token", b.Token}, {"request_uuid", b.RequestUUID},
		{"transaction_uuid", b.TransactionUUID}, {"round", b.Round}}, append(extra, [2]string{"currency", b.Currency})...)...); err != nil {
		return call{}, domain.Money{}, wallet.Tx{}, err
	}
	cl, err := h.session(ctx, prov, b.Token)
	if err != nil {
		return cl, domain.Money{}, wallet.Tx{}, err
	}
	if err := cl.SameCurrency(b.Currency); err != nil {
		return cl, domain.Money{}, wallet.Tx{}, err
	}
	amount, err := toMoney("amount", b.Amount, cl.Cur)
	if err != nil {
		return cl, domain.Money{}, wallet.Tx{}, err
	}
	t, err := h.tx(ctx, cl, b.GameCode, b.TransactionUUID, b.Round, b.RoundClosed)
	if b.free() {
		t.Promo, t.Campaign, t.Reward = true, b.CampaignUUID, b.RewardUUID
	}
	return cl, amount, t, err
}

// Win answers POST .../wallet/win: a win credited at once, on the bet
// reference_transaction_uuid names.
func (h *Handlers) Win(c echo.Context) error {
	var b winCall
	raw, err := h.win(c, &b)
	if err != nil {
		return h.refused(c, raw, err)
	}
	return nil
}

func (h *Handlers) win(c echo.Context, b *winCall) ([]byte, error) {
	raw, prov, err := h.decode(c, b)
	if err != nil {
		return raw, err
	}
	ctx := c.Request().Context()
	// A free bet's win is credited in full, as promo money.
	cl, amount, g, err := h.moneyCall(ctx, prov, &b.moneyBody,
		[2]string{"reference_transaction_uuid", b.ReferenceTransactionUUID})
	if err != nil {
		return raw, err
	}
	if g.Jackpot, err = jackpotPart(b.JackpotWin, amount); err != nil {
		return raw, err
	}
	res, err := h.deps.Core.Win(ctx, cl, g, amount, b.ReferenceTransactionUUID)
	if err != nil {
		return raw, err
	}
	return raw, h.ok(c, cl, b.RequestUUID, res.BalanceAfter)
}

// Rollback answers POST .../wallet/rollback: the transaction
// reference_transaction_uuid names undone. A rollback of a transaction we
// never booked moves nothing and answers RS_OK; the late original is then
// refused (RS_ERROR_TRANSACTION_ROLLED_BACK).
func (h *Handlers) Rollback(c echo.Context) error {
	var b rollbackCall
	raw, err := h.rollback(c, &b)
	if err != nil {
		return h.refused(c, raw, err)
	}
	return nil
}

func (h *Handlers) rollback(c echo.Context, b *rollbackCall) ([]byte, error) {
	raw, prov, err := h.decode(c, b)
	if err != nil {
		return raw, err
	}
	if err := required([2]string{"token", b.Token}, [2]string{"request_uuid", b.RequestUUID},
		[2]string{"transaction_uuid", b.TransactionUUID},
		[2]string{"reference_transaction_uuid", b.ReferenceTransactionUUID}); err != nil {
		return raw, err
	}
	ctx := c.Request().Context()
	cl, err := h.deps.Core.Session(ctx, prov, b.Token, b.User)
	if err == nil {
		err = checkCurrency(cl.Cur)
	}
	if err != nil {
		return raw, err
	}
	g, err := h.tx(ctx, cl, b.GameCode, b.TransactionUUID, b.Round, b.RoundClosed)
	if err != nil {
		return raw, err
	}
	res, err := h.deps.Core.Rollback(ctx, cl, g, b.ReferenceTransactionUUID)
	if err != nil {
		return raw, err
	}
	return raw, h.ok(c, cl, b.RequestUUID, res.BalanceAfter)
}

// Base is the protocol's base path, one per provider, so the provider is
// known before the body is read.
const Base = "/provider/caleta/:provider/wallet"

// Calls are the protocol's calls (POST), by their path under Base. Every
// answer is 200 with the document's status: no error body of ours is sent.
func (h *Handlers) Calls() map[string]echo.HandlerFunc {
	return map[string]echo.HandlerFunc{"/check": h.Check, "/balance": h.Balance, "/bet": h.Bet, "/win": h.Win,
		"/rollback": h.Rollback}
}
