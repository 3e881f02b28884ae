package gateway_test

import (
	"errors"
	"testing"

	"github.com/pitboss/pitboss/gateway"
)

// wantFieldError checks a rule's verdict: no error when msg is empty, else
// a *gateway.FieldError naming field with exactly msg (the text the API
// and the CLI show).
func wantFieldError(t *testing.T, err error, field, msg string) *gateway.FieldError {
	t.Helper()
	if msg == "" {
		if err != nil {
			t.Fatalf("error %v, want none", err)
		}
		return nil
	}
	var fe *gateway.FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T), want a *gateway.FieldError", err, err)
	}
	if fe.Field != field || fe.Message != msg || fe.Error() != msg {
		t.Fatalf("field error %q: %q, want %q: %q", fe.Field, fe.Message, field, msg)
	}
	return fe
}

func TestClipValue(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", ""},
		{"short", "short"},
		{"0123456789012345678901234567890123456789", "0123456789012345678901234567890123456789"},
		{"0123456789012345678901234567890123456789x", "0123456789012345678901234567890123456789…"},
	}
	for _, tc := range tests {
		if got := gateway.ClipValue(tc.in); got != tc.want {
			t.Errorf("ClipValue(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
