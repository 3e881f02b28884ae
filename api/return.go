package api

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
)

// returnAddress is GET /v1/return?session=<id>: where a game sends the
// player when it closes. The session id is the one in the game URL. The
// player is redirected (302) to the return_url given at launch when it is
// still allowed (http or https, host on the client's allowed return hosts,
// checked again now: the client may have removed the host since); otherwise
// the player sees a plain "game closed" page. See docs/signed-launch.md.
func (s *Server) returnAddress(c echo.Context) error {
	ctx := c.Request().Context()
	id := c.QueryParam("session")
	closed := pageData{Title: "Game closed", Text: "The game has ended. You can close this window."}
	if id == "" {
		return htmlPage(c, http.StatusOK, closed)
	}
	if domain.ValidateID("session", id) != nil { // also keeps U+0000 away from the database
		return htmlPage(c, http.StatusNotFound, closed)
	}
	sess, err := s.deps.Sessions.Session(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return htmlPage(c, http.StatusNotFound, closed)
	}
	if err != nil {
		s.log.ErrorContext(ctx, "return address", "error", err, "session_id", id, "request_id", wire.RequestID(c))
		return htmlPage(c, http.StatusInternalServerError, pageData{Title: closed.Title, Text: closed.Text,
			RequestID: wire.RequestID(c)})
	}
	if sess.ReturnURL == "" {
		return htmlPage(c, http.StatusOK, closed)
	}
	if s.deps.LaunchClients == nil {
		return htmlPage(c, http.StatusOK, closed)
	}
	client, err := s.deps.LaunchClients.LaunchClient(ctx, sess.ClientID)
	if err != nil {
		s.log.ErrorContext(ctx, "return address", "error", err, "session_id", id, "request_id", wire.RequestID(c))
		return htmlPage(c, http.StatusInternalServerError, pageData{Title: closed.Title, Text: closed.Text,
			RequestID: wire.RequestID(c)})
	}
	if err := checkReturnURL(sess.ReturnURL, client.AllowedReturnHosts); err != nil {
		s.log.WarnContext(ctx, "return_url no longer allowed", "session_id", id, "client_id", sess.ClientID,
			"reason", err.Error(), "request_id", wire.RequestID(c))
		return htmlPage(c, http.StatusForbidden, closed)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	return c.Redirect(http.StatusFound, sess.ReturnURL)
}
