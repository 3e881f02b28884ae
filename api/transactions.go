package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
)

// createTransactionRequest is the body of POST /api/v1/transactions: an
// operator's own money movement, idempotent by transaction_id.
type createTransactionRequest struct {
	Type         string            `json:"type"` // deposit | withdrawal | adjustment | transfer
	ExternalTxID string            `json:"transaction_id"`
	PlayerID     string            `json:"player_id"`
	Amount       domain.AmountText `json:"amount"`
	Currency     string            `json:"currency"`
	Direction    string            `json:"direction"` // transfer only: to_player | from_player
	Reason       string            `json:"reason"`
}

// transactionView is the spec's alternative transaction shape, plus the
// fields an operator needs to reconcile.
type transactionView struct {
	EventID      string  `json:"transaction_id"`
	ExternalTxID string  `json:"external_id,omitempty"`
	Type         string  `json:"type"`
	Amount       rawNum  `json:"amount"`
	Currency     string  `json:"currency"`
	Provider     *string `json:"provider"`
	Game         *string `json:"game"`
	Status       string  `json:"status"`
	Timestamp    string  `json:"timestamp"`
	PlayerID     string  `json:"player_id,omitempty"`
	BalanceAfter rawNum  `json:"balance_after"`
	Position     int64   `json:"position"`
	Replayed     bool    `json:"replayed"`
}

// rawNum writes decimal text as a JSON number without a float in between.
type rawNum string

// MarshalJSON writes the text as is.
func (r rawNum) MarshalJSON() ([]byte, error) {
	if r == "" {
		return []byte("null"), nil
	}
	return []byte(r), nil
}

func (s *Server) createTransaction(c echo.Context) error {
	var req createTransactionRequest
	if _, err := bindJSON(c, &req); err != nil {
		return err
	}
	for _, f := range []struct{ n, v string }{{"type", req.Type}, {"transaction_id", req.ExternalTxID},
		{"currency", req.Currency}, {"amount", string(req.Amount)}} {
		if err := requireField(f.n, f.v); err != nil {
			return err
		}
	}
	cur, err := domain.ParseCurrency(req.Currency)
	if err != nil {
		return err
	}
	amount, err := domain.ParseMoney(string(req.Amount), cur)
	if err != nil {
		return err
	}
	call := domain.ClientTx{Client: principal(c).ClientID, Player: req.PlayerID,
		ExternalTxID: req.ExternalTxID, Currency: cur, Reason: req.Reason}
	ctx := c.Request().Context()
	var res commands.Result
	switch req.Type {
	case "deposit":
		res, err = s.deps.Commands.Deposit(ctx, call, amount)
	case "withdrawal":
		res, err = s.deps.Commands.Withdraw(ctx, call, amount)
	case "adjustment":
		res, err = s.deps.Commands.Adjust(ctx, call, amount)
	case "transfer":
		res, err = s.deps.Commands.Transfer(ctx, call, amount, req.Direction)
	default:
		return &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest,
			Message: `type must be one of "deposit", "withdrawal", "adjustment", "transfer"`,
			Details: map[string]any{"field": "type"}}
	}
	if err != nil {
		return err
	}
	return ok(c, viewOf(res, req.Type, req.PlayerID, signedFor(req.Type, req.Direction, res.Amount)))
}

// signedFor gives the amount its sign from the wallet's point of view:
// money out of the wallet is negative. Withdrawals and transfers move more
// than zero, so no "-0" can come out of it.
func signedFor(typ, direction string, amount domain.Money) domain.Money {
	if amount.IsPositive() && (typ == "withdrawal" || (typ == "transfer" && direction == domain.FromPlayer)) {
		return amount.Neg()
	}
	return amount
}

// viewOf formats a command's answer for the wire: amounts become decimal
// text here, and only here.
func viewOf(r commands.Result, typ, player string, amount domain.Money) transactionView {
	v := transactionView{EventID: r.EventID, ExternalTxID: r.ExternalTxID, Type: typ, Amount: rawNum(amount.String()),
		Currency: amount.Currency().Code(), Status: "settled", PlayerID: player,
		BalanceAfter: rawNum(r.BalanceAfter.String()), Position: r.Position, Replayed: r.Replayed}
	if !r.OccurredAt.IsZero() {
		v.Timestamp = r.OccurredAt.UTC().Format(time.RFC3339)
	}
	return v
}
