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
