package readstore

import (
	"io"

	"github.com/pitboss/pitboss/adapters/postgres/readstore/bincopy"
	"github.com/pitboss/pitboss/projections"
)

// colType is a column's type in the binary COPY format (bincopy).
type colType = bincopy.ColType

const (
	colText        = bincopy.Text
	colInt8        = bincopy.Int8
	colInt2        = bincopy.Int2
	colBool        = bincopy.Bool
	colTimestamptz = bincopy.Timestamptz
	colDate        = bincopy.Date
	colUUID        = bincopy.UUID
)

func rowsReader(rows tableRows, types []colType) io.Reader {
	if rows.appendRow != nil {
		i := 0
		return bincopy.NewStream(func(b []byte) ([]byte, bool, error) {
			if i >= rows.n {
				return b, false, nil
			}
			b, err := rows.appendRow(b, i)
			i++
			return b, true, err
		})
	}
	return bincopy.NewReader(rows.n, rows.row, types)
}

// appendTx appends t as a row of the history's columns (rmTables'
// "transactions": txArgs's values, in its order), with status as its
// base_status: the same bytes as txArgs through bincopy.NewReader
// (TestAppendTxIsTxArgs), without an interface value per column. A rebuild
// writes every history row this way.
func appendTx(b []byte, t *projections.Transaction, status projections.Status) ([]byte, error) {
	b = bincopy.AppendFieldCount(b, 26)
	b, err := bincopy.AppendUUID(b, t.ID)
	if err != nil {
		return b, err
	}
	b = bincopy.AppendText(b, t.ClientID)
	b = bincopy.AppendText(b, string(t.Type))
	b = bincopy.AppendInt8(b, t.Amount)
	b = bincopy.AppendText(b, t.Currency)
	if b, err = bincopy.AppendInt2(b, int64(t.Scale)); err != nil {
		return b, err
	}
	b = bincopy.AppendText(b, string(status))
	b = bincopy.AppendTimestamptz(b, t.CreatedAt)
	for _, s := range [...]string{t.Provider, t.Game, t.PlayerID, t.RoundID, t.ExternalTxID, t.ReferenceTx} {
		b = bincopy.AppendTextOrNull(b, s)
	}
	b = bincopy.AppendInt8(b, t.Seq)
	if b, err = bincopy.AppendInt2(b, int64(t.Sub)); err != nil {
		return b, err
	}
	b = bincopy.AppendInt8(b, t.Position)
	if t.HasBalanceAfter {
		b = bincopy.AppendInt8(b, t.BalanceAfter)
	} else {
		b = bincopy.AppendNull(b)
	}
	b = bincopy.AppendBool(b, t.Promo)
	b = bincopy.AppendInt8(b, t.OpenBets)
	b = bincopy.AppendInt8(b, t.RolledBets)
	b = bincopy.AppendInt8(b, t.Wins)
	b = bincopy.AppendBool(b, t.Closed)
	b = bincopy.AppendInt8(b, t.Jackpot)
	b = bincopy.AppendTextOrNull(b, t.CampaignID)
	return bincopy.AppendTextOrNull(b, t.RewardID), nil
}

// storedStatus is the base_status a history row is written with: a game
// result's is stored as pending (its status column derives from the
// counters).
func storedStatus(t *projections.Transaction) projections.Status {
	if t.Type == projections.TypeGameResult {
		return projections.StatusPending
	}
	return t.Status
}
