// Package admin is the admin API (/admin/v1): clients, their keys, plan
// tiers, launch and callback settings, webhook endpoints and usage, for
// the operators of Pitboss itself. It is authenticated by one admin token
// from configuration (PITBOSS_ADMIN_TOKEN); without a token it does not
// exist (404). See docs/keys-and-admin.md. Webhook endpoints and usage are
// answered by the same handlers as the client API's (packages deliveries
// and usage), for the client of the path.
package admin

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/deliveries"
	"github.com/pitboss/pitboss/api/statements"
	"github.com/pitboss/pitboss/api/usage"
	"github.com/pitboss/pitboss/api/vlog"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/ledgerlog"
	"github.com/pitboss/pitboss/wallet"
)

// Admin list paging.
const (
	defaultPerPage = 50
	maxPerPage     = 200
)

// Deps are what the admin API needs; package api fills them from its
// Config and Deps.
type Deps struct {
	// Token authenticates the admin API; empty disables it (404).
	Token string
	// Clients is the client and key store; without it the admin API
	// answers 503. Without Launch, Callbacks or Webhooks the fields and
	// routes they serve answer 503; without Usage the usage route does.
	Clients   gateway.AdminClients
	Launch    gateway.AdminLaunch
	Callbacks gateway.AdminCallbacks
	Webhooks  gateway.Webhooks
	Usage     gateway.UsageStore
	// Reveals shows client secrets and keeps the trail of every showing
	// (the tokens area); without it those two routes answer 503.
	Reveals gateway.ClientSecretReveals
	// FX stores exchange rates (docs/reporting-currency.md); without it
	// the fx-rates routes answer 503.
	FX gateway.FXRates
	// Statements closes periods into statements, StatementStore reads
	// them, Providers knows the providers (docs/statements.md); without
	// any of them the statement routes answer 503.
	Statements     StatementCloser
	StatementStore statements.Reader
	Providers      Providers
	// Deals stores commission deal versions (docs/finance.md); without it
	// the deals routes answer 503.
	Deals gateway.CommissionDeals
	// Wallets stores clients' wallet modes (docs/seamless-wallet.md);
	// without it the wallet route answers 503 and clients show no wallet.
	Wallets gateway.ClientWallets
	// FollowUps lists the seamless wallet's follow-ups; without it that
	// route answers 503.
	FollowUps FollowUpList
	// SeamlessLedger and Operators reconcile a seamless client with its
	// own wallet; without either that route answers 503.
	SeamlessLedger SeamlessLedger
	Operators      wallet.Operators
	// Log serves the platform's verifiable log (/admin/v1/log/...: C2SP
	// tiles, checkpoint, keys, proofs); LogKeys lists the checkpoint keys
	// and LogOrigin is the log's origin base. Without Log those routes
	// answer 503.
	Log       vlog.Store
	LogKeys   vlog.Keys
	LogOrigin string
	// ClientIP is the address a request came from as the server judges it
	// (trusted proxies considered), for the reveal trail; nil: the direct
	// peer.
	ClientIP func(*http.Request) netip.Addr
	// Keys authenticates client API keys, so that one sent here is told
	// 403 (a credential without the permission) rather than 401; nil:
	// every wrong token is 401.
	Keys gateway.Keys
	// RateLimits are the plan tiers clients are put on.
	RateLimits gateway.RateLimits
	// PrivateCallbacks says whose webhook and callback URLs may be at
	// loopback or private addresses, by the client's environment.
	PrivateCallbacks gateway.PrivateTargets
	// Now is the clock of key states and expiries (nil: the system
	// clock); Logger records what the admin changed (nil: slog.Default).
	Now    func() time.Time
	Logger *slog.Logger
}

// server is the admin API's handler set.
type server struct {
	deps     Deps
	log      *slog.Logger
	digest   []byte // SHA-256 of Deps.Token; nil: admin API disabled
	actor    string // the admin token as the reveal trail names it
	webhooks deliveries.Endpoints
	usage    usage.Reports
}

// now is the admin API's clock (the system clock when none is set).
func (s *server) now() time.Time {
	if s.deps.Now != nil {
		return s.deps.Now()
	}
	return time.Now()
}

// Register adds the admin routes to g (the /admin/v1 group), behind the
// admin token.
func Register(g *echo.Group, deps Deps) {
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	s := &server{deps: deps, log: deps.Logger,
		webhooks: deliveries.Endpoints{Store: deps.Webhooks, PrivateCallbacks: deps.PrivateCallbacks},
		usage:    usage.Reports{Store: deps.Usage, Now: deps.Now}}
	if deps.Token != "" {
		d := sha256.Sum256([]byte(deps.Token))
		s.digest = d[:]
		s.actor = adminActor(deps.Token)
	}
	g.Use(s.auth)
	g.GET("/tiers", s.tiers)
	g.POST("/clients", s.createClient)
	g.GET("/clients", s.listClients)
	g.GET("/clients/:client", s.getClient)
	g.PATCH("/clients/:client", s.updateClient)
	g.PUT("/clients/:client/wallet", s.setClientWallet)
	g.GET("/seamless/follow-ups", s.listFollowUps)
	g.GET("/clients/:client/seamless/reconciliation", s.reconcileSeamless)
	g.POST("/clients/:client/client-secret", s.issueClientSecret)
	g.POST("/clients/:client/client-secret/reveal", s.revealClientSecret)
	g.GET("/clients/:client/client-secret/reveals", s.listReveals)
	g.GET("/clients/:client/usage", s.clientUsage)
	g.GET("/clients/:client/keys", s.listKeys)
	g.POST("/clients/:client/keys", s.issueKey)
	g.GET("/clients/:client/keys/:key", s.getKey)
	g.POST("/clients/:client/keys/:key/rotate", s.rotateKey)
	g.POST("/clients/:client/keys/:key/revoke", s.revokeKey)
	g.PUT("/fx-rates", s.putFXRates)
	g.GET("/fx-rates", s.listFXRates)
	g.POST("/clients/:client/statements", s.closeStatement)
	g.GET("/clients/:client/statements", s.listStatements)
	g.GET("/clients/:client/statements/:id", s.getStatement)
	g.POST("/deals", s.createDeal)
	g.GET("/deals", s.listDeals)
	g.GET("/deals/history", s.dealHistory)
	g.GET("/clients/:client/webhooks", s.listWebhooks)
	g.POST("/clients/:client/webhooks", s.createWebhook)
	g.GET("/clients/:client/webhooks/:id", s.getWebhook)
	g.PATCH("/clients/:client/webhooks/:id", s.updateWebhook)
	g.DELETE("/clients/:client/webhooks/:id", s.deleteWebhook)
	vlog.Handlers{Store: deps.Log, Keys: deps.LogKeys, OriginBase: deps.LogOrigin,
		LogOf: func(echo.Context) string { return ledgerlog.PlatformLog }}.Register(g, "/log")
}

// auth checks Authorization: Bearer <admin token> in constant time.
// A valid client API key is 403 (a credential without the permission);
// anything else is 401.
func (s *server) auth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.digest == nil {
			return wire.NewError(http.StatusNotFound, wire.CodeNotFound, "the admin API is disabled: PITBOSS_ADMIN_TOKEN is not set")
		}
		scheme, token, found := strings.Cut(c.Request().Header.Get(echo.HeaderAuthorization), " ")
		token = strings.TrimSpace(token)
		if !found || !strings.EqualFold(scheme, "Bearer") || token == "" {
			return wire.NewError(http.StatusUnauthorized, wire.CodeUnauthorized, "missing admin token: send Authorization: Bearer <PITBOSS_ADMIN_TOKEN>")
		}
		d := sha256.Sum256([]byte(token))
		if subtle.ConstantTimeCompare(d[:], s.digest) != 1 {
			if s.deps.Keys != nil {
				if _, err := s.deps.Keys.AuthenticateKey(c.Request().Context(), gateway.HashKey(token)); err == nil {
					return wire.NewError(http.StatusForbidden, wire.CodeForbidden, "a client API key cannot use the admin API")
				}
			}
			return wire.NewError(http.StatusUnauthorized, wire.CodeUnauthorized, "invalid admin token")
		}
		if s.deps.Clients == nil {
			return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "the admin API has no client store configured")
		}
		return next(c)
	}
}

// clientParam reads :client; an id no client can have is not found.
func clientParam(c echo.Context) (string, error) {
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

type clientView struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Environment string `json:"environment"`
	Plan        string `json:"plan"`
	// RateLimit is the tier that applies: the plan's, or the default tier
	// when the plan is not configured.
	RateLimit       rateTierView      `json:"rate_limit"`
	CreatedAt       string            `json:"created_at"`
	SignedLaunch    *signedLaunchView `json:"signed_launch,omitempty"`
	ForwardCallback *callbackView     `json:"forward_callback,omitempty"`
	Wallet          *clientWalletView `json:"wallet,omitempty"`
	Created         *bool             `json:"created,omitempty"`
	Keys            *keyCount         `json:"keys,omitempty"`
}

type keyCount struct {
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

type callbackView struct {
	URL       string `json:"url"`
	SecretSet bool   `json:"secret_set"`
}

func (s *server) viewOfClient(cl gateway.Client) clientView {
	return clientView{ID: cl.ID, Name: cl.Name, Environment: cl.Environment, Plan: cl.Plan,
		RateLimit: viewOfTier(s.deps.RateLimits.Tier(cl.Plan)), CreatedAt: wire.FormatTime(cl.CreatedAt)}
}

// fullClientView adds what the other stores know of the client.
func (s *server) fullClientView(c echo.Context, cl gateway.Client) (clientView, error) {
	ctx := c.Request().Context()
	v := s.viewOfClient(cl)
	keys, err := s.deps.Clients.ListAPIKeys(ctx, cl.ID)
	if err != nil {
		return v, err
	}
	now := s.now()
	v.Keys = &keyCount{Total: len(keys)}
	for _, k := range keys {
		if k.State(now) == gateway.KeyActive {
			v.Keys.Active++
		}
	}
	if s.deps.Launch != nil {
		lc, err := s.deps.Launch.LaunchClient(ctx, cl.ID)
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
	if s.deps.Callbacks != nil {
		fc, err := s.deps.Callbacks.ForwardCallback(ctx, cl.ID)
		if err != nil {
			return v, err
		}
		v.ForwardCallback = &callbackView{URL: fc.URL, SecretSet: fc.SecretCreatedAt != nil}
	}
	if s.deps.Wallets != nil {
		w, err := s.deps.Wallets.ClientWallet(ctx, cl.ID)
		if err != nil {
			return v, err
		}
		v.Wallet = viewOfClientWallet(w)
	}
	return v, nil
}

// GET /admin/v1/tiers: the configured plan tiers.
func (s *server) tiers(c echo.Context) error {
	out := make([]rateTierView, 0, len(s.deps.RateLimits.Tiers))
	for _, t := range s.deps.RateLimits.Tiers {
		out = append(out, viewOfTier(t))
	}
	return wire.OK(c, map[string]any{"tiers": out, "default_tier": s.deps.RateLimits.DefaultTier})
}

type clientRequest struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Environment string `json:"environment"`
	Plan        string `json:"plan"`
}

// POST /admin/v1/clients {id, name, environment, plan?}: 200 with the
// client and created true; the same request again answers the existing
// client with created false; the id with other settings is 409
// CLIENT_EXISTS.
func (s *server) createClient(c echo.Context) error {
	var req clientRequest
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
		req.Plan = s.deps.RateLimits.DefaultTier
	}
	if err := s.deps.RateLimits.CheckPlan(req.Plan); err != nil {
		return err
	}
	cl, created, err := s.deps.Clients.AddClient(c.Request().Context(),
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

// pageParams reads a list's page (from 1) and per_page (1 to maxPerPage,
// default defaultPerPage).
func pageParams(c echo.Context) (page, perPage int, err error) {
	if page, err = wire.QueryInt(c, "page", 1, 1<<30); err != nil {
		return 0, 0, err
	}
	if perPage, err = wire.QueryInt(c, "per_page", defaultPerPage, maxPerPage); err != nil {
		return 0, 0, err
	}
	return page, perPage, nil
}

// GET /admin/v1/clients?page=&per_page=
func (s *server) listClients(c echo.Context) error {
	page, perPage, err := pageParams(c)
	if err != nil {
		return err
	}
	list, total, err := s.deps.Clients.ListClients(c.Request().Context(), page, perPage)
	if err != nil {
		return err
	}
	out := make([]clientView, 0, len(list))
	for _, cl := range list {
		out = append(out, s.viewOfClient(cl))
	}
	return wire.OKPage(c, out, page, perPage, total)
}

// GET /admin/v1/clients/{id}: the client with its launch and callback
// settings and key counts.
func (s *server) getClient(c echo.Context) error {
	id, err := clientParam(c)
	if err != nil {
		return err
	}
	cl, err := s.deps.Clients.GetClient(c.Request().Context(), id)
	if err != nil {
		return err
	}
	v, err := s.fullClientView(c, cl)
	if err != nil {
		return err
	}
	return wire.OK(c, v)
}

type clientPatch struct {
	Name               *string         `json:"name"`
	Plan               *string         `json:"plan"`
	Environment        *string         `json:"environment"`
	ForwardCallbackURL *string         `json:"forward_callback_url"`
	RequireSignature   json.RawMessage `json:"require_signature"` // absent: nil; null: "null"
	IPAllowList        *[]string       `json:"ip_allow_list"`
	AllowedReturnHosts *[]string       `json:"allowed_return_hosts"`
	DefaultCurrency    *string         `json:"default_currency"`
}

func (p clientPatch) launchChanged() bool {
	return p.RequireSignature != nil || p.IPAllowList != nil || p.AllowedReturnHosts != nil || p.DefaultCurrency != nil
}

// PATCH /admin/v1/clients/{id}: any of name, plan, forward_callback_url
// ("" stops forwarding), require_signature (true, false, or null for the
// environment's default), ip_allow_list, allowed_return_hosts,
// default_currency. Everything is checked before anything is written; the
// stores are then written one after another (launch settings, callback
// address, name and plan), so a failing database may leave a part applied
// — repeating the PATCH completes it.
func (s *server) updateClient(c echo.Context) error {
	id, err := clientParam(c)
	if err != nil {
		return err
	}
	var req clientPatch
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
		if err := s.deps.RateLimits.CheckPlan(*req.Plan); err != nil {
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
	var returnHosts []string
	if req.AllowedReturnHosts != nil {
		if returnHosts, err = gateway.ParseReturnHosts(*req.AllowedReturnHosts); err != nil {
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
	if (req.launchChanged() && s.deps.Launch == nil) || (req.ForwardCallbackURL != nil && s.deps.Callbacks == nil) {
		return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "the store of these settings is not configured")
	}

	ctx := c.Request().Context()
	cl, err := s.deps.Clients.GetClient(ctx, id)
	if err != nil {
		return err
	}
	// The callback URL is checked by the client's environment: private
	// targets may be allowed for sandbox clients only.
	if req.ForwardCallbackURL != nil && *req.ForwardCallbackURL != "" {
		if err := gateway.CheckCallbackURL("forward_callback_url", *req.ForwardCallbackURL,
			s.deps.PrivateCallbacks.Allows(cl.Environment)); err != nil {
			return err
		}
	}
	if req.launchChanged() {
		lc, err := s.deps.Launch.LaunchClient(ctx, id)
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
			ls.AllowedReturnHosts = returnHosts
		}
		if req.DefaultCurrency != nil {
			ls.DefaultCurrency = strings.ToUpper(*req.DefaultCurrency)
		}
		if err := s.deps.Launch.SetLaunchSettings(ctx, id, ls); err != nil {
			return err
		}
	}
	if req.ForwardCallbackURL != nil {
		if err := s.deps.Callbacks.SetForwardCallbackURL(ctx, id, *req.ForwardCallbackURL); err != nil {
			return err
		}
	}
	if req.Name != nil || req.Plan != nil {
		if cl, err = s.deps.Clients.UpdateClient(ctx, id, gateway.ClientChange{Name: req.Name, Plan: req.Plan}); err != nil {
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
// signed launch; the previous one stops working at once. The answer is
// not cached; the secret can be shown again later through the reveal
// route, which records each showing.
func (s *server) issueClientSecret(c echo.Context) error {
	id, err := clientParam(c)
	if err != nil {
		return err
	}
	if s.deps.Launch == nil {
		return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "the signed-launch store is not configured")
	}
	secret, err := s.deps.Launch.IssueClientSecret(c.Request().Context(), id)
	if err != nil {
		return err
	}
	s.log.InfoContext(c.Request().Context(), "admin: client secret issued", "client_id", id, "request_id", wire.RequestID(c))
	noStore(c)
	return wire.OK(c, map[string]string{"client_id": id, "client_secret": secret})
}

// GET /admin/v1/clients/{id}/usage: as GET /api/v1/usage, for any client.
func (s *server) clientUsage(c echo.Context) error {
	id, err := clientParam(c)
	if err != nil {
		return err
	}
	if _, err := s.deps.Clients.GetClient(c.Request().Context(), id); err != nil {
		return err
	}
	return s.usage.Answer(c, id)
}

// knownClient answers 404 for a client that does not exist.
func (s *server) knownClient(c echo.Context) (string, error) {
	cl, err := s.pathClient(c)
	return cl.ID, err
}

// pathClient is the client of the path; 404 when it does not exist.
func (s *server) pathClient(c echo.Context) (gateway.Client, error) {
	id, err := clientParam(c)
	if err != nil {
		return gateway.Client{}, err
	}
	return s.deps.Clients.GetClient(c.Request().Context(), id)
}

func (s *server) requireWebhooks() error {
	if s.deps.Webhooks == nil {
		return wire.NewError(http.StatusServiceUnavailable, wire.CodeUnavailable, "the webhook store is not configured")
	}
	return nil
}

// GET /admin/v1/clients/{id}/webhooks
func (s *server) listWebhooks(c echo.Context) error {
	if err := s.requireWebhooks(); err != nil {
		return err
	}
	id, err := s.knownClient(c)
	if err != nil {
		return err
	}
	return s.webhooks.List(c, id)
}

// POST /admin/v1/clients/{id}/webhooks: as POST /api/v1/webhooks (the
// URL checked by the client's environment); the answer carries the
// signing secret, shown once.
func (s *server) createWebhook(c echo.Context) error {
	if err := s.requireWebhooks(); err != nil {
		return err
	}
	cl, err := s.pathClient(c)
	if err != nil {
		return err
	}
	return s.webhooks.Create(c, cl.ID, cl.Environment)
}

// webhookIDs reads :client and :id of the routes of one endpoint.
func (s *server) webhookIDs(c echo.Context) (clientID, id string, err error) {
	if err := s.requireWebhooks(); err != nil {
		return "", "", err
	}
	if clientID, err = clientParam(c); err != nil {
		return "", "", err
	}
	if id, err = deliveries.EndpointID(c); err != nil {
		return "", "", err
	}
	return clientID, id, nil
}

// GET /admin/v1/clients/{id}/webhooks/{webhook_id}
func (s *server) getWebhook(c echo.Context) error {
	clientID, id, err := s.webhookIDs(c)
	if err != nil {
		return err
	}
	return s.webhooks.Get(c, clientID, id)
}

// PATCH /admin/v1/clients/{id}/webhooks/{webhook_id}: any of url, kinds,
// description, enabled (the URL checked by the client's environment).
func (s *server) updateWebhook(c echo.Context) error {
	clientID, id, err := s.webhookIDs(c)
	if err != nil {
		return err
	}
	cl, err := s.deps.Clients.GetClient(c.Request().Context(), clientID)
	if err != nil {
		return err
	}
	return s.webhooks.Update(c, clientID, cl.Environment, id)
}

// DELETE /admin/v1/clients/{id}/webhooks/{webhook_id}
func (s *server) deleteWebhook(c echo.Context) error {
	clientID, id, err := s.webhookIDs(c)
	if err != nil {
		return err
	}
	return s.webhooks.Delete(c, clientID, id)
}
