package api

import (
	"net/url"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

func sameSession(have, want gateway.GameSession) error {
	for _, f := range []struct{ name, have, want string }{
		{"client_id", have.ClientID, want.ClientID}, {"player_id", have.PlayerID, want.PlayerID},
		{"provider", have.ProviderID, want.ProviderID}, {"game_id", have.GameID, want.GameID},
		{"currency", have.Currency, want.Currency}, {"transaction_id", have.LaunchTxID, want.LaunchTxID},
		{"return_url", have.ReturnURL, want.ReturnURL},
	} {
		if f.have != f.want {
			return &domain.IdempotencyConflictError{Key: "session " + want.ID, Field: f.name, Original: f.have, Given: f.want}
		}
	}
	return nil
}

// gameURL is where the player plays a session. The game knows its session
// by the session parameter, and sends the player to
// {PublicURL}/v1/return?session=<id> when it closes.
func (s *Server) gameURL(sess gateway.GameSession, language string) string {
	u := s.cfg.PublicURL + "/demo/play?session=" + url.QueryEscape(sess.ID)
	if language != "" {
		u += "&lang=" + url.QueryEscape(language)
	}
	return u
}
