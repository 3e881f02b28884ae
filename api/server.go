// Package api is the HTTP edge: the server with every route, its
// middleware (request ids, API-key authentication, rate limits, usage and
// metrics), the one error handler and the OpenAPI document, and the
// handlers of the operator API (/api/v1), the signed launch (/v1/launch)
// and the console. Handler packages under it serve the rest — admin
// (/admin/v1), deliveries (delivery log, webhooks, forwarded callback),
// dialect/* (one per provider wallet protocol, over the wallet core:
// dialects.go), usage (usage reports) — and package wire
// holds the answer shapes and the error mapping they all share. It turns
// requests into commands and queries; it never touches SQL.
package api

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pitboss/pitboss/api/admin"
	"github.com/pitboss/pitboss/api/dialect/pitboss"
	"github.com/pitboss/pitboss/api/statements"
	"github.com/pitboss/pitboss/api/vlog"
	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/audit"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/projections"
	"github.com/pitboss/pitboss/promo"
	"github.com/pitboss/pitboss/wallet"
)

// MinAdminTokenLength is the shortest admin token accepted.
const MinAdminTokenLength = 32

// Config is the HTTP layer's configuration.
type Config struct {
	// PublicURL is the address players and providers reach us at; game URLs
	// of the built-in demo provider start with it.
	PublicURL string
	// SessionTTL is how long a launched game takes bets.
	SessionTTL time.Duration
	// HostEnvironments maps a request host to the environment served there
	// ("sandbox" or "production"). Hosts are compared without case, port
	// or trailing dot, here and in the request.
	HostEnvironments map[string]string
	// DefaultEnvironment is the environment of any other host.
	DefaultEnvironment string
	// TrustedProxies are the peers whose X-Forwarded-For is believed when
	// the signed launch checks a client's IP allow-list.
	TrustedProxies []netip.Prefix
	// PrivateCallbacks says whose webhook and callback URLs may point at
	// loopback or private addresses, by the client's environment: no
	// one's (the zero value, production), sandbox clients' (`make run`,
	// a receiver on the developer's machine) or everyone's (tests).
	// Link-local addresses stay refused whatever it says.
	PrivateCallbacks gateway.PrivateTargets
	// AdminToken authenticates the admin API (/admin/v1); empty disables
	// it (404). At least MinAdminTokenLength characters (checked by the
	// configuration). See docs/keys-and-admin.md.
	AdminToken string
	// RateLimits are the plan tiers; zero: DefaultRateTiers.
	RateLimits gateway.RateLimits
	// ReadyTimeout bounds each /readyz check; default DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// LogOrigin is the verifiable log's origin base (ledgerlog.Origin):
	// the origin line of the platform's checkpoints, and with
	// "/clients/<id>" of a client's; the log's keys route names it.
	LogOrigin string
	// FollowUpGrace is how long a seamless client's unknown outcome waits
	// before its follow-up's first attempt (wallet.Deps.FollowUpGrace; 0:
	// wallet.FollowUpGrace).
	FollowUpGrace time.Duration
}

func (c *Config) setDefaults() {
	if len(c.HostEnvironments) > 0 {
		hosts := make(map[string]string, len(c.HostEnvironments))
		for h, env := range c.HostEnvironments {
			hosts[normalHost(h)] = env
		}
		c.HostEnvironments = hosts
	}
	if c.PublicURL == "" {
		c.PublicURL = "http://127.0.0.1:8080"
	}
	if c.DefaultEnvironment == "" {
		c.DefaultEnvironment = "sandbox"
	}
	if c.SessionTTL == 0 {
		c.SessionTTL = 4 * time.Hour
	}
	c.RateLimits.SetDefaults()
	if c.ReadyTimeout <= 0 {
		c.ReadyTimeout = DefaultReadyTimeout
	}
}

// Deps are the ports the handlers use.
type Deps struct {
	Commands *commands.Handler
	Balances commands.Balances
	Wallets  gateway.Wallets
	Keys     gateway.Keys
	Catalog  wallet.Catalog
	Sessions wallet.Sessions
	// LaunchClients serves the signed launch (GET /v1/launch) and the
	// return address; without it those routes answer 503.
	LaunchClients gateway.LaunchClients
	// Deliveries and Webhooks serve the delivery log, webhook endpoints and
	// the forwarded-callback setting; without them those routes answer 503.
	Deliveries gateway.Deliveries
	Webhooks   gateway.Webhooks
	// Games lists providers and games and gives each provider's launch
	// route; without it the catalog routes answer 503 and every provider
	// launches as the demo kind. Launcher opens games at providers
	// (adapters/providers); without it only demo providers launch.
	Games    gateway.GameCatalog
	Launcher gateway.Launcher
	// RoundDetails asks providers for their own page of a round (GET
	// /api/v1/rounds/{round_id}, adapters/providers); without it that
	// route answers the history with the link unavailable.
	RoundDetails gateway.RoundDetails
	// Queries answer the read-model routes (transactions, reports) and the
	// ledger position of reads; without it those routes answer 503.
	Queries *projections.Queries
	// TxRecords reads the ledger's idempotency records for the provider
	// wallet's status query; without it that call answers 503.
	TxRecords wallet.TxRecords
	// Operators finds a seamless client's own wallet and FollowUps queues
	// the unknown outcomes of its calls (docs/seamless-wallet.md); without
	// Operators every client is a ledger client.
	Operators wallet.Operators
	FollowUps wallet.FollowUps
	// ProviderRounds reads a provider's rounds of a day for its daily
	// round export (GET /provider/v1/reports/rounds/{day}); without it that
	// route answers 503.
	ProviderRounds pitboss.RoundExport
	// Statements reads the closed periods' statements (GET
	// /api/v1/statements and the admin routes); without it those routes
	// answer 503.
	Statements statements.Reader
	// Promotions runs free-bet campaigns (docs/promotions.md); without it
	// the /api/v1/campaigns routes answer 503.
	Promotions *promo.Service
	// FXRates are the exchange rates a report in a reporting currency
	// (?reporting_currency=) converts with; without them that parameter
	// answers 503.
	FXRates projections.FXRates
	Clock   commands.Clock
	IDs     commands.IDs
	Logger  *slog.Logger

	// Audit pages the event log for auditors (GET /api/v1/audit/events);
	// without it that route answers 503.
	Audit audit.Log
	// Checkpoints lists the signed checkpoints and their public keys (GET
	// /api/v1/audit/checkpoints and /checkpoint-keys); nil answers 503.
	Checkpoints audit.Checkpoints
	// Log serves the verifiable log's tiles, checkpoints and proofs (GET
	// /api/v1/audit/log/..., /admin/v1/log/...); nil answers 503.
	Log vlog.Store
	// Console serves the console's own routes (docs/console.md).
	Console ConsoleDeps

	// Admin are the stores of the admin API (docs/keys-and-admin.md).
	Admin AdminDeps
	// Usage reads usage counts (GET /api/v1/usage); Meter counts requests
	// (nil: not counted). RateStore holds the rate-limit windows (nil: this
	// process's memory). Metrics is the metrics registry (nil: nothing is
	// counted and GET /metrics answers an empty exposition). Ready are the
	// /readyz checks.
	Usage     gateway.UsageStore
	Meter     *UsageMeter
	RateStore gateway.RateStore
	Metrics   Metrics
	Ready     []ReadyCheck
}

// Server is the HTTP server's handler set.
type Server struct {
	cfg  Config
	deps Deps
	log  *slog.Logger
	echo *echo.Echo

	rates, localRates gateway.RateStore
	metrics           Metrics
	// uploads bounds the reconciliation uploads in flight.
	uploads uploadSlots
	// core is the wallet core every dialect answers through.
	core *wallet.Core
}

// WalletCore is the wallet core the server's dialects answer through (its
// follow-up runner settles with it).
func (s *Server) WalletCore() *wallet.Core { return s.core }

// NewServer builds the Echo instance with every route.
func NewServer(cfg Config, deps Deps) *Server {
	cfg.setDefaults()
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	s := &Server{cfg: cfg, deps: deps, log: deps.Logger, echo: echo.New()}
	s.initMetering()
	e := s.echo
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.errorHandler
	e.Use(s.requestIDMiddleware, s.metricsMiddleware, s.recoverMiddleware, s.logMiddleware, s.methodNotAllowed)

	v1 := e.Group("/api/v1", s.authMiddleware, s.usageMiddleware, s.rateLimitMiddleware)
	v1.GET("/usage", s.clientUsage)
	v1.POST("/transactions", s.createTransaction, requireScope(gateway.ScopeTransactionsWrite))
	v1.GET("/wallet/balance", s.walletBalance, requireScope(gateway.ScopeWalletRead))
	v1.POST("/game/launch", s.launchGame, requireScope(gateway.ScopeLaunch))
	s.registerCatalogRoutes(v1)
	s.registerDeliveryRoutes(v1)
	s.registerQueryRoutes(v1)
	s.registerAuditRoutes(v1)
	s.registerStatementRoutes(v1)
	s.registerPromotionRoutes(v1)
	s.registerConsoleRoutes(e, v1)

	s.registerDialects(e)

	e.GET("/v1/launch", s.signedLaunch, s.usageMiddleware)
	e.GET("/v1/return", s.returnAddress)

	admin.Register(e.Group("/admin/v1"), s.adminDeps())
	s.registerHealthRoutes(e)
	s.registerOpenAPIRoute(e)
	return s
}

// Handler returns the http.Handler.
func (s *Server) Handler() http.Handler { return s.echo }

// Echo exposes the Echo instance so other packages' routes can join it
// (the demo game, mounted by cmd; see host.go).
func (s *Server) Echo() *echo.Echo { return s.echo }

const requestIDHeader = "X-Request-Id"

func (s *Server) requestIDMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		rid := c.Request().Header.Get(requestIDHeader)
		if rid == "" || len(rid) > 128 || domain.ValidateID("request id", rid) != nil {
			rid = newRequestID(func(b []byte) { _, _ = rand.Read(b) })
		}
		wire.SetRequestID(c, rid)
		c.Response().Header().Set(requestIDHeader, rid)
		ctx := commands.WithMeta(c.Request().Context(), domain.Metadata{RequestID: rid, CorrelationID: rid})
		c.SetRequest(c.Request().WithContext(ctx))
		return next(c)
	}
}

// newRequestID is 24 lowercase hex digits from fill, never all decimal
// digits: a header value such as 318402550961668129713885 reads as a
// number to clients that type header values by their look (the OpenAPI
// validator of TestOpenAPIConformance did, once in about 79,000 ids), and
// the document declares a string.
func newRequestID(fill func([]byte)) string {
	b := make([]byte, 12)
	for {
		fill(b)
		id := hex.EncodeToString(b)
		if strings.ContainsAny(id, "abcdef") {
			return id
		}
	}
}

func (s *Server) recoverMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				s.log.ErrorContext(c.Request().Context(), "panic in handler", "panic", r, "request_id", wire.RequestID(c))
				err = wire.NewError(http.StatusInternalServerError, wire.CodeInternal, "internal error")
			}
		}()
		return next(c)
	}
}

func (s *Server) logMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		status := c.Response().Status
		if err != nil {
			if e, _ := wire.Classify(err); e != nil {
				status = e.Status
			}
		}
		s.log.InfoContext(c.Request().Context(), "http", "method", c.Request().Method, "route", c.Path(),
			"status", status, "duration_ms", float64(time.Since(start).Microseconds())/1000, "request_id", wire.RequestID(c))
		return err
	}
}
