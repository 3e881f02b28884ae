package api

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// The launch variants of the bearer API share this flow (see
// docs/providers-and-games.md): validate, resolve provider and game, store
// the game session, ask the provider for the game address through the
// Launcher (adapter per kind, failover, breakers), then record the launch
// in the ledger. The session is stored before the provider is called
// because providers may call the wallet while they open the game; the
// launch event is recorded only once a game address exists.

// Bounds of the optional launch fields.
const (
	maxSessionTokenLength = 512
	maxLaunchLanguage     = 16
)

// launchTarget is a resolved provider and game with the provider's route.
type launchTarget struct {
	prov  gateway.Provider
	game  gateway.Game
	route gateway.ProviderRoute
}

// checkLaunchRequest validates the fields every launch variant has, puts
// the country in upper case and parses the currency. Parameter names are
// the spec's.
func checkLaunchRequest(req *launchRequest) (domain.Currency, error) {
	for _, f := range []struct{ n, v string }{{"provider", req.Provider}, {"game_id", req.GameID},
		{"player_id", req.PlayerID}, {"currency", req.Currency}} {
		if err := wire.RequireField(f.n, f.v); err != nil {
			return domain.Currency{}, err
		}
		if f.n == "currency" {
			continue
		}
		if err := domain.ValidateID(f.n, f.v); err != nil {
			return domain.Currency{}, &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest, Message: err.Error(),
				Details: map[string]any{"field": f.n}, Err: err}
		}
	}
	if len(req.SessionToken) > maxSessionTokenLength || strings.IndexFunc(req.SessionToken, func(r rune) bool {
		return r < 0x21 || r > 0x7e
	}) >= 0 {
		return domain.Currency{}, &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest,
			Message: "session_token must be at most 512 printable ASCII characters without spaces",
			Details: map[string]any{"field": "session_token"}}
	}
	if len(req.Language) > maxLaunchLanguage || strings.Trim(req.Language,
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != "" {
		return domain.Currency{}, &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest,
			Message: "language must be a language tag such as en or pt-BR", Details: map[string]any{"field": "language"}}
	}
	if req.Country = strings.ToUpper(req.Country); req.Country != "" && !gateway.IsCountry(req.Country) {
		return domain.Currency{}, &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest,
			Message: "country must be an ISO 3166-1 alpha-2 code such as BR", Details: map[string]any{"field": "country"}}
	}
	return domain.ParseCurrency(req.Currency)
}

// blockedInCountry refuses a game blocked in the player's country (the
// provider's game list says so, `pitboss catalog sync`); a launch without
// a country is never refused for it. param names the field or parameter
// in the details.
func blockedInCountry(game gateway.Game, country, param string) error {
	if !game.BlockedIn(country) {
		return nil
	}
	return &wire.Error{Status: http.StatusForbidden, Code: wire.CodeGameBlockedInCountry,
		Message: "game " + game.ID + " may not be played in " + country,
		Details: map[string]any{param: "country", "country": country, "game_id": game.ID}}
}

// resolveLaunch finds an enabled provider, its enabled game (not blocked
// in the player's country, when the launch names one) and its route.
func (s *Server) resolveLaunch(ctx context.Context, providerID, gameID, country string) (launchTarget, error) {
	prov, err := s.deps.Catalog.Provider(ctx, providerID)
	if errors.Is(err, domain.ErrNotFound) || (err == nil && !prov.Enabled) {
		return launchTarget{}, &wire.Error{Status: http.StatusNotFound, Code: wire.CodeNotFound,
			Message: "unknown provider " + providerID, Details: map[string]any{"field": "provider"}}
	} else if err != nil {
		return launchTarget{}, err
	}
	game, err := s.deps.Catalog.Game(ctx, gameID)
	if errors.Is(err, domain.ErrNotFound) || (err == nil && (game.ProviderID != prov.ID || !game.Enabled)) {
		return launchTarget{}, &wire.Error{Status: http.StatusNotFound, Code: wire.CodeNotFound,
			Message: "unknown game " + gameID + " of provider " + providerID, Details: map[string]any{"field": "game_id"}}
	} else if err != nil {
		return launchTarget{}, err
	}
	if err := blockedInCountry(game, country, "field"); err != nil {
		return launchTarget{}, err
	}
	route, err := s.providerRoute(ctx, prov)
	if err != nil {
		return launchTarget{}, err
	}
	return launchTarget{prov: prov, game: game, route: route}, nil
}

// providerRoute is the provider's route with its secret. A server built
// without a GameCatalog knows only demo providers.
func (s *Server) providerRoute(ctx context.Context, prov gateway.Provider) (gateway.ProviderRoute, error) {
	route := gateway.ProviderRoute{ProviderID: prov.ID, Kind: gateway.ProviderKindDemo, Balancing: gateway.BalancingPriority,
		Timeout: gateway.DefaultProviderTimeout, BreakerFailures: gateway.DefaultBreakerFailures, BreakerCooldown: gateway.DefaultBreakerCooldown}
	if s.deps.Games != nil {
		var err error
		if route, err = s.deps.Games.ProviderRoute(ctx, prov.ID); err != nil {
			return gateway.ProviderRoute{}, err
		}
	}
	route.Secret = prov.Secret
	route.LaunchSecret = prov.LaunchSecret
	return route, nil
}

// launcher is the configured Launcher, or one that serves demo providers
// only (the behaviour before provider adapters existed).
func (s *Server) launcher() gateway.Launcher {
	if s.deps.Launcher != nil {
		return s.deps.Launcher
	}
	return demoOnlyLauncher{s: s}
}

type demoOnlyLauncher struct{ s *Server }

func (d demoOnlyLauncher) Launch(_ context.Context, p gateway.ProviderRoute, req gateway.LaunchRequest) (string, error) {
	if err := d.Ready(p); err != nil {
		return "", err
	}
	return d.s.gameURL(gateway.GameSession{ID: req.SessionID}, req.Language), nil
}

func (d demoOnlyLauncher) Ready(p gateway.ProviderRoute) error {
	if p.Outbound() {
		return &gateway.ProviderUnavailableError{Provider: p.ProviderID, RetryAfter: time.Minute, Reason: "not_configured"}
	}
	return nil
}

func (d demoOnlyLauncher) Health(p gateway.ProviderRoute) gateway.ProviderHealth {
	if p.Outbound() {
		return gateway.ProviderHealth{Status: gateway.ProviderUnavailable, Endpoints: len(p.Endpoints)}
	}
	return gateway.ProviderHealth{Status: gateway.ProviderAvailable}
}

// returnURL is our return address of a session, given to providers as the
// lobby / exit URL: GET /v1/return forwards to the client's return_url.
func (s *Server) returnURL(sessionID string) string {
	return strings.TrimRight(s.cfg.PublicURL, "/") + "/v1/return?session=" + url.QueryEscape(sessionID)
}

// launchSession stores sess (or adopts the same session stored by an
// earlier try of an idempotent launch), asks the provider for the game
// address and records the launch in the ledger.
func (s *Server) launchSession(ctx context.Context, t launchTarget, sess gateway.GameSession, req launchRequest) (launchResult, error) {
	if err := s.seamlessSession(ctx, &sess, req.SessionToken); err != nil {
		return launchResult{}, err
	}
	if err := s.deps.Sessions.CreateSession(ctx, sess); err != nil {
		have, gerr := s.deps.Sessions.Session(ctx, sess.ID)
		if gerr != nil {
			return launchResult{}, err
		}
		if cerr := sameSession(have, sess); cerr != nil {
			return launchResult{}, cerr
		}
		sess = have
	}
	gameURL, err := s.launcher().Launch(ctx, t.route, gateway.LaunchRequest{SessionID: sess.ID, ClientID: sess.ClientID,
		PlayerID: sess.PlayerID, GameID: t.game.ID, GameCode: gameCode(t.game), Currency: sess.Currency,
		Language: req.Language, ReturnURL: s.returnURL(sess.ID), ClientSessionToken: req.SessionToken,
		ExpiresAt: sess.ExpiresAt, Country: req.Country})
	if err != nil {
		return launchResult{}, err
	}
	cur, err := domain.ParseCurrency(sess.Currency)
	if err != nil {
		return launchResult{}, err
	}
	res, err := s.deps.Commands.RecordLaunch(ctx, domain.Launch{Client: sess.ClientID, Player: sess.PlayerID,
		Provider: sess.ProviderID, Game: sess.GameID, Session: sess.ID, ExternalTxID: sess.LaunchTxID,
		Currency: cur, ExpiresAt: sess.ExpiresAt})
	if err != nil {
		return launchResult{}, err
	}
	return launchResult{GameURL: gameURL, EventID: res.EventID,
		ExpiresAt: sess.ExpiresAt.UTC().Format(time.RFC3339), SessionID: sess.ID}, nil
}

func gameCode(g gateway.Game) string {
	if g.Code != "" {
		return g.Code
	}
	return g.ID
}

// launch runs a launch with fresh ids: POST and GET /api/v1/game/launch.
func (s *Server) launch(c echo.Context, req launchRequest) error {
	cur, err := checkLaunchRequest(&req)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	t, err := s.resolveLaunch(ctx, req.Provider, req.GameID, req.Country)
	if err != nil {
		return err
	}
	sess := gateway.GameSession{ID: newToken("gs_"), ClientID: wire.Principal(c).ClientID, PlayerID: req.PlayerID,
		ProviderID: t.prov.ID, GameID: t.game.ID, Currency: cur.Code(), LaunchTxID: newToken("ln_"),
		ExpiresAt: s.deps.Clock.Now().Add(s.cfg.SessionTTL).UTC().Truncate(time.Second)}
	res, err := s.launchSession(ctx, t, sess, req)
	if err != nil {
		return err
	}
	return wire.OK(c, res)
}

// launchGameByQuery is GET /api/v1/game/launch: the POST launch with its
// fields as query parameters (provider, game_id, player_id, currency,
// session_token, language, country), answering the same JSON.
func (s *Server) launchGameByQuery(c echo.Context) error {
	q := c.QueryParams()
	for name, vs := range q {
		if len(vs) > 1 {
			return &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest,
				Message: "query parameter " + name + " is given more than once", Details: map[string]any{"field": name}}
		}
	}
	return s.launch(c, launchRequest{Provider: q.Get("provider"), GameID: q.Get("game_id"),
		PlayerID: q.Get("player_id"), Currency: q.Get("currency"), SessionToken: q.Get("session_token"),
		Language: q.Get("language"), Country: q.Get("country")})
}
