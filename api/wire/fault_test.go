package wire_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
)

// TestLogFault: a failure of ours is an error; the caller's own hang-up
// (its request context cancelled, the error that cancellation) is not.
func TestLogFault(t *testing.T) {
	tests := []struct {
		name      string
		cancelled bool
		err       error
		want      string
	}{
		{"a fault of ours", false, errors.New("database on fire"), "level=ERROR"},
		{"the caller hung up", true, fmt.Errorf("look up session: %w", context.Canceled), "level=INFO"},
		{"a cancellation of ours while the caller waits", false, fmt.Errorf("inner: %w", context.Canceled), "level=ERROR"},
		{"another error after the caller hung up", true, errors.New("database on fire"), "level=ERROR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(slog.NewTextHandler(&buf, nil))
			req := httptest.NewRequest("POST", "/provider/caleta/p/wallet/bet", nil)
			if tt.cancelled {
				ctx, cancel := context.WithCancel(req.Context())
				cancel()
				req = req.WithContext(ctx)
			}
			c := echo.New().NewContext(req, httptest.NewRecorder())
			wire.LogFault(c, log, "caleta wallet call failed", tt.err)
			if !strings.Contains(buf.String(), tt.want) {
				t.Fatalf("logged %q, want %s", buf.String(), tt.want)
			}
		})
	}
}
