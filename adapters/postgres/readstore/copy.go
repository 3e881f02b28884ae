package readstore

import (
	"io"

	"github.com/pitboss/pitboss/adapters/postgres/readstore/bincopy"
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
		return bincopy.NewRows(rows.n, rows.appendRow)
	}
	return bincopy.NewReader(rows.n, rows.row, types)
}
