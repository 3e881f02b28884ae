package api

import (
	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/admin"
	"github.com/pitboss/pitboss/api/deliveries"
	"github.com/pitboss/pitboss/api/statements"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
)

// Routes served by the handler packages under api/: this server builds
// their dependencies from its Config and Deps and registers them, so each
// route's authentication, scope and rate limit are decided here.

// registerDeliveryRoutes adds the delivery log, webhook endpoints and the
// forwarded-callback setting (package deliveries) to the authenticated
// /api/v1 group.
func (s *Server) registerDeliveryRoutes(v1 *echo.Group) {
	d := deliveries.New(s.deps.Deliveries, s.deps.Webhooks, s.cfg.PrivateCallbacks)
	// The scope is checked before the stores: a key without it is 403 on
	// any server.
	read := []echo.MiddlewareFunc{requireScope(gateway.ScopeDeliveriesRead), d.RequireStores}
	write := []echo.MiddlewareFunc{requireScope(gateway.ScopeDeliveriesWrite), d.RequireStores}
	v1.GET("/deliveries", d.ListDeliveries, read...)
	v1.GET("/deliveries/:id", d.Delivery, read...)
	v1.POST("/deliveries/:id/resend", d.ResendDelivery, write...)
	v1.GET("/webhooks", d.ListWebhooks, read...)
	v1.POST("/webhooks", d.CreateWebhook, write...)
	v1.GET("/webhooks/:id", d.Webhook, read...)
	v1.PATCH("/webhooks/:id", d.UpdateWebhook, write...)
	v1.DELETE("/webhooks/:id", d.DeleteWebhook, write...)
	v1.POST("/webhooks/:id/rotate-secret", d.RotateWebhookSecret, write...)
	v1.GET("/forward-callback", d.ForwardCallback, read...)
	v1.POST("/forward-callback/rotate-secret", d.RotateForwardCallbackSecret, write...)
}

// adminDeps are the admin API's (package admin) dependencies.
func (s *Server) adminDeps() admin.Deps {
	return admin.Deps{Token: s.cfg.AdminToken, Clients: s.deps.Admin.Clients, Launch: s.deps.Admin.Launch,
		Callbacks: s.deps.Admin.Callbacks, Reveals: s.deps.Admin.Reveals, FX: s.deps.Admin.FX, Deals: s.deps.Admin.Deals, Wallets: s.deps.Admin.Wallets, FollowUps: s.deps.Admin.FollowUps,
		SeamlessLedger: s.deps.Admin.SeamlessLedger, Operators: s.deps.Operators, ClientIP: s.clientIP, Webhooks: s.deps.Webhooks,
		Statements: s.deps.Admin.Statements, StatementStore: s.deps.Statements, Providers: s.providers(),
		Usage: s.deps.Usage, Keys: s.deps.Keys, Log: s.deps.Log, LogKeys: s.deps.Checkpoints, LogOrigin: s.cfg.LogOrigin,
		RateLimits: s.cfg.RateLimits, PrivateCallbacks: s.cfg.PrivateCallbacks, Now: s.now, Logger: s.log}
}

// registerStatementRoutes adds a client's statements (docs/statements.md)
// to the authenticated /api/v1 group.
func (s *Server) registerStatementRoutes(v1 *echo.Group) {
	h := statements.Handlers{Store: s.deps.Statements}
	read := requireScope(gateway.ScopeReportsRead)
	v1.GET("/statements", func(c echo.Context) error { return h.List(c, wire.Principal(c).ClientID) }, read)
	v1.GET("/statements/:id", func(c echo.Context) error { return h.Get(c, wire.Principal(c).ClientID) }, read)
}

// providers is the catalog as the admin API's provider check, or nil.
func (s *Server) providers() admin.Providers {
	if s.deps.Catalog == nil {
		return nil
	}
	return s.deps.Catalog
}
