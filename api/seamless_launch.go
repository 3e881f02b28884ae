package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/wallet"
)

// operatorOf is the client's own wallet, nil for a ledger client (or a
// server without seamless support).
func (s *Server) operatorOf(ctx context.Context, clientID string) (wallet.OperatorWallet, error) {
	if s.deps.Operators == nil {
		return nil, nil
	}
	op, err := s.deps.Operators.Operator(ctx, clientID)
	if err != nil {
		return nil, fmt.Errorf("wallet of client %s: %w", clientID, err)
	}
	return op, nil
}

// seamlessSession prepares a seamless client's session at its launch
// (docs/seamless-wallet.md#launch): the launch's session_token is the
// operator's own player token, kept with the session and sent with every
// call to its wallet; where the operator's protocol has a session call,
// the operator is asked, and its player and currency must be the
// launch's. A ledger client's session is left as it is.
func (s *Server) seamlessSession(ctx context.Context, sess *gateway.GameSession, token string) error {
	op, err := s.operatorOf(ctx, sess.ClientID)
	if err != nil || op == nil {
		return err
	}
	cur, err := domain.ParseCurrency(sess.Currency)
	if err != nil {
		return err
	}
	sess.OperatorToken = token
	os, err := op.Session(ctx, wallet.OperatorPlayer{Player: sess.PlayerID, Token: token, Provider: sess.ProviderID,
		Currency: cur, CorrelationID: sess.LaunchTxID})
	var refused *wallet.OperatorRefusal
	switch {
	case errors.Is(err, wallet.ErrNoSessionCall):
		return nil
	case token == "":
		return &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest,
			Message: "a seamless client's launch carries its player's session_token, which its wallet checks",
			Details: map[string]any{"field": "session_token"}}
	case errors.As(err, &refused):
		return &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest,
			Message: "the client's wallet refused the session_token: " + refused.Code,
			Details: map[string]any{"field": "session_token", "operator_code": refused.Code}, Err: err}
	case err != nil:
		return &wire.Error{Status: http.StatusServiceUnavailable, Code: wire.CodeUnavailable,
			Message: "the client's wallet did not answer the session lookup; launch again", Err: err}
	case os.Player != sess.PlayerID:
		return &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest,
			Message: "the session_token is another player's at the client's wallet",
			Details: map[string]any{"field": "session_token"}}
	case os.Currency != "" && os.Currency != sess.Currency:
		return &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeCurrencyMismatch,
			Message: "the client's wallet holds this session in " + os.Currency + ", not " + sess.Currency,
			Details: map[string]any{"field": "currency"}}
	}
	return nil
}
