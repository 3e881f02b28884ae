package pitboss

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/projections"
)

// RoundExport reads a provider's rounds of one UTC day from the read
// models (readstore.ReadModels.ProviderRounds).
type RoundExport interface {
	ProviderRounds(ctx context.Context, provider string, day time.Time) ([]projections.ProviderRound, error)
}

// RoundColumns are the daily round export's CSV columns, in order
// (docs/reconciliation.md#the-providers-daily-round-export).
var RoundColumns = []string{"day", "client_id", "round_id", "player_id", "game_id", "currency",
	"bets", "wins", "free_bets", "rollbacks",
	"bet_amount", "bet_refunds", "win_amount", "win_reversals", "ggr",
	"promo_bet_amount", "promo_bet_refunds", "promo_win_amount", "promo_win_reversals", "promo_ggr",
	"jackpot_win_amount", "jackpot_win_reversals", "jackpot_ggr",
	"status", "first_at", "last_at"}

// Rounds answers GET /provider/v1/reports/rounds/{day}: the calling
// provider's rounds of that UTC day as CSV, one line per round, game and
// currency, across every client. It is signed like a wallet call, and only
// by scheme v2: a v1 signature of the empty body never changes, so it
// would open every day's file forever once seen. Any wallet protocol's
// provider may fetch it with its secret.
func (h *Handlers) Rounds(c echo.Context) error {
	if h.deps.Rounds == nil {
		return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "the round export is not configured")
	}
	ctx := c.Request().Context()
	prov, err := h.caller(c)
	if err != nil {
		return err
	}
	if prov.Scheme() != gateway.SignatureV2 {
		return wire.NewError(http.StatusUnauthorized, wire.CodeInvalidSignature,
			"the round export is signed by scheme v2 only; ask for the provider to be moved to it (pitboss provider set --signature-scheme v2)")
	}
	if err := h.checkSignature(c, prov, nil); err != nil {
		return err
	}
	day, err := wire.ParseDay("day", c.Param("day"))
	if err != nil {
		return err
	}
	rounds, err := h.deps.Rounds.ProviderRounds(ctx, prov.ID, day)
	if err != nil {
		return err
	}
	return WriteRounds(c, prov.ID, day, rounds)
}

// WriteRounds answers with rounds as the export's CSV file.
func WriteRounds(c echo.Context, provider string, day time.Time, rounds []projections.ProviderRound) error {
	w := wire.StartCSV(c, "rounds-"+provider+"-"+day.Format(time.DateOnly))
	if err := w.Write(RoundColumns); err != nil {
		return err
	}
	d := day.Format(time.DateOnly)
	for _, r := range rounds {
		money := func(v int64) string { return domain.FormatMinor(v, r.Scale) }
		count := func(v int64) string { return strconv.FormatInt(v, 10) }
		if err := w.Write([]string{d, r.ClientID, r.RoundID, r.PlayerID, r.Game, r.Currency,
			count(r.BetCount), count(r.WinCount), count(r.FreeBetCount), count(r.RollbackCount),
			money(r.Bets), money(r.BetRefunds), money(r.Wins), money(r.WinReversals), money(r.GGR()),
			money(r.PromoBets), money(r.PromoBetRefunds), money(r.PromoWins), money(r.PromoWinReversals), money(r.PromoGGR()),
			money(r.JackpotWins), money(r.JackpotWinReversals), money(r.JackpotGGR()),
			string(r.Status), wire.FormatTime(r.First), wire.FormatTime(r.Last)}); err != nil {
			return err
		}
	}
	return w.Close()
}
