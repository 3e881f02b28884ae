package api

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/projections"
)

// What a round's answer says of the provider's own page of the round
// (provider_round_detail).
const (
	// roundLinkAvailable: the provider gave its address
	// (provider_round_url).
	roundLinkAvailable = "available"
	// roundLinkUnsupported: the provider's protocol has no such call
	// (only Caleta's has: POST /api/game/round).
	roundLinkUnsupported = "unsupported"
	// roundLinkUnavailable: the provider could not be asked or did not
	// answer (every endpoint failed or its breaker is open, or its launch
	// settings are unusable).
	roundLinkUnavailable = "unavailable"
	// roundLinkRefused: the provider answered with a refusal (Caleta's
	// 405 "Invalid Round").
	roundLinkRefused = "refused"
)

// roundTotalsView are a round's sums (projections.RoundTotals) in the
// currency's decimals.
type roundTotalsView struct {
	Bets      wire.Number `json:"bets"`
	Wins      wire.Number `json:"wins"`
	Refunds   wire.Number `json:"refunds"`
	Reversals wire.Number `json:"reversals"`
	Net       wire.Number `json:"net"`
}

// roundView is GET /api/v1/rounds/{round_id}: the round as our history
// knows it, its rows as GET /api/v1/transactions lists them, and the
// provider's own page of it where its protocol has one.
type roundView struct {
	RoundID  string  `json:"round_id"`
	Provider string  `json:"provider"`
	Game     *string `json:"game"`
	PlayerID string  `json:"player_id"`
	Currency string  `json:"currency"`
	Status   string  `json:"status"`
	// GameResultID is the round's game_result row
	// (GET /api/v1/transactions/{id} shows it with its ledger events).
	GameResultID string `json:"game_result_id"`
	// StartedAt is the time of the round's first bet, win or rollback;
	// Position the position of the last event that changed it.
	StartedAt    string            `json:"started_at"`
	Position     int64             `json:"position"`
	Totals       roundTotalsView   `json:"totals"`
	Transactions []transactionItem `json:"transactions"`
	// ProviderRoundURL is the provider's page of the round, null unless
	// ProviderRoundDetail is available.
	ProviderRoundURL    *string `json:"provider_round_url"`
	ProviderRoundDetail string  `json:"provider_round_detail"`
}

// roundDetail answers GET /api/v1/rounds/{round_id}: one round of the
// client's history, by the provider's round id. A round id is unique at
// its provider only: ?provider= names it; without it, an id of rounds of
// several of the client's providers is 409 ROUND_AMBIGUOUS naming them.
// Another client's round, like an unknown one, is 404. The provider's
// page of the round is asked for after the history is read; whatever the
// provider does, the answer is 200 with the history
// (provider_round_detail says what became of the link).
func (s *Server) roundDetail(c echo.Context) error {
	q, err := s.queries()
	if err != nil {
		return err
	}
	roundID := c.Param("round_id")
	if domain.ValidateID("round_id", roundID) != nil {
		return queryParamError("round_id", "round_id must be the provider's round id: 1 to %d characters of A-Z a-z 0-9 . _ - @",
			domain.MaxIDLength)
	}
	provider, err := idParam(c, "provider")
	if err != nil {
		return err
	}
	minPos, err := minPosition(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	client := wire.Principal(c).ClientID
	rounds, pos, err := q.Round(ctx, projections.RoundQuery{ClientID: client, RoundID: roundID, Provider: provider}, minPos)
	if err != nil {
		return err
	}
	switch len(rounds) {
	case 0:
		return &wire.Error{Status: http.StatusNotFound, Code: wire.CodeNotFound,
			Message: "no round " + roundID + ofProvider(provider) + " in your history", Details: map[string]any{"field": "round_id"}}
	case 1:
	default:
		names := make([]string, len(rounds))
		for i, r := range rounds {
			names[i] = r.Result.Provider
		}
		return &wire.Error{Status: http.StatusConflict, Code: wire.CodeRoundAmbiguous,
			Message: fmt.Sprintf("round %s is a round of %d of your providers: name one with ?provider=", roundID, len(rounds)),
			Details: map[string]any{"field": "provider", "providers": names}}
	}
	r := rounds[0]
	totals, err := r.Totals()
	if err != nil {
		return err
	}
	scale := r.Result.Scale
	v := roundView{RoundID: r.Result.RoundID, Provider: r.Result.Provider, Game: optional(r.Result.Game),
		PlayerID: r.Result.PlayerID, Currency: r.Result.Currency, Status: string(r.Status()), GameResultID: r.Result.ID,
		StartedAt: r.Result.CreatedAt.UTC().Format(time.RFC3339Nano), Position: r.Result.Position,
		Totals: roundTotalsView{Bets: minorNumber(totals.Bets, scale), Wins: minorNumber(totals.Wins, scale),
			Refunds: minorNumber(totals.Refunds, scale), Reversals: minorNumber(totals.Reversals, scale),
			Net: minorNumber(totals.Net, scale)},
		Transactions: make([]transactionItem, 0, len(r.Rows))}
	for _, t := range r.Rows {
		v.Transactions = append(v.Transactions, itemOfTransaction(t))
	}
	v.ProviderRoundURL, v.ProviderRoundDetail = s.providerRoundLink(c, r)
	setPosition(c, pos)
	return wire.OK(c, v)
}

func ofProvider(provider string) string {
	if provider == "" {
		return ""
	}
	return " of provider " + provider
}

func minorNumber(minor int64, scale int) wire.Number {
	return wire.Number(domain.FormatMinor(minor, scale))
}

// providerRoundLink asks the round's provider for its page of the round,
// through the registry's endpoints and breakers. It never fails the
// answer: the history is the answer, the link an extra, and a provider
// that is down or refuses is said so in provider_round_detail (and
// logged) instead.
func (s *Server) providerRoundLink(c echo.Context, r projections.Round) (*string, string) {
	if s.deps.RoundDetails == nil || s.deps.Catalog == nil {
		return nil, roundLinkUnavailable
	}
	ctx, res := c.Request().Context(), r.Result
	log := func(msg string, args ...any) {
		s.log.WarnContext(ctx, msg, append([]any{"provider", res.Provider, "round_id", res.RoundID,
			"client_id", res.ClientID, "request_id", wire.RequestID(c)}, args...)...)
	}
	prov, err := s.deps.Catalog.Provider(ctx, res.Provider)
	if err != nil {
		log("round detail: provider not read", "error", err)
		return nil, roundLinkUnavailable
	}
	route, err := s.providerRoute(ctx, prov)
	if err != nil {
		log("round detail: provider route not read", "error", err)
		return nil, roundLinkUnavailable
	}
	req := gateway.RoundDetailRequest{ClientID: res.ClientID, PlayerID: res.PlayerID, RoundID: res.RoundID,
		TransactionID: firstTransactionID(r.Rows)}
	u, err := s.deps.RoundDetails.RoundDetailURL(ctx, route, req)
	var (
		rejected    *gateway.ProviderRejectedError
		unavailable *gateway.ProviderUnavailableError
	)
	switch {
	case err == nil:
		return &u, roundLinkAvailable
	case errors.Is(err, gateway.ErrRoundDetailUnsupported):
		return nil, roundLinkUnsupported
	case errors.As(err, &rejected):
		log("round detail refused by the provider", "provider_status", rejected.Status, "provider_code", rejected.Code,
			"provider_message", rejected.Message)
		return nil, roundLinkRefused
	case errors.As(err, &unavailable):
		log("round detail: provider unavailable", "reason", unavailable.Reason, "endpoints", unavailable.Endpoints)
		return nil, roundLinkUnavailable
	}
	log("round detail: provider not asked", "error", err)
	return nil, roundLinkUnavailable
}

// firstTransactionID is the provider's id of the round's first bet, else
// of its first row that has one: what names the round's transactions at
// the provider (Caleta's transaction_uuid).
func firstTransactionID(rows []projections.Transaction) string {
	first := ""
	for _, t := range rows {
		if t.ExternalTxID == "" {
			continue
		}
		if t.Type == projections.TypeBet {
			return t.ExternalTxID
		}
		if first == "" {
			first = t.ExternalTxID
		}
	}
	return first
}
