package wire

import (
	"context"
	"errors"
	"log/slog"

	"github.com/labstack/echo/v4"
)

// LogFault logs a failure of ours (an error no rule classified) of the
// request in c, with its request id and path. A caller that hung up is not
// one: when the request's own context was cancelled and err is that
// cancellation, it is logged at Info as "client went away" — a provider's
// client-side timeout (which its retry settles by idempotency) is not an
// error to page anyone for.
func LogFault(c echo.Context, log *slog.Logger, msg string, err error) {
	ctx := c.Request().Context()
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		log.InfoContext(ctx, msg+": client went away before the answer", "error", err, "request_id", RequestID(c),
			"path", c.Request().URL.Path)
		return
	}
	log.ErrorContext(ctx, msg, "error", err, "request_id", RequestID(c), "method", c.Request().Method,
		"path", c.Request().URL.Path)
}
