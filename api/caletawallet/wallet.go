// Package caletawallet is the Caleta Gaming System API 1.5 wallet
// (docs/protocols/caleta.md): what a provider on the caleta wallet protocol
// calls at /provider/caleta/{provider}/wallet/{check,balance,bet,win,rollback}.
// It is a dialect only: it authenticates (RSA-SHA256 of the raw body in
// X-Auth-Signature, verified with the provider's public key), decodes the
// document's bodies and integer amounts, and answers its statuses; every
// rule of money is the ledger's (package commands), the same as for our own
// protocol (package providerwallet).
package caletawallet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/gateway/rsasig"
)

// HeaderSignature carries the standard base64 of the RSA-SHA256 (PKCS #1
// v1.5) signature of the raw body.
const HeaderSignature = "X-Auth-Signature"

// Deps are the stores and the ledger the protocol uses.
type Deps struct {
	// Catalog knows the providers (their protocol and public key) and the
	// games; Sessions the game sessions, whose id is the document's token.
	Catalog  gateway.Catalog
	Sessions gateway.Sessions
	// Commands run the money calls on the ledger; Balances reads a
	// player's balance.
	Commands *commands.Handler
	Balances commands.Balances
	// Logger records the faults answered RS_ERROR_UNKNOWN.
	Logger *slog.Logger
}

// Handlers answer the protocol's calls. Every answer is HTTP 200 with the
// document's status in its body.
type Handlers struct {
	deps Deps

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

// New returns the protocol's handlers over deps.
func New(deps Deps) *Handlers {
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	return &Handlers{deps: deps, keys: map[string]parsedKey{}}
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

// call is what every call shares once authenticated and decoded.
type call struct {
	prov gateway.Provider
	sess gateway.GameSession
	cur  domain.Currency
}

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
	if h.deps.Catalog == nil || h.deps.Sessions == nil || h.deps.Commands == nil || h.deps.Balances == nil {
		// A process built without the ledger's stores: a fault of ours,
		// answered as the document answers every fault.
		return raw, gateway.Provider{}, errors.New("caleta wallet: the server has no ledger stores")
	}
	ctx := c.Request().Context()
	prov, err := h.deps.Catalog.Provider(ctx, c.Param("provider"))
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return raw, prov, refuse(StatusInvalidSignature, "unknown provider")
	case err != nil:
		return raw, prov, fmt.Errorf("look up provider of a caleta call: %w", err)
	case !prov.Enabled:
		return raw, prov, refuse(StatusInvalidSignature, "provider disabled")
	case prov.Protocol() != gateway.WalletProtocolCaleta:
		return raw, prov, refuse(StatusInvalidSignature, "provider is on the "+prov.Protocol()+" wallet protocol")
	}
	key, err := h.publicKey(prov)
	if err != nil {
		return raw, prov, err
	}
	if err := gateway.VerifyRSASHA256(key, raw, c.Request().Header.Get(HeaderSignature)); err != nil {
		return raw, prov, refuse(StatusInvalidSignature, err.Error())
	}
	// As on every other JSON body (issue 17, item 11): a proxy or WAF that
	// trusts the declared type must see the body we read.
	if err := wire.CheckJSONContentType(c); err != nil {
		return raw, prov, refuse(StatusWrongSyntax, err.Error())
	}
	return raw, prov, nil
}

// session resolves the document's token, our game session id, which must
// be a session of prov.
func (h *Handlers) session(ctx context.Context, prov gateway.Provider, token string) (call, error) {
	sess, err := h.deps.Sessions.Session(ctx, token)
	if errors.Is(err, domain.ErrNotFound) || (err == nil && sess.ProviderID != prov.ID) {
		return call{}, refuse(StatusInvalidToken, "unknown token")
	} else if err != nil {
		return call{}, fmt.Errorf("look up session of a caleta call: %w", err)
	}
	cur, err := domain.ParseCurrency(sess.Currency)
	if err != nil {
		return call{}, fmt.Errorf("currency of session %s: %w", sess.ID, err)
	}
	if err := checkCurrency(cur); err != nil {
		return call{}, err
	}
	return call{prov: prov, sess: sess, cur: cur}, nil
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

// game is the game the ledger books a call under: the session's, or the
// game game_code names, which must be a game of the session's provider.
// game_code is the provider's code of the game (games.provider_game_code)
// or our game id.
func (h *Handlers) game(ctx context.Context, cl call, code string) (string, error) {
	g, err := gateway.SessionGame(ctx, h.deps.Catalog, cl.sess, code)
	switch {
	case errors.Is(err, gateway.ErrNotSessionsGame):
		return "", refuse(StatusInvalidGame, "game_code is not a game of the session's provider")
	case err != nil:
		return "", fmt.Errorf("game of a caleta call: %w", err)
	}
	return g, nil
}

// gameTx is a call as the ledger books it.
func (cl call) gameTx(game, txID, round string, closed bool) domain.GameTx {
	return domain.GameTx{Client: cl.sess.ClientID, Player: cl.sess.PlayerID, Provider: cl.sess.ProviderID,
		Game: game, Round: round, Session: cl.sess.ID, ExternalTxID: txID, Currency: cl.cur, RoundClosed: closed}
}

// ok answers RS_OK with the player's balance after the call.
func (h *Handlers) ok(c echo.Context, cl call, requestUUID string, balance domain.Money) error {
	units, err := toUnits(balance)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, answer{User: cl.sess.PlayerID, Status: StatusOK, RequestUUID: requestUUID,
		Currency: cl.cur.Code(), Balance: &units})
}

// free reports whether a bet or win is a free bet's: is_free, or the
// campaign and reward ids the document sends "during Free Bets" (either
// one makes it free: booking a campaign's call as real money would take
// the player's money for a bet the campaign pays).
func (f moneyFields) free() bool { return f.isFree || f.campaign != "" || f.reward != "" }

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
	if _, err := h.game(ctx, cl, b.GameCode); err != nil {
		return raw, err
	}
	st, err := h.deps.Balances.Account(ctx, domain.PlayerWallet(cl.sess.ClientID, cl.sess.PlayerID, cl.cur))
	if err != nil {
		return raw, fmt.Errorf("balance of a caleta call: %w", err)
	}
	return raw, h.ok(c, cl, b.RequestUUID, domain.FromMinor(st.Balance, cl.cur))
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
	if err := required([2]string{"token", b.Token}, [2]string{"request_uuid", b.RequestUUID},
		[2]string{"transaction_uuid", b.TransactionUUID}, [2]string{"round", b.Round},
		[2]string{"currency", b.Currency}); err != nil {
		return raw, err
	}
	ctx := c.Request().Context()
	f := moneyFields{token: b.Token, currency: b.Currency, amount: b.Amount, gameCode: b.GameCode, isFree: b.IsFree,
		campaign: b.CampaignUUID, reward: b.RewardUUID}
	cl, amount, game, err := h.moneyCall(ctx, prov, f)
	if err != nil {
		return raw, err
	}
	g := cl.gameTx(game, b.TransactionUUID, b.Round, b.RoundClosed)
	if f.free() {
		// A free bet: the campaign pays the stake, the player's wallet
		// gives nothing. It is booked as a promo bet of zero under the
		// campaign's ids (amount is the bet's nominal value).
		g.Promo, g.Campaign, g.Reward = true, b.CampaignUUID, b.RewardUUID
		amount = domain.Zero(cl.cur)
	}
	res, err := h.deps.Commands.PlaceBetInSession(ctx, g, amount, cl.sess.ExpiresAt)
	if err != nil {
		return raw, err
	}
	return raw, h.ok(c, cl, b.RequestUUID, res.BalanceAfter)
}

// moneyFields are what a bet and a win both carry.
type moneyFields struct {
	token, currency, gameCode string
	amount                    *int64
	isFree                    bool
	campaign, reward          string
}

// moneyCall checks what a bet and a win share, in the document's order:
// the session of the token, its currency, the amount at the currency's
// precision, the game.
func (h *Handlers) moneyCall(ctx context.Context, prov gateway.Provider, f moneyFields) (call, domain.Money, string, error) {
	cl, err := h.session(ctx, prov, f.token)
	if err != nil {
		return call{}, domain.Money{}, "", err
	}
	if f.currency != cl.sess.Currency {
		return call{}, domain.Money{}, "", refuse(StatusWrongCurrency, "currency is not the session's")
	}
	amount, err := toMoney("amount", f.amount, cl.cur)
	if err != nil {
		return call{}, domain.Money{}, "", err
	}
	game, err := h.game(ctx, cl, f.gameCode)
	if err != nil {
		return call{}, domain.Money{}, "", err
	}
	return cl, amount, game, nil
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
	if err := required([2]string{"token", b.Token}, [2]string{"request_uuid", b.RequestUUID},
		[2]string{"transaction_uuid", b.TransactionUUID}, [2]string{"round", b.Round},
		[2]string{"reference_transaction_uuid", b.ReferenceTransactionUUID}, [2]string{"currency", b.Currency}); err != nil {
		return raw, err
	}
	ctx := c.Request().Context()
	f := moneyFields{token: b.Token, currency: b.Currency, amount: b.Amount, gameCode: b.GameCode, isFree: b.IsFree,
		campaign: b.CampaignUUID, reward: b.RewardUUID}
	cl, amount, game, err := h.moneyCall(ctx, prov, f)
	if err != nil {
		return raw, err
	}
	g := cl.gameTx(game, b.TransactionUUID, b.Round, b.RoundClosed)
	if f.free() {
		// A free bet's win is credited in full, as promo money.
		g.Promo, g.Campaign, g.Reward = true, b.CampaignUUID, b.RewardUUID
	}
	if g.Jackpot, err = jackpotPart(b.JackpotWin, amount); err != nil {
		return raw, err
	}
	res, err := h.deps.Commands.CreditWin(ctx, g, amount, b.ReferenceTransactionUUID)
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
	cl, err := h.session(ctx, prov, b.Token)
	if err != nil {
		return raw, err
	}
	if b.User != "" && b.User != cl.sess.PlayerID {
		return raw, refuse(StatusInvalidToken, "user is not the session's player")
	}
	game, err := h.game(ctx, cl, b.GameCode)
	if err != nil {
		return raw, err
	}
	res, err := h.deps.Commands.Rollback(ctx, cl.gameTx(game, b.TransactionUUID, b.Round, b.RoundClosed),
		b.ReferenceTransactionUUID)
	if err != nil {
		return raw, err
	}
	return raw, h.ok(c, cl, b.RequestUUID, res.BalanceAfter)
}
