package readstore

import (
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/projections"
)

// ReadModelSchema is the schema of the live read models; a rebuild is
// written to ShadowSchema and swapped in by renaming the schemas.
const (
	ReadModelSchema = "readmodels"
	ShadowSchema    = "readmodels_shadow"
)

// TxCols is the select list ScanTx reads, with the table alias a ("" or "t.").
func TxCols(a string) string {
	return strings.NewReplacer("@", a).Replace(`@id::text, @client_id, @type, @amount, @currency, @scale, @status,
	@created_at, coalesce(@provider, ''), coalesce(@game, ''), coalesce(@player_id, ''), coalesce(@round_id, ''),
	coalesce(@external_id, ''), coalesce(@reference_id, ''), @seq, @sub, @position, @balance_after, @promo,
	@open_bets, @rolled_bets, @wins, @closed, @jackpot, coalesce(@campaign_id, ''), coalesce(@reward_id, '')`)
}

// ScanTx reads a history row selected with TxCols.
func ScanTx(row pgx.CollectableRow) (projections.Transaction, error) {
	var (
		t      projections.Transaction
		typ    string
		status string
		bal    *int64
		scale  int16
		sub    int16
	)
	err := row.Scan(&t.ID, &t.ClientID, &typ, &t.Amount, &t.Currency, &scale, &status, &t.CreatedAt, &t.Provider,
		&t.Game, &t.PlayerID, &t.RoundID, &t.ExternalTxID, &t.ReferenceTx, &t.Seq, &sub, &t.Position, &bal, &t.Promo,
		&t.OpenBets, &t.RolledBets, &t.Wins, &t.Closed, &t.Jackpot, &t.CampaignID, &t.RewardID)
	t.Type, t.Status, t.Scale, t.Sub = projections.TxType(typ), projections.Status(status), int(scale), int(sub)
	t.CreatedAt = t.CreatedAt.UTC()
	if bal != nil {
		t.BalanceAfter, t.HasBalanceAfter = *bal, true
	}
	return t, err
}
