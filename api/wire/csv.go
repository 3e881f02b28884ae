package wire

import (
	"encoding/csv"
	"net/http"

	"github.com/labstack/echo/v4"
)

// CSVCell is cell as a spreadsheet should read it: as text, never as a
// formula. A cell that starts with '=', '+', '-', '@', a tab or a carriage
// return, and is not a plain decimal number, gets a leading "'" (the
// usual rule against CSV injection): a round id "@A1" or a player "-2-3"
// is shown as typed, while a negative amount ("-15.50") stays a number.
func CSVCell(cell string) string {
	if cell == "" {
		return cell
	}
	switch cell[0] {
	case '=', '+', '-', '@', '\t', '\r':
		if !plainNumber(cell) {
			return "'" + cell
		}
	}
	return cell
}

// plainNumber reports whether s is an optionally negative decimal number
// written with digits and at most one point: what every amount, count and
// rate of our CSV files is.
func plainNumber(s string) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	digits, point := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !point && digits > 0 && i < len(s)-1:
			point = true
		default:
			return false
		}
	}
	return digits > 0
}

// CSVWriter writes a CSV answer, every cell through CSVCell: the one
// writer of every CSV file the service serves.
type CSVWriter struct{ w *csv.Writer }

// StartCSV answers 200 with a CSV attachment named filename (".csv" is
// added) and returns its writer.
func StartCSV(c echo.Context, filename string) *CSVWriter {
	res := c.Response()
	res.Header().Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	res.Header().Set(echo.HeaderContentDisposition, `attachment; filename="`+filename+`.csv"`)
	res.WriteHeader(http.StatusOK)
	return &CSVWriter{w: csv.NewWriter(res)}
}

// Write writes one row.
func (w *CSVWriter) Write(row []string) error {
	cells := make([]string, len(row))
	for i, c := range row {
		cells[i] = CSVCell(c)
	}
	return w.w.Write(cells)
}

// Close flushes what is buffered and says whether any write failed.
func (w *CSVWriter) Close() error {
	w.w.Flush()
	return w.w.Error()
}
