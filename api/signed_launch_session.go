package api

import (
	"context"
	"net/url"

	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
)

// openSession stores a launched game session and records the launch in
// the ledger: the part both launches (POST /api/v1/game/launch and GET
// /v1/launch) share. A session whose id is already stored is adopted when
// it is the same launch (a retried signed launch derives its ids from its
// signature), and is an idempotency conflict naming the field otherwise.
func (s *Server) openSession(ctx context.Context, sess GameSession) (GameSession, commands.Result, error) {
	if err := s.deps.Sessions.CreateSession(ctx, sess); err != nil {
		have, gerr := s.deps.Sessions.Session(ctx, sess.ID)
		if gerr != nil {
			return GameSession{}, commands.Result{}, err
		}
		if cerr := sameSession(have, sess); cerr != nil {
			return GameSession{}, commands.Result{}, cerr
		}
		sess = have
	}
	cur, err := domain.ParseCurrency(sess.Currency)
	if err != nil {
		return GameSession{}, commands.Result{}, err
	}
	res, err := s.deps.Commands.RecordLaunch(ctx, commands.Launch{ClientID: sess.ClientID, PlayerID: sess.PlayerID,
		Provider: sess.ProviderID, GameID: sess.GameID, SessionID: sess.ID, TransactionID: sess.TransactionID,
		Currency: cur, ExpiresAt: sess.ExpiresAt})
	if err != nil {
		return GameSession{}, commands.Result{}, err
	}
	return sess, res, nil
}

func sameSession(have, want GameSession) error {
	for _, f := range []struct{ name, have, want string }{
		{"client_id", have.ClientID, want.ClientID}, {"player_id", have.PlayerID, want.PlayerID},
		{"provider", have.ProviderID, want.ProviderID}, {"game_id", have.GameID, want.GameID},
		{"currency", have.Currency, want.Currency}, {"transaction_id", have.TransactionID, want.TransactionID},
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
func (s *Server) gameURL(sess GameSession, language string) string {
	u := s.cfg.PublicURL + "/demo/play?session=" + url.QueryEscape(sess.ID)
	if language != "" {
		u += "&lang=" + url.QueryEscape(language)
	}
	return u
}
