package demogame

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/labstack/echo/v4"
)

// Host is what the game uses of the HTTP server it is mounted on, so it
// answers in that server's shapes: the strict JSON body decoding, the
// success envelope, the one error shape and the player's error page.
// *api.Server implements it. Errors the game's handlers return are written
// by the server's error handler, as any handler's are.
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

// ProviderKindDemo is the route kind of the built-in demo game's provider
// (the catalog's "demo" kind).
const ProviderKindDemo = "demo"

// Session is a launched game session, as far as the game reads it.
type Session struct {
	ID         string
	ProviderID string
	GameID     string
	Currency   string
	ExpiresAt  time.Time
}

// Provider is a game provider with the secret its wallet calls are signed
// with.
type Provider struct {
	ID      string
	Secret  string
	Enabled bool
}

// GameInfo is a game of the catalog, as far as the game reads it.
type GameInfo struct {
	Name string
}

// ProviderRoute is how a provider is reached; the game reads its kind.
type ProviderRoute struct {
	Kind string
}

// Sessions reads game sessions. An unknown id is domain.ErrNotFound.
type Sessions interface {
	Session(ctx context.Context, id string) (Session, error)
}

// Catalog reads providers and games. Unknown ids are domain.ErrNotFound.
type Catalog interface {
	Provider(ctx context.Context, id string) (Provider, error)
	Game(ctx context.Context, id string) (GameInfo, error)
}

// Routes reads providers' routes.
type Routes interface {
	ProviderRoute(ctx context.Context, providerID string) (ProviderRoute, error)
}

// amountText is a money amount as sent in JSON, a number (0.10) or a
// string ("0.10"), kept as its exact text and never read as a float: the
// server's API reads amounts the same way.
type amountText string

// UnmarshalJSON keeps the number's text verbatim; null is empty.
func (a *amountText) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*a = amountText(s)
		return nil
	}
	if bytes.Equal(b, []byte("null")) {
		*a = ""
		return nil
	}
	*a = amountText(b)
	return nil
}
