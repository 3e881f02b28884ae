package pitboss

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
)

// The signature check of every wallet call, by the provider's scheme
// (docs/provider-wallet.md#authentication, gateway/provider_signature.go).

// What each scheme signs, for the refusals.
const (
	v1Rule = "X-Signature must be the hex HMAC-SHA256 of the raw body with the provider secret, " +
		"or t=<unix seconds>,v2=<hex HMAC-SHA256 of \"<t>.<METHOD>.<path>.<raw body>\">"
	v2Rule = "this provider is on signature scheme v2: X-Signature must be " +
		"t=<unix seconds>,v2=<hex HMAC-SHA256 of \"<t>.<METHOD>.<path>.<raw body>\"> with the provider secret"
)

// checkSignature checks the call's X-Signature by prov's scheme against
// the request's method, path (as sent, without the query) and raw body. A
// right signature whose t is outside the window is 401
// TIMESTAMP_OUT_OF_RANGE with details.server_time, as on the signed
// launch, so the provider can see its clock's skew.
func (h *Handlers) checkSignature(c echo.Context, prov gateway.Provider, raw []byte) error {
	req := c.Request()
	now := h.deps.Clock.Now()
	err := gateway.VerifyProviderCall(prov, gateway.ProviderCall{Method: req.Method, Path: req.URL.EscapedPath(), Body: raw},
		req.Header.Get(headerSignature), now)
	rule := v2Rule
	if prov.Scheme() == gateway.SignatureV1 {
		rule = v1Rule
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gateway.ErrSignatureTimestamp):
		return &wire.Error{Status: http.StatusUnauthorized, Code: wire.CodeTimestampOutOfRange,
			Message: fmt.Sprintf("X-Signature's t is more than %d seconds away from the server time",
				int(gateway.ProviderSignatureWindow/time.Second)),
			Details: map[string]any{"server_time": now.Unix()}}
	case errors.Is(err, gateway.ErrSignatureMalformed):
		return wire.NewError(http.StatusUnauthorized, wire.CodeInvalidSignature, err.Error()+"; "+rule)
	default:
		return wire.NewError(http.StatusUnauthorized, wire.CodeInvalidSignature, "X-Signature does not match; "+rule)
	}
}

// wallClock is the Clock of handlers built without one.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }
