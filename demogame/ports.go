package demogame

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/gateway"
)

// Host is what the game uses of the HTTP server it is mounted on, so it
// answers in that server's shapes: the strict JSON body decoding, the
// success envelope, the one error shape and the player's error page.
// *api.Server implements it. Errors the game's handlers return are written
// by the server's error handler, as any handler's are: a domain error or a
// gateway.FieldError gets the answer it gets from every other route.
type Host interface {
	// BindJSON decodes the request's JSON body into v, refusing what the
	// server refuses (wrong Content-Type, too large, unknown fields ...).
	BindJSON(c echo.Context, v any) error
	// OK answers data in the success envelope.
	OK(c echo.Context, data any) error
	// HTTPError is an error answer of status with code, message and
	// details; cause is logged, never sent.
	HTTPError(status int, code, message string, details map[string]any, cause error) error
	// ErrorPage answers err as the player's HTML error page titled title.
	ErrorPage(c echo.Context, title string, err error) error
}

// Sessions reads game sessions; gateway.Sessions (the server's session
// store) satisfies it, the game never creates one. An unknown id is
// domain.ErrNotFound.
type Sessions interface {
	Session(ctx context.Context, id string) (gateway.GameSession, error)
}

// Routes reads providers' routes, of which the game reads the kind;
// gateway.GameCatalog satisfies it.
type Routes interface {
	ProviderRoute(ctx context.Context, providerID string) (gateway.ProviderRoute, error)
}
