package api

import (
	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
)

// balanceView is the body of GET /api/v1/wallet/balance.
type balanceView struct {
	ClientID string          `json:"client_id"`
	PlayerID string          `json:"player_id,omitempty"`
	Balances []currencyTotal `json:"balances"`
	Position int64           `json:"position"`
}

type currencyTotal struct {
	Currency string      `json:"currency"`
	Balance  wire.Number `json:"balance"`
	Position int64       `json:"position"`
}

// walletBalance answers the committed balances of the client's wallet, or a
// player's with ?player_id=, optionally one ?currency=.
func (s *Server) walletBalance(c echo.Context) error {
	player := c.QueryParam("player_id")
	if player != "" {
		if err := domain.ValidateID("player_id", player); err != nil {
			return err
		}
	}
	var only domain.Currency
	if code := c.QueryParam("currency"); code != "" {
		cur, err := domain.ParseCurrency(code)
		if err != nil {
			return err
		}
		only = cur
	}
	if err := s.ledgerPosition(c); err != nil {
		return err
	}
	p := wire.Principal(c)
	rows, err := s.deps.Wallets.WalletBalances(c.Request().Context(), p.ClientID, player)
	if err != nil {
		return err
	}
	v := balanceView{ClientID: p.ClientID, PlayerID: player, Balances: []currencyTotal{}}
	for _, r := range rows {
		if !only.IsZero() && r.Currency != only.Code() {
			continue
		}
		cur, err := domain.ParseCurrency(r.Currency)
		if err != nil {
			return err
		}
		v.Balances = append(v.Balances, currencyTotal{Currency: r.Currency,
			Balance: wire.Number(domain.FromMinor(r.Minor, cur).String()), Position: r.LastPosition})
		v.Position = max(v.Position, r.LastPosition)
	}
	if !only.IsZero() && len(v.Balances) == 0 {
		v.Balances = append(v.Balances, currencyTotal{Currency: only.Code(), Balance: wire.Number(domain.Zero(only).String())})
	}
	return wire.OK(c, v)
}
