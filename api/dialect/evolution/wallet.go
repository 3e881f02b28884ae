// Package evolution is Evolution's One Wallet (docs/protocols/evolution.md):
// what a provider on the evolution wallet protocol calls at
// /provider/evolution/{provider}/wallet/{check,balance,debit,credit,cancel,promo_payout}.
// It is a dialect of the wallet core (package wallet): it authenticates
// (the provider's shared secret as the authToken query parameter, compared
// in constant time), decodes the protocol's bodies and decimal amounts,
// and answers the core's verdict with the protocol's status (status.go).
package evolution

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/wallet"
)

// QueryAuthToken is the query parameter carrying the provider's secret.
const QueryAuthToken = "authToken"

// Handlers answer the protocol's calls.
type Handlers struct{ deps wire.DialectDeps }

// New returns the protocol's handlers over deps: the core (a session id is
// the protocol's sid) and the logger of the faults answered UNKNOWN_ERROR.
func New(deps wire.DialectDeps) *Handlers { return &Handlers{deps: deps.WithDefaults()} }

// call is what every call shares once authenticated and decoded: its
// session.
type call = wallet.Session

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
		a.Bonus = wire.Number(domain.Zero(cl.Cur).String())
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
	return h.deps.Core.Balance(ctx, cl)
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
	prov, err := h.deps.Core.Caller(c.Request().Context(), c.Param("provider"), gateway.WalletProtocolEvolution)
	if err != nil {
		return raw, err
	}
	if !gateway.SameSecret(c.QueryParam(QueryAuthToken), prov.Secret) {
		return raw, wallet.Refuse(wallet.Unauthenticated, "wrong authToken")
	}
	// As on every other JSON body: a proxy or WAF that trusts the declared
	// type must see the body we read.
	if err := wire.CheckJSONContentType(c); err != nil {
		return raw, &wallet.Refusal{Verdict: wallet.InvalidRequest, Reason: err.Error(), Err: err}
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
// the provider the path names, played by userId. A wrong userId is refused
// with the session returned: the sid is good, so the balance may be told.
func (h *Handlers) session(ctx context.Context, provider string, b base) (*call, error) {
	if err := required([2]string{"sid", b.SID}, [2]string{"userId", b.UserID}); err != nil {
		return nil, err
	}
	cl, err := h.deps.Core.Session(ctx, gateway.Provider{ID: provider, WalletProtocol: gateway.WalletProtocolEvolution}, b.SID,
		b.UserID)
	if v, _ := wallet.VerdictOf(err); err != nil && v != wallet.WrongPlayer {
		return nil, err
	}
	return &cl, err
}

// game is the game the ledger books a call under: the session's, or the
// game the table id names, which must be a game of the session's provider
// (wallet.Core.Game: a live session is a lobby, the player moves between
// tables, and each table's money is that table's GGR). The table id is a
// game's provider code (games.provider_game_code) or our game id; a table
// the catalog does not list is INVALID_PARAMETER
// (docs/protocols/evolution.md#tables-and-games).
func (h *Handlers) game(ctx context.Context, cl *call, tableID string) (string, error) {
	return h.deps.Core.Game(ctx, *cl, tableID)
}

// Base is the protocol's base path, one per provider, as Caleta's: the
// provider is known before the body is read.
const Base = "/provider/evolution/:provider/wallet"

// Calls are the protocol's calls (POST), by their path under Base. Every
// answer is the protocol's (200, or 401 INVALID_TOKEN_ID): no error body
// of ours is sent.
func (h *Handlers) Calls() map[string]echo.HandlerFunc {
	return map[string]echo.HandlerFunc{"/check": h.Check, "/balance": h.Balance, "/debit": h.Debit,
		"/credit": h.Credit, "/cancel": h.Cancel, "/promo_payout": h.PromoPayout}
}
