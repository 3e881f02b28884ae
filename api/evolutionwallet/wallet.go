// Package evolutionwallet is Evolution's One Wallet (docs/protocols/evolution.md):
// what a provider on the evolution wallet protocol calls at
// /provider/evolution/{provider}/wallet/{check,balance,debit,credit,cancel,promo_payout}.
// It is a dialect only: it authenticates (the provider's shared secret as
// the authToken query parameter, compared in constant time), decodes the
// protocol's bodies and decimal amounts, and answers its statuses; every
// rule of money is the ledger's (package commands), the same as for our own
// protocol (package providerwallet) and Caleta's (package caletawallet).
package evolutionwallet

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// QueryAuthToken is the query parameter carrying the provider's secret.
const QueryAuthToken = "authToken"

// Deps are the stores and the ledger the protocol uses.
type Deps struct {
	// Catalog knows the providers (their protocol and secret) and the
	// games; Sessions the game sessions, whose id is the protocol's sid.
	Catalog  gateway.Catalog
	Sessions gateway.Sessions
	// Commands run the money calls on the ledger; Balances reads a
	// player's balance.
	Commands *commands.Handler
	Balances commands.Balances
	// Logger records the faults answered UNKNOWN_ERROR.
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
	sess gateway.GameSession
	cur  domain.Currency
}

// wallet is the player's wallet of the session.
func (cl call) wallet() domain.AccountID {
	return domain.PlayerWallet(cl.sess.ClientID, cl.sess.PlayerID, cl.cur)
}

// gameTx is a call as the ledger books it.
func (cl call) gameTx(game, txID, round string) domain.GameTx {
	return domain.GameTx{Client: cl.sess.ClientID, Player: cl.sess.PlayerID, Provider: cl.sess.ProviderID,
		Game: game, Round: round, Session: cl.sess.ID, ExternalTxID: txID, Currency: cl.cur}
}

// reply answers a call: OK with balance, or err's status (classify, with
// conflict for a reused id). A refusal of a call whose session is known
// (cl != nil) carries the player's balance now.
func (h *Handlers) reply(c echo.Context, raw []byte, cl *call, balance domain.Money, conflict string, err error) error {
	a := answer{Status: StatusOK, Balance: "0", Bonus: "0", UUID: requestUUID(raw)}
	if err != nil {
		a.Status = h.status(c, err, conflict)
		if cl != nil {
			balance, err = h.balanceOf(c.Request().Context(), *cl)
			if err != nil {
				h.logFault(c, err)
				cl = nil
			}
		}
	}
	if cl != nil {
		a.Balance = wire.Number(balance.String())
		a.Bonus = wire.Number(domain.Zero(cl.cur).String())
	}
	return c.JSON(httpStatus(a.Status), a)
}

// status is err's status (classify); an unknown error, a fault of ours,
// is logged.
func (h *Handlers) status(c echo.Context, err error, conflict string) string {
	status, known := classify(err, conflict)
	if !known {
		h.logFault(c, err)
	}
	return status
}

func (h *Handlers) logFault(c echo.Context, err error) {
	wire.LogFault(c, h.deps.Logger, "evolution wallet call failed", err)
}

// balanceOf is the session player's balance in the session's currency.
func (h *Handlers) balanceOf(ctx context.Context, cl call) (domain.Money, error) {
	st, err := h.deps.Balances.Account(ctx, cl.wallet())
	if err != nil {
		return domain.Money{}, fmt.Errorf("balance of an evolution call: %w", err)
	}
	return domain.FromMinor(st.Balance, cl.cur), nil
}

// tokenMatches compares the authToken with the provider's secret in
// constant time: both are hashed first, so neither the length nor the
// content of the secret shows in the time taken. An empty secret matches
// nothing.
func tokenMatches(token, secret string) bool {
	if secret == "" {
		return false
	}
	a, b := sha256.Sum256([]byte(token)), sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// authenticate reads the raw body and checks the authToken is the secret
// of the provider the path names, which must be enabled and on the
// evolution protocol. Any other provider is refused as a wrong token is
// (INVALID_TOKEN_ID), so the answer tells a caller nothing about which
// providers exist.
func (h *Handlers) authenticate(c echo.Context) ([]byte, error) {
	raw, err := wire.ReadBody(c)
	if err != nil {
		return nil, err
	}
	if h.deps.Catalog == nil || h.deps.Sessions == nil || h.deps.Commands == nil || h.deps.Balances == nil {
		// A process built without the ledger's stores: a fault of ours.
		return raw, errors.New("evolution wallet: the server has no ledger stores")
	}
	prov, err := h.deps.Catalog.Provider(c.Request().Context(), c.Param("provider"))
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return raw, refuse(StatusInvalidTokenID, "unknown provider")
	case err != nil:
		return raw, fmt.Errorf("look up provider of an evolution call: %w", err)
	case !prov.Enabled:
		return raw, refuse(StatusInvalidTokenID, "provider disabled")
	case prov.Protocol() != gateway.WalletProtocolEvolution:
		return raw, refuse(StatusInvalidTokenID, "provider is on the "+prov.Protocol()+" wallet protocol")
	case !tokenMatches(c.QueryParam(QueryAuthToken), prov.Secret):
		return raw, refuse(StatusInvalidTokenID, "wrong authToken")
	}
	// As on every other JSON body: a proxy or WAF that trusts the declared
	// type must see the body we read.
	if err := wire.CheckJSONContentType(c); err != nil {
		return raw, refuse(StatusInvalidParameter, err.Error())
	}
	return raw, nil
}

// decode authenticates the call and strictly decodes its body into v
// (wire.DecodeJSON: an unknown field is refused, never ignored).
func (h *Handlers) decode(c echo.Context, v any) ([]byte, error) {
	raw, err := h.authenticate(c)
	if err != nil {
		return raw, err
	}
	return raw, wire.DecodeJSON(raw, v)
}

// session resolves sid, our game session id, which must be a session of
// the provider the path names, played by userId.
func (h *Handlers) session(ctx context.Context, provider string, b base) (*call, error) {
	if err := required([2]string{"sid", b.SID}, [2]string{"userId", b.UserID}); err != nil {
		return nil, err
	}
	sess, err := h.deps.Sessions.Session(ctx, b.SID)
	if errors.Is(err, domain.ErrNotFound) || (err == nil && sess.ProviderID != provider) {
		return nil, refuse(StatusInvalidSID, "unknown sid")
	} else if err != nil {
		return nil, fmt.Errorf("look up session of an evolution call: %w", err)
	}
	cur, err := domain.ParseCurrency(sess.Currency)
	if err != nil {
		return nil, fmt.Errorf("currency of session %s: %w", sess.ID, err)
	}
	cl := &call{sess: sess, cur: cur}
	if b.UserID != sess.PlayerID {
		// The sid is good, so the balance may be told: the call is
		// refused for its parameter.
		return cl, refuse(StatusInvalidParameter, "userId is not the session's player")
	}
	return cl, nil
}

// sameCurrency refuses a call in another currency than its session's.
func sameCurrency(cl *call, currency string) error {
	if currency != cl.sess.Currency {
		return refuse(StatusInvalidParameter, "currency is not the session's")
	}
	return nil
}

// game is the game the ledger books a call under: the session's, or the
// game the table id names, which must be a game of the session's provider
// (as in our protocol and Caleta's: a live session is a lobby, the player
// moves between tables, and each table's money is that table's GGR). The
// table id is the session game's provider code (games.provider_game_code)
// or our game id; a table the catalog does not list is INVALID_PARAMETER
// (docs/protocols/evolution.md#tables-and-games).
func (h *Handlers) game(ctx context.Context, cl *call, tableID string) (string, error) {
	g, err := gateway.SessionGame(ctx, h.deps.Catalog, cl.sess, tableID)
	switch {
	case errors.Is(err, gateway.ErrNotSessionsGame):
		return "", refuse(StatusInvalidParameter, "game.details.table.id is not a game of the session's provider")
	case err != nil:
		return "", fmt.Errorf("game of an evolution call: %w", err)
	}
	return g, nil
}
