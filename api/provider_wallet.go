package api

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// Provider wallet protocol: what game providers call during play. Each call
// carries X-Provider-Id and X-Signature: the lowercase hex HMAC-SHA256 of
// the raw body keyed with the provider's secret. Calls are idempotent by the
// provider's transaction_id; each debit or credit is applied at once and
// answered with the new balance.
const (
	headerProviderID = "X-Provider-Id"
	headerSignature  = "X-Signature"
)

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
}

type walletAnswer struct {
	Status       string `json:"status"`
	Balance      rawNum `json:"balance"`
	Currency     string `json:"currency"`
	EventID      string `json:"transaction_id,omitempty"`
	ExternalTxID string `json:"external_transaction_id,omitempty"`
	RoundID      string `json:"round_id,omitempty"`
	RoundClosed  bool   `json:"round_closed,omitempty"`
	Replayed     bool   `json:"replayed,omitempty"`
}

// providerCall authenticates the provider, decodes the call and resolves
// its session. It does not look at the session's expiry: wins and
// rollbacks are accepted after it, and a bet's expiry is decided by the
// ledger after the idempotency check (PlaceBetInSession), so a retried bet
// still gets its original answer. See docs/provider-wallet.md.
func (s *Server) providerCall(c echo.Context) (walletCall, gateway.GameSession, domain.Currency, error) {
	var call walletCall
	raw, err := readBody(c)
	if err != nil {
		return call, gateway.GameSession{}, domain.Currency{}, err
	}
	ctx := c.Request().Context()
	pid := c.Request().Header.Get(headerProviderID)
	if pid == "" {
		return call, gateway.GameSession{}, domain.Currency{}, apiError(http.StatusUnauthorized, CodeUnauthorized,
			"missing "+headerProviderID+" header")
	}
	prov, err := s.deps.Catalog.Provider(ctx, pid)
	if errors.Is(err, domain.ErrNotFound) || (err == nil && !prov.Enabled) {
		return call, gateway.GameSession{}, domain.Currency{}, apiError(http.StatusUnauthorized, CodeUnauthorized, "unknown provider")
	} else if err != nil {
		return call, gateway.GameSession{}, domain.Currency{}, err
	}
	if !validSignature(prov.Secret, raw, c.Request().Header.Get(headerSignature)) {
		return call, gateway.GameSession{}, domain.Currency{}, apiError(http.StatusUnauthorized, CodeInvalidSignature,
			"X-Signature does not match the body (HMAC-SHA256 with the provider secret, lowercase hex)")
	}
	if err := decodeJSON(raw, &call); err != nil {
		return call, gateway.GameSession{}, domain.Currency{}, err
	}
	if err := requireField("session_id", call.SessionID); err != nil {
		return call, gateway.GameSession{}, domain.Currency{}, err
	}
	sess, err := s.deps.Sessions.Session(ctx, call.SessionID)
	if errors.Is(err, domain.ErrNotFound) || (err == nil && sess.ProviderID != prov.ID) {
		return call, gateway.GameSession{}, domain.Currency{}, apiError(http.StatusNotFound, CodeNotFound, "unknown session")
	} else if err != nil {
		return call, gateway.GameSession{}, domain.Currency{}, err
	}
	if call.PlayerID != "" && call.PlayerID != sess.PlayerID {
		return call, gateway.GameSession{}, domain.Currency{}, apiError(http.StatusConflict, CodePlayerMismatch, "player_id does not match the session")
	}
	if call.Currency != "" && call.Currency != sess.Currency {
		return call, gateway.GameSession{}, domain.Currency{}, apiError(http.StatusBadRequest, CodeCurrencyMismatch, "currency does not match the session")
	}
	cur, err := domain.ParseCurrency(sess.Currency)
	return call, sess, cur, err
}

func validSignature(secret string, body []byte, sig string) bool {
	want, err := hex.DecodeString(sig)
	if err != nil || len(want) != sha256.Size {
		return false
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hmac.Equal(m.Sum(nil), want)
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

func answer(c echo.Context, call walletCall, r commands.Result) error {
	return c.JSON(http.StatusOK, walletAnswer{Status: "OK", Balance: rawNum(r.BalanceAfter.String()),
		Currency: r.BalanceAfter.Currency().Code(), EventID: r.EventID, ExternalTxID: r.ExternalTxID,
		RoundID: call.RoundID, RoundClosed: call.RoundClosed,
		Replayed: r.Replayed})
}

// walletAmount parses the call's amount, which must be present.
func walletAmount(call walletCall, cur domain.Currency) (domain.Money, error) {
	if err := requireField("amount", string(call.Amount)); err != nil {
		return domain.Money{}, err
	}
	return domain.ParseMoney(string(call.Amount), cur)
}

func (s *Server) providerBalance(c echo.Context) error {
	_, sess, cur, err := s.providerCall(c)
	if err != nil {
		return err
	}
	st, err := s.deps.Balances.Account(c.Request().Context(), domain.PlayerWallet(sess.ClientID, sess.PlayerID, cur))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, walletAnswer{Status: "OK", Balance: rawNum(domain.FromMinor(st.Balance, cur).String()),
		Currency: cur.Code()})
}

// moneyCall is a provider call that moves an amount: bet or win.
type moneyCall func(ctx context.Context, call walletCall, sess gateway.GameSession, g domain.GameTx, amount domain.Money) (commands.Result, error)

// providerMoneyCall authenticates, validates and runs a bet or a win.
func (s *Server) providerMoneyCall(c echo.Context, run moneyCall) error {
	call, sess, cur, err := s.providerCall(c)
	if err != nil {
		return err
	}
	if err := requireField("transaction_id", call.ExternalTxID); err != nil {
		return err
	}
	amount, err := walletAmount(call, cur)
	if err != nil {
		return err
	}
	res, err := run(c.Request().Context(), call, sess, call.game(sess, cur), amount)
	if err != nil {
		return err
	}
	return answer(c, call, res)
}

func (s *Server) providerBet(c echo.Context) error {
	return s.providerMoneyCall(c, func(ctx context.Context, _ walletCall, sess gateway.GameSession, g domain.GameTx, amount domain.Money) (commands.Result, error) {
		return s.deps.Commands.PlaceBetInSession(ctx, g, amount, sess.ExpiresAt)
	})
}

func (s *Server) providerWin(c echo.Context) error {
	return s.providerMoneyCall(c, func(ctx context.Context, call walletCall, _ gateway.GameSession, g domain.GameTx, amount domain.Money) (commands.Result, error) {
		return s.deps.Commands.CreditWin(ctx, g, amount, call.ReferenceTransactionID)
	})
}

func (s *Server) providerRollback(c echo.Context) error {
	call, sess, cur, err := s.providerCall(c)
	if err != nil {
		return err
	}
	for _, f := range []struct{ n, v string }{{"transaction_id", call.ExternalTxID},
		{"reference_transaction_id", call.ReferenceTransactionID}} {
		if err := requireField(f.n, f.v); err != nil {
			return err
		}
	}
	res, err := s.deps.Commands.Rollback(c.Request().Context(), call.game(sess, cur), call.ReferenceTransactionID)
	if err != nil {
		return err
	}
	return answer(c, call, res)
}
