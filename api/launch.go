package api

import (
	"crypto/rand"
	"encoding/hex"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
)

// launchRequest is the spec's game launch request.
type launchRequest struct {
	Provider     string `json:"provider"`
	GameID       string `json:"game_id"`
	PlayerID     string `json:"player_id"`
	Currency     string `json:"currency"`
	SessionToken string `json:"session_token"`
	// Language is optional: a language tag passed on to the provider.
	Language string `json:"language"`
	// Country is optional: the player's ISO 3166-1 alpha-2 country. A game
	// blocked there is refused (403 GAME_BLOCKED_IN_COUNTRY); it is passed
	// on to providers whose launch names a country.
	Country string `json:"country"`
}

// launchResult is the spec's game launch result.
type launchResult struct {
	GameURL   string `json:"game_url"`
	EventID   string `json:"transaction_id"` // the id of the game.launched event
	ExpiresAt string `json:"expires_at"`
	SessionID string `json:"session_id"`
}

func newToken(prefix string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// launchGame is POST /api/v1/game/launch. The flow it shares with GET
// /api/v1/game/launch and the transfer launch is in catalog_launch.go: the
// game address comes from the provider's adapter (adapters/providers).
func (s *Server) launchGame(c echo.Context) error {
	var req launchRequest
	if err := wire.BindJSON(c, &req); err != nil {
		return err
	}
	return s.launch(c, req)
}
