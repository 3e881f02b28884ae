package deliveries

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

// EndpointID reads :id, a webhook endpoint's id; an id no endpoint can
// have is not found.
func EndpointID(c echo.Context) (string, error) {
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

// Endpoints are the webhook-endpoint handlers of one client that the
// caller names: /api/v1/webhooks the calling client (Handlers),
// /admin/v1/clients/{id}/webhooks the client of the path (package admin).
// The same rules, bodies and answers; only the client differs.
type Endpoints struct {
	Store gateway.Webhooks
	// PrivateCallbacks says whose URLs may be at loopback or private
	// addresses, by the client's environment.
	PrivateCallbacks gateway.PrivateTargets
}

// Create creates an endpoint of clientID, a client of environment env, from
// the request body; the answer carries the signing secret, shown once.
func (h Endpoints) Create(c echo.Context, clientID, env string) error {
	var req webhookRequest
	if err := wire.BindJSON(c, &req); err != nil {
		return err
	}
	e, err := gateway.NewWebhookEndpoint(clientID, req.change(), h.PrivateCallbacks.Allows(env))
	if err != nil {
		return err
	}
	e, secret, err := h.Store.CreateWebhook(c.Request().Context(), e)
	if err != nil {
		return err
	}
	return wire.OK(c, viewOfWebhook(e, secret))
}

// List answers every endpoint of clientID, without secrets.
func (h Endpoints) List(c echo.Context, clientID string) error {
	list, err := h.Store.ListWebhooks(c.Request().Context(), clientID)
	if err != nil {
		return err
	}
	out := make([]webhookView, 0, len(list))
	for _, e := range list {
		out = append(out, viewOfWebhook(e, ""))
	}
	return wire.OK(c, out)
}

// Get answers one endpoint of clientID.
func (h Endpoints) Get(c echo.Context, clientID, id string) error {
	e, err := h.Store.Webhook(c.Request().Context(), clientID, id)
	if err != nil {
		return err
	}
	return wire.OK(c, viewOfWebhook(e, ""))
}

// Update applies the request body's fields (any of url, kinds,
// description, enabled) to an endpoint of clientID, a client of
// environment env.
func (h Endpoints) Update(c echo.Context, clientID, env, id string) error {
	var req webhookRequest
	if err := wire.BindJSON(c, &req); err != nil {
		return err
	}
	ch, err := gateway.CheckWebhookChange(req.change(), h.PrivateCallbacks.Allows(env))
	if err != nil {
		return err
	}
	e, err := h.Store.UpdateWebhook(c.Request().Context(), clientID, id, ch)
	if err != nil {
		return err
	}
	return wire.OK(c, viewOfWebhook(e, ""))
}

// Delete deletes an endpoint of clientID.
func (h Endpoints) Delete(c echo.Context, clientID, id string) error {
	if err := h.Store.DeleteWebhook(c.Request().Context(), clientID, id); err != nil {
		return err
	}
	return wire.OK(c, map[string]any{"id": id, "deleted": true})
}

// CreateWebhook answers POST /api/v1/webhooks: {url, kinds, description?,
// enabled?}. The answer carries the signing secret: the only time it is
// shown.
func (h *Handlers) CreateWebhook(c echo.Context) error {
	p := wire.Principal(c)
	return h.endpoints.Create(c, p.ClientID, p.Environment)
}

// ListWebhooks answers GET /api/v1/webhooks.
func (h *Handlers) ListWebhooks(c echo.Context) error {
	return h.endpoints.List(c, wire.Principal(c).ClientID)
}

// Webhook answers GET /api/v1/webhooks/{id}.
func (h *Handlers) Webhook(c echo.Context) error {
	id, err := EndpointID(c)
	if err != nil {
		return err
	}
	return h.endpoints.Get(c, wire.Principal(c).ClientID, id)
}

// UpdateWebhook answers PATCH /api/v1/webhooks/{id}: any of url, kinds,
// description, enabled.
func (h *Handlers) UpdateWebhook(c echo.Context) error {
	id, err := EndpointID(c)
	if err != nil {
		return err
	}
	p := wire.Principal(c)
	return h.endpoints.Update(c, p.ClientID, p.Environment, id)
}

// DeleteWebhook answers DELETE /api/v1/webhooks/{id}: pending deliveries
// to it are parked.
func (h *Handlers) DeleteWebhook(c echo.Context) error {
	id, err := EndpointID(c)
	if err != nil {
		return err
	}
	return h.endpoints.Delete(c, wire.Principal(c).ClientID, id)
}

// RotateWebhookSecret answers POST /api/v1/webhooks/{id}/rotate-secret: a
// new signing secret, shown once.
func (h *Handlers) RotateWebhookSecret(c echo.Context) error {
	id, err := EndpointID(c)
	if err != nil {
		return err
	}
	secret, err := h.webhooks.RotateWebhookSecret(c.Request().Context(), wire.Principal(c).ClientID, id)
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

// ForwardCallback answers GET /api/v1/forward-callback: where game
// activity is forwarded, and whether a signing secret exists (the secret
// itself is shown only by rotate-secret).
func (h *Handlers) ForwardCallback(c echo.Context) error {
	fc, err := h.webhooks.ForwardCallback(c.Request().Context(), wire.Principal(c).ClientID)
	if err != nil {
		return err
	}
	return wire.OK(c, forwardCallbackView{URL: fc.URL, SecretSet: fc.SecretCreatedAt != nil,
		SecretCreatedAt: wire.OptionalTime(fc.SecretCreatedAt), SignatureHeader: "X-Pitboss-Signature"})
}

// RotateForwardCallbackSecret answers POST
// /api/v1/forward-callback/rotate-secret: a new key for the forwarded
// callbacks' signature, shown once.
func (h *Handlers) RotateForwardCallbackSecret(c echo.Context) error {
	secret, err := h.webhooks.RotateCallbackSecret(c.Request().Context(), wire.Principal(c).ClientID)
	if err != nil {
		return err
	}
	return wire.OK(c, map[string]string{"secret": secret})
}
