// Package providerwallet is the provider wallet protocol (/provider/v1/wallet,
// docs/provider-wallet.md): what game providers call during play to read a
// player's balance and to bet, win and roll back in a game session.
package providerwallet

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
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

// Deps are the stores and the ledger the protocol uses.
type Deps struct {
	// Catalog knows the providers and their secrets; Sessions the game
	// sessions the calls are made in.
	Catalog  gateway.Catalog
	Sessions gateway.Sessions
	// Commands run the money calls on the ledger; Balances reads a
	// player's balance.
	Commands *commands.Handler
	Balances commands.Balances
	// Clock is the server's time, which a v2 signature's t must be near
	// (gateway.ProviderSignatureWindow).
	Clock commands.Clock
	// Records reads the ledger's record of a transaction for the status
	// query; without it that call answers 503.
	Records TxRecords
	// Rounds reads a provider's rounds of a day for the daily round
	// export; without it that route answers 503.
	Rounds RoundExport
}

// TxRecords reads idempotency records by key (domain.GameTxKey).
type TxRecords interface {
	TxRecord(ctx context.Context, key string) (domain.TxRecord, bool, error)
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
// ledger after the idempotency check (PlaceBetInSession), so a retried bet
// still gets its original answer. See docs/provider-wallet.md.
func (h *Handlers) providerCall(c echo.Context) (walletCall, gateway.GameSession, domain.Currency, error) {
	return h.providerCallOf(c, false)
}

// providerCallOf is providerCall; anyProtocol lets a provider on another
// wallet protocol in too (the status query: each provider may ask it,
// signed with its secret, whatever protocol its money calls speak).
func (h *Handlers) providerCallOf(c echo.Context, anyProtocol bool) (walletCall, gateway.GameSession, domain.Currency, error) {
	var call walletCall
	raw, err := wire.ReadBody(c)
	if err != nil {
		return call, gateway.GameSession{}, domain.Currency{}, err
	}
	ctx := c.Request().Context()
	prov, err := h.caller(c)
	if err != nil {
		return call, gateway.GameSession{}, domain.Currency{}, err
	}
	if prov.Protocol() != gateway.WalletProtocolPitboss && !anyProtocol {
		// A provider speaks one protocol (docs/providers-and-games.md):
		// its secret does not open this one.
		return call, gateway.GameSession{}, domain.Currency{}, wire.NewError(http.StatusUnauthorized, wire.CodeUnauthorized,
			"provider is on the "+prov.Protocol()+" wallet protocol; it calls /provider/"+prov.Protocol()+"/"+prov.ID+"/wallet")
	}
	if err := h.checkSignature(c, prov, raw); err != nil {
		return call, gateway.GameSession{}, domain.Currency{}, err
	}
	// As on every other JSON body (issue 17, item 11): a proxy or WAF
	// that trusts the declared type must see the body we read.
	if err := wire.CheckJSONContentType(c); err != nil {
		return call, gateway.GameSession{}, domain.Currency{}, err
	}
	if err := wire.DecodeJSON(raw, &call); err != nil {
		return call, gateway.GameSession{}, domain.Currency{}, err
	}
	if err := wire.RequireField("session_id", call.SessionID); err != nil {
		return call, gateway.GameSession{}, domain.Currency{}, err
	}
	sess, err := h.deps.Sessions.Session(ctx, call.SessionID)
	if errors.Is(err, domain.ErrNotFound) || (err == nil && sess.ProviderID != prov.ID) {
		return call, gateway.GameSession{}, domain.Currency{}, wire.NewError(http.StatusNotFound, wire.CodeNotFound, "unknown session")
	} else if err != nil {
		return call, gateway.GameSession{}, domain.Currency{}, err
	}
	if call.PlayerID != "" && call.PlayerID != sess.PlayerID {
		return call, gateway.GameSession{}, domain.Currency{}, wire.NewError(http.StatusConflict, wire.CodePlayerMismatch, "player_id does not match the session")
	}
	if call.Currency != "" && call.Currency != sess.Currency {
		return call, gateway.GameSession{}, domain.Currency{}, wire.NewError(http.StatusBadRequest, wire.CodeCurrencyMismatch, "currency does not match the session")
	}
	cur, err := domain.ParseCurrency(sess.Currency)
	return call, sess, cur, err
}

// caller is the enabled provider X-Provider-Id names (its signature not
// yet checked); 401 for a missing header or an unknown or disabled one.
func (h *Handlers) caller(c echo.Context) (gateway.Provider, error) {
	pid := c.Request().Header.Get(headerProviderID)
	if pid == "" {
		return gateway.Provider{}, wire.NewError(http.StatusUnauthorized, wire.CodeUnauthorized, "missing "+headerProviderID+" header")
	}
	prov, err := h.deps.Catalog.Provider(c.Request().Context(), pid)
	if errors.Is(err, domain.ErrNotFound) || (err == nil && !prov.Enabled) {
		return gateway.Provider{}, wire.NewError(http.StatusUnauthorized, wire.CodeUnauthorized, "unknown provider")
	}
	return prov, err
}

func (call walletCall) game(sess gateway.GameSession, cur domain.Currency) domain.GameTx {
	game := call.GameID
	if game == "" {
		game = sess.GameID
	}
	return domain.GameTx{Client: sess.ClientID, Player: sess.PlayerID, Provider: sess.ProviderID,
		Game: game, Round: call.RoundID, Session: sess.ID, ExternalTxID: call.ExternalTxID,
		Currency: cur, RoundClosed: call.RoundClosed, Promo: call.Promo}
}

// gameTx is the call as the ledger books it, under the session's game or
// under the game_id it names, which must be a game of the session's
// provider in the catalog: the money and its GGR are booked under that
// game. The session's own game was checked at launch and is not read again,
// so the usual call (no game_id) costs no lookup. Whether a game is enabled
// is not checked: disabling a game stops its launches, while the sessions
// already open play on and settle (docs/provider-wallet.md).
func (h *Handlers) gameTx(ctx context.Context, call walletCall, sess gateway.GameSession, cur domain.Currency) (domain.GameTx, error) {
	g := call.game(sess, cur)
	if call.Jackpot != "" {
		j, err := domain.ParseMoney(string(call.Jackpot), cur)
		if err != nil {
			return domain.GameTx{}, fmt.Errorf("jackpot: %w", err)
		}
		g.Jackpot = j
	}
	if g.Game == sess.GameID {
		return g, nil
	}
	game, err := h.deps.Catalog.Game(ctx, g.Game)
	if errors.Is(err, domain.ErrNotFound) || (err == nil && game.ProviderID != sess.ProviderID) {
		return domain.GameTx{}, &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest,
			Message: "game_id is not a game of the session's provider in the catalog (leave it out for the session's game)",
			Details: map[string]any{"field": "game_id"}}
	} else if err != nil {
		return domain.GameTx{}, fmt.Errorf("look up game of a wallet call: %w", err)
	}
	return g, nil
}

func answer(c echo.Context, call walletCall, r commands.Result) error {
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
	_, sess, cur, err := h.providerCall(c)
	if err != nil {
		return err
	}
	st, err := h.deps.Balances.Account(c.Request().Context(), domain.PlayerWallet(sess.ClientID, sess.PlayerID, cur))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, walletAnswer{Status: "OK", Balance: wire.Number(domain.FromMinor(st.Balance, cur).String()),
		Currency: cur.Code()})
}

// moneyCall is a provider call that moves an amount: bet or win.
type moneyCall func(ctx context.Context, call walletCall, sess gateway.GameSession, g domain.GameTx, amount domain.Money) (commands.Result, error)

// providerMoneyCall authenticates, validates and runs a bet or a win.
func (h *Handlers) providerMoneyCall(c echo.Context, run moneyCall) error {
	call, sess, cur, err := h.providerCall(c)
	if err != nil {
		return err
	}
	if err := wire.RequireField("transaction_id", call.ExternalTxID); err != nil {
		return err
	}
	amount, err := walletAmount(call, cur)
	if err != nil {
		return err
	}
	g, err := h.gameTx(c.Request().Context(), call, sess, cur)
	if err != nil {
		return err
	}
	res, err := run(c.Request().Context(), call, sess, g, amount)
	if err != nil {
		return err
	}
	return answer(c, call, res)
}

// Bet answers POST /provider/v1/wallet/bet: a stake debited at once, while
// the session takes bets.
func (h *Handlers) Bet(c echo.Context) error {
	return h.providerMoneyCall(c, func(ctx context.Context, _ walletCall, sess gateway.GameSession, g domain.GameTx, amount domain.Money) (commands.Result, error) {
		return h.deps.Commands.PlaceBetInSession(ctx, g, amount, sess.ExpiresAt)
	})
}

// Win answers POST /provider/v1/wallet/win: a win credited at once.
func (h *Handlers) Win(c echo.Context) error {
	return h.providerMoneyCall(c, func(ctx context.Context, call walletCall, _ gateway.GameSession, g domain.GameTx, amount domain.Money) (commands.Result, error) {
		return h.deps.Commands.CreditWin(ctx, g, amount, call.ReferenceTransactionID)
	})
}

// Rollback answers POST /provider/v1/wallet/rollback: the call of
// reference_transaction_id undone.
func (h *Handlers) Rollback(c echo.Context) error {
	call, sess, cur, err := h.providerCall(c)
	if err != nil {
		return err
	}
	for _, f := range []struct{ n, v string }{{"transaction_id", call.ExternalTxID},
		{"reference_transaction_id", call.ReferenceTransactionID}} {
		if err := wire.RequireField(f.n, f.v); err != nil {
			return err
		}
	}
	g, err := h.gameTx(c.Request().Context(), call, sess, cur)
	if err != nil {
		return err
	}
	res, err := h.deps.Commands.Rollback(c.Request().Context(), g, call.ReferenceTransactionID)
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
	if h.deps.Records == nil {
		return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "the transaction status query is not configured")
	}
	call, sess, _, err := h.providerCallOf(c, true)
	if err != nil {
		return err
	}
	if err := wire.RequireField("transaction_id", call.ExternalTxID); err != nil {
		return err
	}
	if err := wire.CheckID("transaction_id", call.ExternalTxID); err != nil {
		return err
	}
	rec, found, err := h.deps.Records.TxRecord(c.Request().Context(),
		domain.GameTxKey(sess.ClientID, sess.ProviderID, call.ExternalTxID))
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
