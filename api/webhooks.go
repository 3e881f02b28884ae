package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

type webhookRequest struct {
	URL         *string  `json:"url"`
	Kinds       []string `json:"kinds"`
	Description *string  `json:"description"`
	Enabled     *bool    `json:"enabled"`
}

type webhookView struct {
	ID          string   `json:"id"`
	URL         string   `json:"url"`
	Kinds       []string `json:"kinds"`
	Description string   `json:"description"`
	Enabled     bool     `json:"enabled"`
	CreatedAt   string   `json:"created_at"`
	UpdatedAt   string   `json:"updated_at"`
	// Secret is present only in the answers of create and rotate-secret.
	Secret string `json:"secret,omitempty"`
}

func viewOfWebhook(e gateway.WebhookEndpoint, secret string) webhookView {
	return webhookView{ID: e.ID, URL: e.URL, Kinds: e.Kinds, Description: e.Description, Enabled: e.Enabled,
		CreatedAt: wire.FormatTime(e.CreatedAt), UpdatedAt: wire.FormatTime(e.UpdatedAt),
		Secret: secret}
}

// webhookID reads :id; an id no endpoint can have is not found.
func webhookID(c echo.Context) (string, error) {
	id := c.Param("id")
	if domain.ValidateID("id", id) != nil {
		return "", wire.NewError(http.StatusNotFound, wire.CodeNotFound, "no such webhook endpoint")
	}
	return id, nil
}

// change is the request's fields as the gateway's webhook rules take them.
func (r webhookRequest) change() gateway.WebhookChange {
	return gateway.WebhookChange{URL: r.URL, Kinds: r.Kinds, Description: r.Description, Enabled: r.Enabled}
}

// The handlers below serve /api/v1/webhooks for the calling client and
// /admin/v1/clients/{id}/webhooks for any client: the same rules, bodies
// and answers, only the client differs.

// createWebhookOf creates an endpoint of clientID from the request body;
// the answer carries the signing secret, shown once.
func (s *Server) createWebhookOf(c echo.Context, clientID string) error {
	var req webhookRequest
	if err := wire.BindJSON(c, &req); err != nil {
		return err
	}
	e, err := gateway.NewWebhookEndpoint(clientID, req.change(), s.cfg.AllowPrivateCallbacks)
	if err != nil {
		return err
	}
	e, secret, err := s.deps.Webhooks.CreateWebhook(c.Request().Context(), e)
	if err != nil {
		return err
	}
	return wire.OK(c, viewOfWebhook(e, secret))
}

func (s *Server) listWebhooksOf(c echo.Context, clientID string) error {
	list, err := s.deps.Webhooks.ListWebhooks(c.Request().Context(), clientID)
	if err != nil {
		return err
	}
	out := make([]webhookView, 0, len(list))
	for _, e := range list {
		out = append(out, viewOfWebhook(e, ""))
	}
	return wire.OK(c, out)
}

func (s *Server) getWebhookOf(c echo.Context, clientID, id string) error {
	e, err := s.deps.Webhooks.Webhook(c.Request().Context(), clientID, id)
	if err != nil {
		return err
	}
	return wire.OK(c, viewOfWebhook(e, ""))
}

// updateWebhookOf applies the request body's fields to an endpoint of
// clientID.
func (s *Server) updateWebhookOf(c echo.Context, clientID, id string) error {
	var req webhookRequest
	if err := wire.BindJSON(c, &req); err != nil {
		return err
	}
	ch, err := gateway.CheckWebhookChange(req.change(), s.cfg.AllowPrivateCallbacks)
	if err != nil {
		return err
	}
	e, err := s.deps.Webhooks.UpdateWebhook(c.Request().Context(), clientID, id, ch)
	if err != nil {
		return err
	}
	return wire.OK(c, viewOfWebhook(e, ""))
}

func (s *Server) deleteWebhookOf(c echo.Context, clientID, id string) error {
	if err := s.deps.Webhooks.DeleteWebhook(c.Request().Context(), clientID, id); err != nil {
		return err
	}
	return wire.OK(c, map[string]any{"id": id, "deleted": true})
}

// POST /api/v1/webhooks: {url, kinds, description?, enabled?}. The answer
// carries the signing secret: the only time it is shown.
func (s *Server) createWebhook(c echo.Context) error {
	return s.createWebhookOf(c, wire.Principal(c).ClientID)
}

// GET /api/v1/webhooks
func (s *Server) listWebhooks(c echo.Context) error {
	return s.listWebhooksOf(c, wire.Principal(c).ClientID)
}

// GET /api/v1/webhooks/{id}
func (s *Server) getWebhook(c echo.Context) error {
	id, err := webhookID(c)
	if err != nil {
		return err
	}
	return s.getWebhookOf(c, wire.Principal(c).ClientID, id)
}

// PATCH /api/v1/webhooks/{id}: any of url, kinds, description, enabled.
func (s *Server) updateWebhook(c echo.Context) error {
	id, err := webhookID(c)
	if err != nil {
		return err
	}
	return s.updateWebhookOf(c, wire.Principal(c).ClientID, id)
}

// DELETE /api/v1/webhooks/{id}: pending deliveries to it are parked.
func (s *Server) deleteWebhook(c echo.Context) error {
	id, err := webhookID(c)
	if err != nil {
		return err
	}
	return s.deleteWebhookOf(c, wire.Principal(c).ClientID, id)
}

// POST /api/v1/webhooks/{id}/rotate-secret
func (s *Server) rotateWebhookSecret(c echo.Context) error {
	id, err := webhookID(c)
	if err != nil {
		return err
	}
	secret, err := s.deps.Webhooks.RotateWebhookSecret(c.Request().Context(), wire.Principal(c).ClientID, id)
	if err != nil {
		return err
	}
	return wire.OK(c, map[string]string{"id": id, "secret": secret})
}

type forwardCallbackView struct {
	URL             string  `json:"url"`
	SecretSet       bool    `json:"secret_set"`
	SecretCreatedAt *string `json:"secret_created_at"`
	SignatureHeader string  `json:"signature_header"`
}

// GET /api/v1/forward-callback: where game activity is forwarded, and
// whether a signing secret exists (the secret itself is shown only by
// rotate-secret).
func (s *Server) getForwardCallback(c echo.Context) error {
	fc, err := s.deps.Webhooks.ForwardCallback(c.Request().Context(), wire.Principal(c).ClientID)
	if err != nil {
		return err
	}
	return wire.OK(c, forwardCallbackView{URL: fc.URL, SecretSet: fc.SecretCreatedAt != nil,
		SecretCreatedAt: wire.OptionalTime(fc.SecretCreatedAt), SignatureHeader: "X-Pitboss-Signature"})
}

// POST /api/v1/forward-callback/rotate-secret: a new key for the
// forwarded callbacks' signature, shown once.
func (s *Server) rotateForwardCallbackSecret(c echo.Context) error {
	secret, err := s.deps.Webhooks.RotateCallbackSecret(c.Request().Context(), wire.Principal(c).ClientID)
	if err != nil {
		return err
	}
	return wire.OK(c, map[string]string{"secret": secret})
}
