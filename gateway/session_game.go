package gateway

import (
	"context"
	"errors"
	"fmt"

	"github.com/pitboss/pitboss/domain"
)

// ErrNotSessionsGame: a wallet call named a game that is not a game of its
// session's provider in the catalog. Each dialect answers it with its own
// status (Caleta RS_ERROR_INVALID_GAME, Evolution INVALID_PARAMETER, Red
// Tiger's invalid input).
var ErrNotSessionsGame = errors.New("not a game of the session's provider")

// SessionGame is the game a provider dialect's call is booked under: the
// session's own when code is empty or names it (by our id or by its
// provider code, games.provider_game_code), else the game code names (our
// id), which must be a game of the session's provider — a lobby or live
// provider moves a player between games in one session, and each game's
// money is that game's GGR. A game the catalog lacks, or another
// provider's, is ErrNotSessionsGame.
func SessionGame(ctx context.Context, catalog Catalog, sess GameSession, code string) (string, error) {
	if code == "" || code == sess.GameID {
		return sess.GameID, nil
	}
	own, err := catalog.Game(ctx, sess.GameID)
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		return "", fmt.Errorf("look up the session's game: %w", err)
	}
	if err == nil && own.Code == code {
		return own.ID, nil
	}
	g, err := catalog.Game(ctx, code)
	switch {
	case errors.Is(err, domain.ErrNotFound) || (err == nil && g.ProviderID != sess.ProviderID):
		return "", ErrNotSessionsGame
	case err != nil:
		return "", fmt.Errorf("look up game %s: %w", code, err)
	}
	return g.ID, nil
}
