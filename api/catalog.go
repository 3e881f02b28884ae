package api

import (
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// Paging and filters of GET /api/v1/games (docs/providers-and-games.md).
const (
	gamesDefaultPerPage = 50
	gamesMaxPerPage     = 200
	gamesMaxPage        = 1_000_000
	maxGameSearch       = 100
	maxGameCategory     = 64
)

// registerCatalogRoutes adds the provider and game listings and the launch
// variants to the authenticated /api/v1 group. Reading the catalog needs
// the launch scope: a key that may launch games may list them.
func (s *Server) registerCatalogRoutes(v1 *echo.Group) {
	read := []echo.MiddlewareFunc{requireScope(gateway.ScopeLaunch), s.requireGameCatalog}
	v1.GET("/providers", s.listProviders, read...)
	v1.GET("/games", s.listGames, read...)
	v1.GET("/games/:id", s.getGame, read...)
	v1.GET("/game/launch", s.launchGameByQuery, requireScope(gateway.ScopeLaunch))
	v1.POST("/game/launch/transfer", s.launchWithTransfer, requireScope(gateway.ScopeLaunch), requireScope(gateway.ScopeTransactionsWrite))
}

// requireGameCatalog answers 503 when the server was built without a
// catalog.
func (s *Server) requireGameCatalog(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.deps.Games == nil {
			return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "the game catalog is not configured on this server")
		}
		return next(c)
	}
}

// providerView is a provider record of GET /api/v1/providers.
type providerView struct {
	ID         string            `json:"id"`
	Name       string            `json:"name"`
	Kind       string            `json:"kind"`
	Status     string            `json:"status"`
	GamesCount int64             `json:"games_count"`
	Endpoints  providerEndpoints `json:"endpoints"`
	// RetryAfterSeconds is set when the provider is unavailable.
	RetryAfterSeconds *int64 `json:"retry_after_seconds,omitempty"`
}

type providerEndpoints struct {
	Total     int `json:"total"`
	Available int `json:"available"`
}

// gameView is a game record of GET /api/v1/games and /api/v1/games/{id}.
type gameView struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Category     string `json:"category"`
	Provider     string `json:"provider"`
	ProviderName string `json:"provider_name"`
	// BlockedCountries lets a lobby leave out the games a player's country
	// may not launch (403 GAME_BLOCKED_IN_COUNTRY); empty when none.
	BlockedCountries []string `json:"blocked_countries"`
}

func viewOfGame(g gateway.GameListing) gameView {
	blocked := g.BlockedCountries
	if blocked == nil {
		blocked = []string{}
	}
	return gameView{ID: g.ID, Name: g.Name, Category: g.Category, Provider: g.ProviderID, ProviderName: g.ProviderName,
		BlockedCountries: blocked}
}

// listProviders is GET /api/v1/providers: every enabled provider with the
// state of its endpoints' breakers (as this API process sees them).
func (s *Server) listProviders(c echo.Context) error {
	list, err := s.deps.Games.ListProviders(c.Request().Context())
	if err != nil {
		return err
	}
	out := make([]providerView, 0, len(list))
	for _, p := range list {
		h := s.launcher().Health(p.Route)
		v := providerView{ID: p.ID, Name: p.Name, Kind: p.Route.Kind, Status: h.Status, GamesCount: p.GamesCount,
			Endpoints: providerEndpoints{Total: h.Endpoints, Available: h.Available}}
		if h.Status == gateway.ProviderUnavailable {
			ra := wire.RetryAfterSeconds(h.RetryAfter)
			v.RetryAfterSeconds = &ra
		}
		out = append(out, v)
	}
	return wire.OK(c, out)
}

// listGames is GET /api/v1/games?provider=&category=&search=&page=&per_page=.
func (s *Server) listGames(c echo.Context) error {
	f := gateway.GameFilter{ProviderID: c.QueryParam("provider"), Category: strings.TrimSpace(c.QueryParam("category")),
		Search: strings.TrimSpace(c.QueryParam("search"))}
	if f.ProviderID != "" {
		if err := domain.ValidateID("provider", f.ProviderID); err != nil {
			return &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest, Message: err.Error(),
				Details: map[string]any{"field": "provider"}}
		}
	}
	for _, p := range []struct {
		name, v string
		max     int
	}{{"category", f.Category, maxGameCategory}, {"search", f.Search, maxGameSearch}} {
		if !utf8.ValidString(p.v) || utf8.RuneCountInString(p.v) > p.max || strings.ContainsFunc(p.v, isControl) {
			return &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidRequest,
				Message: p.name + " must be text of at most " + toString(p.max) + " characters",
				Details: map[string]any{"field": p.name}}
		}
	}
	var err error
	if f.Page, err = wire.QueryInt(c, "page", 1, gamesMaxPage); err != nil {
		return err
	}
	if f.PerPage, err = wire.QueryInt(c, "per_page", gamesDefaultPerPage, gamesMaxPerPage); err != nil {
		return err
	}
	games, total, err := s.deps.Games.ListGames(c.Request().Context(), f)
	if err != nil {
		return err
	}
	out := make([]gameView, 0, len(games))
	for _, g := range games {
		out = append(out, viewOfGame(g))
	}
	return wire.OKPage(c, out, f.Page, f.PerPage, total)
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

// getGame is GET /api/v1/games/{id}: an enabled game of an enabled
// provider, or 404.
func (s *Server) getGame(c echo.Context) error {
	id := c.Param("id")
	if domain.ValidateID("id", id) != nil {
		return wire.NewError(http.StatusNotFound, wire.CodeNotFound, "no such game")
	}
	g, err := s.deps.Games.GameListing(c.Request().Context(), id)
	if errors.Is(err, domain.ErrNotFound) {
		return &wire.Error{Status: http.StatusNotFound, Code: wire.CodeNotFound, Message: "no such game", Details: map[string]any{"id": id}}
	}
	if err != nil {
		return err
	}
	return wire.OK(c, viewOfGame(g))
}
