package api

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/domain"
)

// Limits of webhook endpoint fields.
const (
	maxWebhookURLLength         = 2048
	maxWebhookDescriptionLength = 256
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

func viewOfWebhook(e WebhookEndpoint, secret string) webhookView {
	return webhookView{ID: e.ID, URL: e.URL, Kinds: e.Kinds, Description: e.Description, Enabled: e.Enabled,
		CreatedAt: e.CreatedAt.UTC().Format(deliveryTimeLayout), UpdatedAt: e.UpdatedAt.UTC().Format(deliveryTimeLayout),
		Secret: secret}
}

func webhookFieldError(field, msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest, Message: msg, Details: map[string]any{"field": field}}
}

// CheckCallbackURL checks a callback or webhook URL when it is configured:
// http or https, a host, no credentials. Unless private targets are allowed
// it refuses localhost and literal non-public IPs early; the delivery
// client checks every resolved address again when it connects, which is
// the check that counts (a name can resolve anywhere).
func CheckCallbackURL(field, raw string, allowPrivate bool) error {
	if raw == "" {
		return webhookFieldError(field, field+" is required")
	}
	if len(raw) > maxWebhookURLLength || !utf8.ValidString(raw) {
		return webhookFieldError(field, field+" must be a URL of at most 2048 characters")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return webhookFieldError(field, field+" must be an absolute http or https URL")
	}
	if u.User != nil {
		return webhookFieldError(field, field+" must not carry credentials")
	}
	if u.Fragment != "" {
		return webhookFieldError(field, field+" must not have a fragment")
	}
	if allowPrivate {
		return nil
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return webhookFieldError(field, field+" points at this machine; callbacks go to public addresses only")
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.Unmap()
		if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified() || ip.IsMulticast() ||
			ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() {
			return webhookFieldError(field, field+" points at a non-public address; callbacks go to public addresses only")
		}
	} else if net.ParseIP(host) != nil {
		return webhookFieldError(field, field+" has an IP address in an unusual form")
	}
	return nil
}

// checkWebhookKinds validates a subscription: known kinds or "*", at least one;
// duplicates are dropped, the order kept.
func checkWebhookKinds(kinds []string) ([]string, error) {
	if len(kinds) == 0 {
		return nil, webhookFieldError("kinds", `kinds must list at least one event kind (or "*")`)
	}
	var out []string
	for _, k := range kinds {
		if k != KindAll && !slices.Contains(WebhookKinds, k) {
			return nil, &Error{Status: http.StatusBadRequest, Code: CodeInvalidRequest,
				Message: "unknown event kind " + clipWebhookKind(k) + "; kinds are " + strings.Join(WebhookKinds, ", ") + ` or "*"`,
				Details: map[string]any{"field": "kinds", "kind": clipWebhookKind(k)}}
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out, nil
}

func clipWebhookKind(k string) string {
	if len(k) > 40 {
		return k[:40] + "…"
	}
	return k
}

func checkWebhookDescription(d *string) error {
	if d != nil && (utf8.RuneCountInString(*d) > maxWebhookDescriptionLength || !utf8.ValidString(*d)) {
		return webhookFieldError("description", "description must be at most 256 characters")
	}
	return nil
}

// webhookID reads :id; an id no endpoint can have is not found.
func webhookID(c echo.Context) (string, error) {
	id := c.Param("id")
	if domain.ValidateID("id", id) != nil {
		return "", apiError(http.StatusNotFound, CodeNotFound, "no such webhook endpoint")
	}
	return id, nil
}

// POST /api/v1/webhooks: {url, kinds, description?, enabled?}. The answer
// carries the signing secret: the only time it is shown.
func (s *Server) createWebhook(c echo.Context) error {
	var req webhookRequest
	if _, err := bindJSON(c, &req); err != nil {
		return err
	}
	if req.URL == nil {
		return webhookFieldError("url", "url is required")
	}
	if err := CheckCallbackURL("url", *req.URL, s.cfg.AllowPrivateCallbacks); err != nil {
		return err
	}
	kinds, err := checkWebhookKinds(req.Kinds)
	if err != nil {
		return err
	}
	if err := checkWebhookDescription(req.Description); err != nil {
		return err
	}
	e := WebhookEndpoint{ClientID: principal(c).ClientID, URL: *req.URL, Kinds: kinds, Enabled: true}
	if req.Description != nil {
		e.Description = *req.Description
	}
	if req.Enabled != nil {
		e.Enabled = *req.Enabled
	}
	e, secret, err := s.deps.Webhooks.CreateWebhook(c.Request().Context(), e)
	if err != nil {
		return err
	}
	return ok(c, viewOfWebhook(e, secret))
}

// GET /api/v1/webhooks
func (s *Server) listWebhooks(c echo.Context) error {
	list, err := s.deps.Webhooks.ListWebhooks(c.Request().Context(), principal(c).ClientID)
	if err != nil {
		return err
	}
	out := make([]webhookView, 0, len(list))
	for _, e := range list {
		out = append(out, viewOfWebhook(e, ""))
	}
	return ok(c, out)
}

// GET /api/v1/webhooks/{id}
func (s *Server) getWebhook(c echo.Context) error {
	id, err := webhookID(c)
	if err != nil {
		return err
	}
	e, err := s.deps.Webhooks.Webhook(c.Request().Context(), principal(c).ClientID, id)
	if err != nil {
		return err
	}
	return ok(c, viewOfWebhook(e, ""))
}

// PATCH /api/v1/webhooks/{id}: any of url, kinds, description, enabled.
func (s *Server) updateWebhook(c echo.Context) error {
	id, err := webhookID(c)
	if err != nil {
		return err
	}
	var req webhookRequest
	if _, err := bindJSON(c, &req); err != nil {
		return err
	}
	ch := WebhookChange{URL: req.URL, Description: req.Description, Enabled: req.Enabled}
	if req.URL != nil {
		if err := CheckCallbackURL("url", *req.URL, s.cfg.AllowPrivateCallbacks); err != nil {
			return err
		}
	}
	if req.Kinds != nil {
		if ch.Kinds, err = checkWebhookKinds(req.Kinds); err != nil {
			return err
		}
	}
	if err := checkWebhookDescription(req.Description); err != nil {
		return err
	}
	e, err := s.deps.Webhooks.UpdateWebhook(c.Request().Context(), principal(c).ClientID, id, ch)
	if err != nil {
		return err
	}
	return ok(c, viewOfWebhook(e, ""))
}

// DELETE /api/v1/webhooks/{id}: pending deliveries to it are parked.
func (s *Server) deleteWebhook(c echo.Context) error {
	id, err := webhookID(c)
	if err != nil {
		return err
	}
	if err := s.deps.Webhooks.DeleteWebhook(c.Request().Context(), principal(c).ClientID, id); err != nil {
		return err
	}
	return ok(c, map[string]any{"id": id, "deleted": true})
}

// POST /api/v1/webhooks/{id}/rotate-secret
func (s *Server) rotateWebhookSecret(c echo.Context) error {
	id, err := webhookID(c)
	if err != nil {
		return err
	}
	secret, err := s.deps.Webhooks.RotateWebhookSecret(c.Request().Context(), principal(c).ClientID, id)
	if err != nil {
		return err
	}
	return ok(c, map[string]string{"id": id, "secret": secret})
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
	fc, err := s.deps.Webhooks.ForwardCallback(c.Request().Context(), principal(c).ClientID)
	if err != nil {
		return err
	}
	return ok(c, forwardCallbackView{URL: fc.URL, SecretSet: fc.SecretCreatedAt != nil,
		SecretCreatedAt: deliveryTime(fc.SecretCreatedAt), SignatureHeader: "X-Pitboss-Signature"})
}

// POST /api/v1/forward-callback/rotate-secret: a new key for the
// forwarded callbacks' signature, shown once.
func (s *Server) rotateForwardCallbackSecret(c echo.Context) error {
	secret, err := s.deps.Webhooks.RotateCallbackSecret(c.Request().Context(), principal(c).ClientID)
	if err != nil {
		return err
	}
	return ok(c, map[string]string{"secret": secret})
}
