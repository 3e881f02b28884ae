package wire

import (
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/domain"
)

// QueryValue is the one rule for query parameters (docs/errors.md): the
// first value of name, and whether it was given. An empty value
// (?player_id=) is the same as leaving the parameter out, for every
// optional parameter of every route. A required parameter left out or
// empty is a 400 naming it (RequireField, as GET /api/v1/game/launch does).
func QueryValue(c echo.Context, name string) (string, bool) {
	vs := c.QueryParams()[name]
	if len(vs) == 0 || vs[0] == "" {
		return "", false
	}
	return vs[0], true
}

// QueryInt reads an optional integer query parameter from 1 to max (pages
// and page sizes); def when it is not given.
func QueryInt(c echo.Context, name string, def, max int) (int, error) {
	raw, ok := QueryValue(c, name)
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > max {
		return 0, &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest,
			Message: fmt.Sprintf("%s must be an integer from 1 to %d", name, max), Details: map[string]any{"field": name}}
	}
	return n, nil
}

// QueryDay reads an optional query parameter that is a UTC day
// (2025-01-31) the service can keep (CheckTimeRange); ok is false when it
// is not given. Anything else is a 400 naming it.
func QueryDay(c echo.Context, name string) (day time.Time, ok bool, err error) {
	v, ok := QueryValue(c, name)
	if !ok {
		return time.Time{}, false, nil
	}
	day, err = ParseDay(name, v)
	return day, err == nil, err
}

// ParseDay reads v, the parameter (query or path) name, as a UTC day
// (2025-01-31) the service can keep (CheckTimeRange); anything else is a
// 400 naming it.
func ParseDay(name, v string) (time.Time, error) {
	day, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return time.Time{}, InvalidField(name, name+" must be a UTC day such as 2025-01-31")
	}
	return day, CheckTimeRange(name, day)
}

// InvalidField is the one 400 INVALID_REQUEST that names the field (or
// parameter) at fault in details.field.
func InvalidField(field, message string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Message: message, Details: map[string]any{"field": field}}
}

// CheckID refuses v as the id field (domain.ValidateID's rule) with a 400
// naming the field.
func CheckID(field, v string) error {
	if err := domain.ValidateID(field, v); err != nil {
		return InvalidField(field, err.Error())
	}
	return nil
}

// CheckTimeRange refuses a time the service cannot keep: outside years 1
// to 9999 in UTC. Every answer writes times in RFC 3339, whose years have
// four digits, and PostgreSQL has no year 0, so 0001-01-01T00:00:00+01:00
// (in year 0 in UTC) is out as well. name is the parameter or field.
func CheckTimeRange(name string, t time.Time) error {
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest,
			Message: name + " must be from 0001-01-01 to 9999-12-31 (UTC)", Details: map[string]any{"field": name}}
	}
	return nil
}

// IsUUID reports whether s is a UUID in its canonical text form.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if r != '-' {
				return false
			}
		case (r < '0' || r > '9') && (r < 'a' || r > 'f') && (r < 'A' || r > 'F'):
			return false
		}
	}
	return true
}

// Accepted is the first of offers the Accept header names (media types
// compared without their parameters), or "" when it names none of them.
func Accepted(c echo.Context, offers ...string) string {
	for _, part := range strings.Split(c.Request().Header.Get(echo.HeaderAccept), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && slices.Contains(offers, mt) {
			return mt
		}
	}
	return ""
}
