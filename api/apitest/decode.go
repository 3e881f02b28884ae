package apitest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The answers' JSON is decoded with json.Number, never float64, as the
// service reads money: a number compares by its exact text.

// ErrorDetail is the error object of the one error shape.
type ErrorDetail struct {
	Code      string         `json:"code"`
	Message   string         `json:"message"`
	RequestID string         `json:"request_id"`
	Details   map[string]any `json:"details"`
}

// ErrorBody is the one error shape: {"success":false,"error":{...}}.
type ErrorBody struct {
	Success bool        `json:"success"`
	Error   ErrorDetail `json:"error"`
}

// Pagination is the pagination object of a list.
type Pagination struct {
	Page       int   `json:"page"`
	PerPage    int   `json:"per_page"`
	Total      int64 `json:"total"`
	TotalExact bool  `json:"total_exact"`
}

// Envelope is a success or an error answer, its data left undecoded.
type Envelope struct {
	Success    bool            `json:"success"`
	Data       json.RawMessage `json:"data"`
	Pagination *Pagination     `json:"pagination"`
	Error      *ErrorDetail    `json:"error"`
}

// Decode decodes the whole answer into a T.
func Decode[T any](t testing.TB, rec *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := decode(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("decode %T from %d %s: %v", v, rec.Code, rec.Body, err)
	}
	return v
}

// Data checks that the answer is 200 {"success":true,"data":...} and
// decodes its data into a T.
func Data[T any](t testing.TB, rec *httptest.ResponseRecorder) T {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", rec.Code, rec.Body)
	}
	env := Decode[struct {
		Success bool `json:"success"`
		Data    T    `json:"data"`
	}](t, rec)
	if !env.Success {
		t.Fatalf("success false: %s", rec.Body)
	}
	return env.Data
}

// WantError checks the answer's status and that it is the one error shape
// with code, a message and a request id.
func WantError(t testing.TB, rec *httptest.ResponseRecorder, status int, code string) ErrorBody {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status %d, want %d: %s", rec.Code, status, rec.Body)
	}
	e := Decode[ErrorBody](t, rec)
	if e.Success || e.Error.Code != code || e.Error.RequestID == "" || e.Error.Message == "" {
		t.Fatalf("error body %s, want code %s", rec.Body, code)
	}
	return e
}

// Expect checks the answer's status and, with an empty code, that it is a
// success; otherwise that it is the one error shape with code, a message
// and a request id.
func Expect(t testing.TB, rec *httptest.ResponseRecorder, status int, code string) Envelope {
	t.Helper()
	env := Decode[Envelope](t, rec)
	if rec.Code != status {
		t.Fatalf("status %d, want %d: %s", rec.Code, status, rec.Body)
	}
	if code == "" {
		if !env.Success || env.Error != nil {
			t.Fatalf("want success: %s", rec.Body)
		}
		return env
	}
	if env.Success || env.Error == nil || env.Error.Code != code || env.Error.RequestID == "" || env.Error.Message == "" {
		t.Fatalf("want error %s: %s", code, rec.Body)
	}
	return env
}

// JSON encodes v.
func JSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func decode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}
