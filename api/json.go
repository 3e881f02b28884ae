package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
)

// MaxBodyBytes bounds every request body.
const MaxBodyBytes = 64 << 10

// maxJSONDepth bounds nesting so a hostile body cannot make decoding deep.
const maxJSONDepth = 16

// readBody reads the raw request body within MaxBodyBytes.
func readBody(c echo.Context) ([]byte, error) {
	r := http.MaxBytesReader(c.Response(), c.Request().Body, MaxBodyBytes)
	b, err := io.ReadAll(r)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, apiError(http.StatusBadRequest, CodeBodyTooLarge,
				fmt.Sprintf("request body is larger than %d bytes", MaxBodyBytes))
		}
		return nil, apiError(http.StatusBadRequest, CodeInvalidRequest, "could not read the request body")
	}
	return b, nil
}

// decodeJSON strictly decodes a JSON object into v: valid UTF-8, an object
// (not null, an array or a scalar), bounded depth, no unknown fields,
// nothing after the object.
func decodeJSON(b []byte, v any) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return apiError(http.StatusBadRequest, CodeInvalidJSON, "request body is empty; a JSON object is required")
	}
	if !utf8.Valid(b) {
		return apiError(http.StatusBadRequest, CodeInvalidJSON, "request body is not valid UTF-8")
	}
	// Every body is an object: null, an array, a string or a number would
	// decode into the zero request (a PATCH of null a silent no-op).
	if trimmed := bytes.TrimLeft(b, " \t\r\n"); trimmed[0] != '{' {
		return apiError(http.StatusBadRequest, CodeInvalidJSON, "request body must be a JSON object ({...})")
	}
	if d := depth(b); d > maxJSONDepth {
		return apiError(http.StatusBadRequest, CodeInvalidJSON, fmt.Sprintf("JSON nests deeper than %d levels", maxJSONDepth))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	// Only white space may follow (dec.More is false before a stray '}'
	// or ']', which would slip through).
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return apiError(http.StatusBadRequest, CodeInvalidJSON, "request body has data after the JSON object")
	}
	// PostgreSQL text cannot hold U+0000: a string carrying it would fail
	// in the database (a 500) instead of being refused here.
	if bytes.Contains(b, []byte(`\u0000`)) && hasNUL(b) {
		return apiError(http.StatusBadRequest, CodeInvalidRequest, `a string in the body contains U+0000 ("\u0000"), which is not allowed`)
	}
	return nil
}

// hasNUL reports whether a string (a key or a value) of the JSON text b
// contains U+0000.
func hasNUL(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if s, ok := tok.(string); ok && strings.ContainsRune(s, 0) {
			return true
		}
	}
}

// bindJSON reads and decodes the request body.
func bindJSON(c echo.Context, v any) ([]byte, error) {
	if ct := c.Request().Header.Get(echo.HeaderContentType); ct != "" && !strings.HasPrefix(ct, echo.MIMEApplicationJSON) {
		return nil, apiError(http.StatusBadRequest, CodeInvalidRequest, "Content-Type must be application/json")
	}
	b, err := readBody(c)
	if err != nil {
		return nil, err
	}
	return b, decodeJSON(b, v)
}

func jsonError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return apiError(http.StatusBadRequest, CodeInvalidJSON, fmt.Sprintf("malformed JSON at byte %d", se.Offset))
	case errors.As(err, &te):
		return &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest,
			Message: fmt.Sprintf("field %q must be %s", te.Field, te.Type.String()),
			Details: map[string]any{"field": te.Field}}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return apiError(http.StatusBadRequest, CodeInvalidJSON, "JSON ends too early")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Message: fmt.Sprintf("unknown field %q", f),
			Details: map[string]any{"field": f}}
	}
	return apiError(http.StatusBadRequest, CodeInvalidJSON, "request body is not a valid JSON object")
}

// depth returns the deepest nesting of objects and arrays, ignoring strings.
func depth(b []byte) int {
	d, max, inStr, esc := 0, 0, false, false
	for _, c := range b {
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[':
			d++
			if d > max {
				max = d
			}
		case c == '}' || c == ']':
			d--
		}
	}
	return max
}

func toString(v any) string {
	switch x := v.(type) {
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// requireField reports a missing required field as a 400 naming it.
func requireField(name, v string) error {
	if strings.TrimSpace(v) == "" {
		return &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Message: name + " is required",
			Details: map[string]any{"field": name}}
	}
	return nil
}
