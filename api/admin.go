package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/deliveries"
	"github.com/pitboss/pitboss/api/usage"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// The admin API (/admin/v1): clients, their keys, plan tiers, launch and
// callback settings, webhook endpoints and usage, for the operators of
// Pitboss itself. It is authenticated by one admin token from
// configuration (PITBOSS_ADMIN_TOKEN); without a token it does not exist
// (404). See docs/keys-and-admin.md.

// MinAdminTokenLength is the shortest admin token accepted.
const MinAdminTokenLength = 32

// Admin list paging.
const (
	adminDefaultPerPage = 50
	adminMaxPerPage     = 200
)

func (s *Server) registerAdminRoutes(e *echo.Echo) {
	a := e.Group("/admin/v1", s.adminAuth)
	a.GET("/tiers", s.adminTiers)
	a.POST("/clients", s.adminCreateClient)
	a.GET("/clients", s.adminListClients)
	a.GET("/clients/:client", s.adminGetClient)
	a.PATCH("/clients/:client", s.adminUpdateClient)
	a.POST("/clients/:client/client-secret", s.adminIssueClientSecret)
	a.GET("/clients/:client/usage", s.adminUsage)
	a.GET("/clients/:client/keys", s.adminListKeys)
	a.POST("/clients/:client/keys", s.adminIssueKey)
	a.GET("/clients/:client/keys/:key", s.adminGetKey)
	a.POST("/clients/:client/keys/:key/rotate", s.adminRotateKey)
	a.POST("/clients/:client/keys/:key/revoke", s.adminRevokeKey)
	a.GET("/clients/:client/webhooks", s.adminListWebhooks)
	a.POST("/clients/:client/webhooks", s.adminCreateWebhook)
	a.GET("/clients/:client/webhooks/:id", s.adminGetWebhook)
	a.PATCH("/clients/:client/webhooks/:id", s.adminUpdateWebhook)
	a.DELETE("/clients/:client/webhooks/:id", s.adminDeleteWebhook)
}

// adminAuth checks Authorization: Bearer <admin token> in constant time.
// A valid client API key is 403 (a credential without the permission);
// anything else is 401.
func (s *Server) adminAuth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.adminDigest == nil {
			return wire.NewError(http.StatusNotFound, wire.CodeNotFound, "the admin API is disabled: PITBOSS_ADMIN_TOKEN is not set")
		}
		scheme, token, found := strings.Cut(c.Request().Header.Get(echo.HeaderAuthorization), " ")
		token = strings.TrimSpace(token)
		if !found || !strings.EqualFold(scheme, "Bearer") || token == "" {
			return wire.NewError(http.StatusUnauthorized, wire.CodeUnauthorized, "missing admin token: send Authorization: Bearer <PITBOSS_ADMIN_TOKEN>")
		}
		d := sha256.Sum256([]byte(token))
		if subtle.ConstantTimeCompare(d[:], s.adminDigest) != 1 {
			if s.deps.Keys != nil {
				if _, err := s.deps.Keys.AuthenticateKey(c.Request().Context(), gateway.HashKey(token)); err == nil {
					return wire.NewError(http.StatusForbidden, wire.CodeForbidden, "a client API key cannot use the admin API")
				}
			}
			return wire.NewError(http.StatusUnauthorized, wire.CodeUnauthorized, "invalid admin token")
		}
		if s.deps.Admin.Clients == nil {
			return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "the admin API has no client store configured")
		}
		return next(c)
	}
}

// adminClientID reads :client; an id no client can have is not found.
func adminClientID(c echo.Context) (string, error) {
	id := c.Param("client")
	if domain.ValidateID("client", id) != nil {
		return "", wire.NewError(http.StatusNotFound, wire.CodeNotFound, "no such client")
	}
	return id, nil
}

type rateTierView struct {
	Tier          string `json:"tier"`
	Limit         int    `json:"limit"`
	WindowSeconds int64  `json:"window_seconds"`
}

func viewOfTier(t gateway.RateTier) rateTierView {
	return rateTierView{Tier: t.Name, Limit: t.Limit, WindowSeconds: int64(t.Window / time.Second)}
}

type adminClientView struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Environment string `json:"environment"`
	Plan        string `json:"plan"`
	// RateLimit is the tier that applies: the plan's, or the default tier
	// when the plan is not configured.
	RateLimit       rateTierView         `json:"rate_limit"`
	CreatedAt       string               `json:"created_at"`
	SignedLaunch    *signedLaunchView    `json:"signed_launch,omitempty"`
	ForwardCallback *adminCallbackView   `json:"forward_callback,omitempty"`
	Created         *bool                `json:"created,omitempty"`
	Keys            *adminClientKeyCount `json:"keys,omitempty"`
}

type adminClientKeyCount struct {
	Active int `json:"active"`
	Total  int `json:"total"`
}

type signedLaunchView struct {
	// RequireSignature null means the environment's default.
	RequireSignature   *bool    `json:"require_signature"`
	SignatureRequired  bool     `json:"signature_required"`
	IPAllowList        []string `json:"ip_allow_list"`
	AllowedReturnHosts []string `json:"allowed_return_hosts"`
	DefaultCurrency    string   `json:"default_currency"`
	ClientSecretSet    bool     `json:"client_secret_set"`
}

type adminCallbackView struct {
	URL       string `json:"url"`
	SecretSet bool   `json:"secret_set"`
}

func (s *Server) viewOfClient(cl gateway.Client) adminClientView {
	return adminClientView{ID: cl.ID, Name: cl.Name, Environment: cl.Environment, Plan: cl.Plan,
		RateLimit: viewOfTier(s.cfg.RateLimits.Tier(cl.Plan)), CreatedAt: wire.FormatTime(cl.CreatedAt)}
}

// fullClientView adds what the other stores know of the client.
func (s *Server) fullClientView(c echo.Context, cl gateway.Client) (adminClientView, error) {
	ctx := c.Request().Context()
	v := s.viewOfClient(cl)
	keys, err := s.deps.Admin.Clients.ListAPIKeys(ctx, cl.ID)
	if err != nil {
		return v, err
	}
	now := s.now()
	v.Keys = &adminClientKeyCount{Total: len(keys)}
	for _, k := range keys {
		if k.State(now) == gateway.KeyActive {
			v.Keys.Active++
		}
	}
	if s.deps.Admin.Launch != nil {
		lc, err := s.deps.Admin.Launch.LaunchClient(ctx, cl.ID)
		if err != nil {
			return v, err
		}
		sl := &signedLaunchView{RequireSignature: lc.RequireSignature, SignatureRequired: lc.SignatureRequired(),
			IPAllowList: make([]string, 0, len(lc.IPAllowList)), AllowedReturnHosts: lc.AllowedReturnHosts,
			DefaultCurrency: lc.DefaultCurrency, ClientSecretSet: lc.Secret != nil}
		for _, p := range lc.IPAllowList {
			sl.IPAllowList = append(sl.IPAllowList, p.String())
		}
		if sl.AllowedReturnHosts == nil {
			sl.AllowedReturnHosts = []string{}
		}
		v.SignedLaunch = sl
	}
	if s.deps.Admin.Callbacks != nil {
		fc, err := s.deps.Admin.Callbacks.ForwardCallback(ctx, cl.ID)
		if err != nil {
			return v, err
		}
		v.ForwardCallback = &adminCallbackView{URL: fc.URL, SecretSet: fc.SecretCreatedAt != nil}
	}
	return v, nil
}

// GET /admin/v1/tiers: the configured plan tiers.
func (s *Server) adminTiers(c echo.Context) error {
	out := make([]rateTierView, 0, len(s.cfg.RateLimits.Tiers))
	for _, t := range s.cfg.RateLimits.Tiers {
		out = append(out, viewOfTier(t))
	}
	return wire.OK(c, map[string]any{"tiers": out, "default_tier": s.cfg.RateLimits.DefaultTier})
}

type adminClientRequest struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Environment string `json:"environment"`
	Plan        string `json:"plan"`
}

// POST /admin/v1/clients {id, name, environment, plan?}: 200 with the
// client and created true; the same request again answers the existing
// client with created false; the id with other settings is 409
// CLIENT_EXISTS.
func (s *Server) adminCreateClient(c echo.Context) error {
	var req adminClientRequest
	if err := wire.BindJSON(c, &req); err != nil {
		return err
	}
	if err := domain.ValidateID("id", req.ID); err != nil {
		return &gateway.FieldError{Field: "id", Message: "id is required: 1 to 128 characters of A-Z a-z 0-9 . _ @ -"}
	}
	if err := gateway.CheckClientName(req.Name); err != nil {
		return err
	}
	if err := gateway.CheckEnvironment(req.Environment); err != nil {
		return err
	}
	if req.Plan == "" {
		req.Plan = s.cfg.RateLimits.DefaultTier
	}
	if err := s.cfg.RateLimits.CheckPlan(req.Plan); err != nil {
		return err
	}
	cl, created, err := s.deps.Admin.Clients.AddClient(c.Request().Context(),
		gateway.Client{ID: req.ID, Name: req.Name, Environment: req.Environment, Plan: req.Plan})
	if err != nil {
		return err
	}
	if created {
		s.log.InfoContext(c.Request().Context(), "admin: client created", "client_id", cl.ID, "environment", cl.Environment,
			"plan", cl.Plan, "request_id", wire.RequestID(c))
	}
	v := s.viewOfClient(cl)
	v.Created = &created
	return wire.OK(c, v)
}

// GET /admin/v1/clients?page=&per_page=
func (s *Server) adminListClients(c echo.Context) error {
	page, err := wire.QueryInt(c, "page", 1, 1<<30)
	if err != nil {
		return err
	}
	perPage, err := wire.QueryInt(c, "per_page", adminDefaultPerPage, adminMaxPerPage)
	if err != nil {
		return err
	}
	list, total, err := s.deps.Admin.Clients.ListClients(c.Request().Context(), page, perPage)
	if err != nil {
		return err
	}
	out := make([]adminClientView, 0, len(list))
	for _, cl := range list {
		out = append(out, s.viewOfClient(cl))
	}
	return wire.OKPage(c, out, page, perPage, total)
}

// GET /admin/v1/clients/{id}: the client with its launch and callback
// settings and key counts.
func (s *Server) adminGetClient(c echo.Context) error {
	id, err := adminClientID(c)
	if err != nil {
		return err
	}
	cl, err := s.deps.Admin.Clients.GetClient(c.Request().Context(), id)
	if err != nil {
		return err
	}
	v, err := s.fullClientView(c, cl)
	if err != nil {
		return err
	}
	return wire.OK(c, v)
}

type adminClientPatch struct {
	Name               *string         `json:"name"`
	Plan               *string         `json:"plan"`
	Environment        *string         `json:"environment"`
	ForwardCallbackURL *string         `json:"forward_callback_url"`
	RequireSignature   json.RawMessage `json:"require_signature"` // absent: nil; null: "null"
	IPAllowList        *[]string       `json:"ip_allow_list"`
	AllowedReturnHosts *[]string       `json:"allowed_return_hosts"`
	DefaultCurrency    *string         `json:"default_currency"`
}

func (p adminClientPatch) launchChanged() bool {
	return p.RequireSignature != nil || p.IPAllowList != nil || p.AllowedReturnHosts != nil || p.DefaultCurrency != nil
}

// PATCH /admin/v1/clients/{id}: any of name, plan, forward_callback_url
// ("" stops forwarding), require_signature (true, false, or null for the
// environment's default), ip_allow_list, allowed_return_hosts,
// default_currency. Everything is checked before anything is written; the
// stores are then written one after another (launch settings, callback
// address, name and plan), so a failing database may leave a part applied
// — repeating the PATCH completes it.
func (s *Server) adminUpdateClient(c echo.Context) error {
	id, err := adminClientID(c)
	if err != nil {
		return err
	}
	var req adminClientPatch
	if err := wire.BindJSON(c, &req); err != nil {
		return err
	}
	if req.Environment != nil {
		return &gateway.FieldError{Field: "environment",
			Message: "a client's environment cannot change: its keys belong to it; create a new client"}
	}
	if req.Name != nil {
		if err := gateway.CheckClientName(*req.Name); err != nil {
			return err
		}
	}
	if req.Plan != nil {
		if err := s.cfg.RateLimits.CheckPlan(*req.Plan); err != nil {
			return err
		}
	}
	if req.ForwardCallbackURL != nil && *req.ForwardCallbackURL != "" {
		if err := gateway.CheckCallbackURL("forward_callback_url", *req.ForwardCallbackURL, s.cfg.AllowPrivateCallbacks); err != nil {
			return err
		}
	}
	var requireSig *bool
	if req.RequireSignature != nil && string(req.RequireSignature) != "null" {
		var b bool
		if err := json.Unmarshal(req.RequireSignature, &b); err != nil {
			return &gateway.FieldError{Field: "require_signature",
				Message: "require_signature must be true, false or null (the environment's default)"}
		}
		requireSig = &b
	}
	var allow []netip.Prefix
	if req.IPAllowList != nil {
		if allow, err = gateway.ParseAllowList(*req.IPAllowList); err != nil {
			return err
		}
	}
	if req.DefaultCurrency != nil && *req.DefaultCurrency != "" {
		if _, err := domain.ParseCurrency(strings.ToUpper(*req.DefaultCurrency)); err != nil {
			return &wire.Error{Status: http.StatusBadRequest, Code: wire.CodeUnknownCurrency,
				Message: "default_currency " + strconv.Quote(gateway.ClipValue(*req.DefaultCurrency)) + " is not a known currency",
				Details: map[string]any{"field": "default_currency"}}
		}
	}
	if (req.launchChanged() && s.deps.Admin.Launch == nil) || (req.ForwardCallbackURL != nil && s.deps.Admin.Callbacks == nil) {
		return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "the store of these settings is not configured")
	}

	ctx := c.Request().Context()
	cl, err := s.deps.Admin.Clients.GetClient(ctx, id)
	if err != nil {
		return err
	}
	if req.launchChanged() {
		lc, err := s.deps.Admin.Launch.LaunchClient(ctx, id)
		if err != nil {
			return err
		}
		ls := lc.LaunchSettings
		if req.RequireSignature != nil {
			ls.RequireSignature = requireSig
		}
		if req.IPAllowList != nil {
			ls.IPAllowList = allow
		}
		if req.AllowedReturnHosts != nil {
			ls.AllowedReturnHosts = *req.AllowedReturnHosts
		}
		if req.DefaultCurrency != nil {
			ls.DefaultCurrency = strings.ToUpper(*req.DefaultCurrency)
		}
		if err := s.deps.Admin.Launch.SetLaunchSettings(ctx, id, ls); err != nil {
			return err
		}
	}
	if req.ForwardCallbackURL != nil {
		if err := s.deps.Admin.Callbacks.SetForwardCallbackURL(ctx, id, *req.ForwardCallbackURL); err != nil {
			return err
		}
	}
	if req.Name != nil || req.Plan != nil {
		if cl, err = s.deps.Admin.Clients.UpdateClient(ctx, id, gateway.ClientChange{Name: req.Name, Plan: req.Plan}); err != nil {
			return err
		}
	}
	s.log.InfoContext(ctx, "admin: client updated", "client_id", id, "request_id", wire.RequestID(c))
	v, err := s.fullClientView(c, cl)
	if err != nil {
		return err
	}
	return wire.OK(c, v)
}

// POST /admin/v1/clients/{id}/client-secret: a new client secret for the
// signed launch, shown once; the previous one stops working at once.
func (s *Server) adminIssueClientSecret(c echo.Context) error {
	id, err := adminClientID(c)
	if err != nil {
		return err
	}
	if s.deps.Admin.Launch == nil {
		return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "the signed-launch store is not configured")
	}
	secret, err := s.deps.Admin.Launch.IssueClientSecret(c.Request().Context(), id)
	if err != nil {
		return err
	}
	s.log.InfoContext(c.Request().Context(), "admin: client secret issued", "client_id", id, "request_id", wire.RequestID(c))
	return wire.OK(c, map[string]string{"client_id": id, "client_secret": secret})
}

// GET /admin/v1/clients/{id}/usage: as GET /api/v1/usage, for any client.
func (s *Server) adminUsage(c echo.Context) error {
	id, err := adminClientID(c)
	if err != nil {
		return err
	}
	if _, err := s.deps.Admin.Clients.GetClient(c.Request().Context(), id); err != nil {
		return err
	}
	return usage.Reports{Store: s.deps.Usage, Now: s.now}.Answer(c, id)
}

// adminKnownClient answers 404 for a client that does not exist.
func (s *Server) adminKnownClient(c echo.Context) (string, error) {
	id, err := adminClientID(c)
	if err != nil {
		return "", err
	}
	if _, err := s.deps.Admin.Clients.GetClient(c.Request().Context(), id); err != nil {
		return "", err
	}
	return id, nil
}

// adminEndpoints are the webhook-endpoint handlers the client API uses
// too (package deliveries), for the client of the path.
func (s *Server) adminEndpoints() deliveries.Endpoints {
	return deliveries.Endpoints{Store: s.deps.Webhooks, AllowPrivateCallbacks: s.cfg.AllowPrivateCallbacks}
}

func (s *Server) requireAdminWebhooks() error {
	if s.deps.Webhooks == nil {
		return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "the webhook store is not configured")
	}
	return nil
}

// GET /admin/v1/clients/{id}/webhooks
func (s *Server) adminListWebhooks(c echo.Context) error {
	if err := s.requireAdminWebhooks(); err != nil {
		return err
	}
	id, err := s.adminKnownClient(c)
	if err != nil {
		return err
	}
	return s.adminEndpoints().List(c, id)
}

// POST /admin/v1/clients/{id}/webhooks: as POST /api/v1/webhooks; the
// answer carries the signing secret, shown once.
func (s *Server) adminCreateWebhook(c echo.Context) error {
	if err := s.requireAdminWebhooks(); err != nil {
		return err
	}
	id, err := adminClientID(c)
	if err != nil {
		return err
	}
	return s.adminEndpoints().Create(c, id)
}

// adminWebhookIDs reads :client and :id of the routes of one endpoint.
func (s *Server) adminWebhookIDs(c echo.Context) (clientID, id string, err error) {
	if err := s.requireAdminWebhooks(); err != nil {
		return "", "", err
	}
	if clientID, err = adminClientID(c); err != nil {
		return "", "", err
	}
	if id, err = deliveries.EndpointID(c); err != nil {
		return "", "", err
	}
	return clientID, id, nil
}

// GET /admin/v1/clients/{id}/webhooks/{webhook_id}
func (s *Server) adminGetWebhook(c echo.Context) error {
	clientID, id, err := s.adminWebhookIDs(c)
	if err != nil {
		return err
	}
	return s.adminEndpoints().Get(c, clientID, id)
}

// PATCH /admin/v1/clients/{id}/webhooks/{webhook_id}: any of url, kinds,
// description, enabled.
func (s *Server) adminUpdateWebhook(c echo.Context) error {
	clientID, id, err := s.adminWebhookIDs(c)
	if err != nil {
		return err
	}
	return s.adminEndpoints().Update(c, clientID, id)
}

// DELETE /admin/v1/clients/{id}/webhooks/{webhook_id}
func (s *Server) adminDeleteWebhook(c echo.Context) error {
	clientID, id, err := s.adminWebhookIDs(c)
	if err != nil {
		return err
	}
	return s.adminEndpoints().Delete(c, clientID, id)
}
