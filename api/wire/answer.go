package wire

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// envelope is the success body {success:true, data}.
type envelope struct {
	Success    bool        `json:"success"`
	Data       any         `json:"data"`
	Pagination *pagination `json:"pagination,omitempty"`
}

type pagination struct {
	Page    int   `json:"page"`
	PerPage int   `json:"per_page"`
	Total   int64 `json:"total"`
}

// OK answers 200 with data in the success envelope.
func OK(c echo.Context, data any) error {
	return c.JSON(http.StatusOK, envelope{Success: true, Data: data})
}

// OKPage answers 200 with one page of a list in the success envelope, with
// its pagination (page, per_page, total).
func OKPage(c echo.Context, data any, page, perPage int, total int64) error {
	return c.JSON(http.StatusOK, envelope{Success: true, Data: data,
		Pagination: &pagination{Page: page, PerPage: perPage, Total: total}})
}

// Number writes decimal text as a JSON number without a float in between
// (money and other computed numbers are text inside the process).
type Number string

// MarshalJSON writes the text as is; empty text is null.
func (r Number) MarshalJSON() ([]byte, error) {
	if r == "" {
		return []byte("null"), nil
	}
	return []byte(r), nil
}

// TimeLayout writes the times of records (deliveries, webhook endpoints,
// clients, keys, verify runs) in UTC with milliseconds.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// FormatTime is t in TimeLayout, in UTC.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// OptionalTime is FormatTime of *t, or nil (JSON null) when t is nil.
func OptionalTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := FormatTime(*t)
	return &s
}
