package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
)

// MaxBodyBytes bounds every request body.
const MaxBodyBytes = 64 << 10

// maxJSONDepth bounds nesting so a hostile body cannot make decoding deep.
const maxJSONDepth = 16

// ReadBody reads the raw request body within MaxBodyBytes.
func ReadBody(c echo.Context) ([]byte, error) { return ReadBodyUpTo(c, MaxBodyBytes) }

// ReadBodyUpTo reads the raw request body within limit bytes: for the few
// routes that take a file (a reconciliation's CSV) rather than a request.
func ReadBodyUpTo(c echo.Context, limit int64) ([]byte, error) {
	r := http.MaxBytesReader(c.Response(), c.Request().Body, limit)
	b, err := io.ReadAll(r)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, NewError(http.StatusBadRequest, CodeBodyTooLarge,
				fmt.Sprintf("request body is larger than %d bytes", limit))
		}
		return nil, NewError(http.StatusBadRequest, CodeInvalidRequest, "could not read the request body")
	}
	return b, nil
}

// DecodeJSON strictly decodes a JSON object into v: valid UTF-8, an object
// (not null, an array or a scalar), bounded depth, no unknown fields, no
// key given twice in one object or differing from another only in case,
// no key that names a field only in another case, no U+0000 in a string,
// nothing after the object.
func DecodeJSON(b []byte, v any) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return NewError(http.StatusBadRequest, CodeInvalidJSON, "request body is empty; a JSON object is required")
	}
	if !utf8.Valid(b) {
		return NewError(http.StatusBadRequest, CodeInvalidJSON, "request body is not valid UTF-8")
	}
	// Every body is an object: null, an array, a string or a number would
	// decode into the zero request (a PATCH of null a silent no-op).
	if trimmed := bytes.TrimLeft(b, " \t\r\n"); trimmed[0] != '{' {
		return NewError(http.StatusBadRequest, CodeInvalidJSON, "request body must be a JSON object ({...})")
	}
	// One pass finds what encoding/json lets through (bodyScan).
	s := getScan(b, shapeOf(v))
	defer s.put()
	switch {
	case s.deep:
		return NewError(http.StatusBadRequest, CodeInvalidJSON, fmt.Sprintf("JSON nests deeper than %d levels", maxJSONDepth))
	case s.invalid:
		// The decoder says where the JSON goes wrong.
		if err := json.NewDecoder(bytes.NewReader(b)).Decode(new(any)); err != nil {
			return jsonError(err)
		}
		return NewError(http.StatusBadRequest, CodeInvalidJSON, "request body is not a valid JSON object")
	case s.trailing:
		return NewError(http.StatusBadRequest, CodeInvalidJSON, "request body has data after the JSON object")
	case s.keyErr != nil:
		return s.keyErr
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	// PostgreSQL text cannot hold U+0000: a string carrying it would fail
	// in the database (a 500) instead of being refused here.
	if s.nul {
		return NewError(http.StatusBadRequest, CodeInvalidRequest, `a string in the body contains U+0000 ("\u0000"), which is not allowed`)
	}
	return nil
}

// BindJSON reads the request body and strictly decodes it into v
// (DecodeJSON); a body must be sent as application/json (an empty one is
// refused by DecodeJSON, whatever its type).
func BindJSON(c echo.Context, v any) error {
	b, err := ReadBody(c)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) > 0 {
		if err := CheckJSONContentType(c); err != nil {
			return err
		}
	}
	return DecodeJSON(b, v)
}

// CheckJSONContentType refuses a body not sent as application/json: the
// header left out or naming another type (application/jsonx, text/plain)
// is 400 INVALID_REQUEST with details.header. The type is compared without
// case and a charset other than UTF-8 is refused: the body is read as
// UTF-8, so a client that says otherwise means other bytes than we read.
func CheckJSONContentType(c echo.Context) error {
	ct := c.Request().Header.Get(echo.HeaderContentType)
	mt, params, err := mime.ParseMediaType(ct)
	if err == nil && mt == echo.MIMEApplicationJSON {
		if cs, ok := params["charset"]; !ok || strings.EqualFold(cs, "utf-8") {
			return nil
		}
	}
	msg := "Content-Type must be application/json"
	if ct == "" {
		msg = "Content-Type is required: send the body as application/json"
	}
	return &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Message: msg,
		Details: map[string]any{"header": echo.HeaderContentType}}
}

// OptionalJSON decodes the body into v when there is one: an empty body
// keeps v's defaults.
func OptionalJSON(c echo.Context, v any) error {
	b, err := ReadBody(c)
	if err != nil {
		return err
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil
	}
	if err := CheckJSONContentType(c); err != nil {
		return err
	}
	if err := DecodeJSON(b, v); err != nil {
		return err
	}
	return nil
}

// Time is an RFC 3339 time in a request body (2030-01-31T00:00:00Z). A
// value that is not one is refused as its field's type error, 400
// INVALID_REQUEST naming the field, as a number in a text field is;
// time.Time's own decoding fails without naming it, which read as
// "not a valid JSON object".
type Time struct{ time.Time }

// UnmarshalJSON reads an RFC 3339 string.
func (t *Time) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		if v, err := time.Parse(time.RFC3339, s); err == nil {
			t.Time = v
			return nil
		}
	}
	return &json.UnmarshalTypeError{Value: string(b), Type: reflect.TypeFor[Time]()}
}

// TimePtr is the time t holds, nil when the field was absent or null.
func TimePtr(t *Time) *time.Time {
	if t == nil {
		return nil
	}
	return &t.Time
}

func jsonError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return NewError(http.StatusBadRequest, CodeInvalidJSON, fmt.Sprintf("malformed JSON at byte %d", se.Offset))
	case errors.As(err, &te) && te.Type == reflect.TypeFor[Time]():
		return &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest,
			Message: fmt.Sprintf("field %q must be an RFC 3339 time such as 2030-01-31T00:00:00Z", te.Field),
			Details: map[string]any{"field": te.Field}}
	case errors.As(err, &te):
		return &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest,
			Message: fmt.Sprintf("field %q must be %s", te.Field, te.Type.String()),
			Details: map[string]any{"field": te.Field}}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return NewError(http.StatusBadRequest, CodeInvalidJSON, "JSON ends too early")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Message: fmt.Sprintf("unknown field %q", f),
			Details: map[string]any{"field": f}}
	}
	return NewError(http.StatusBadRequest, CodeInvalidJSON, "request body is not a valid JSON object")
}

// RequireField reports a missing required field as a 400 naming it.
func RequireField(name, v string) error {
	if strings.TrimSpace(v) == "" {
		return &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Message: name + " is required",
			Details: map[string]any{"field": name}}
	}
	return nil
}
