// Package apitest boots the real API server for the tests of api and of
// the packages mounted on it (demogame): the Echo server of api.NewServer
// over the real stores on a fresh PostgreSQL database (pgtest), with a
// running ledger writer, listening on a loopback port, and, where a test
// asks, the real Kafka relay and projectors, the delivery worker and the
// demo game. Options say what varies; the zero Options are the server as
// `pitboss serve` wires it on Postgres alone.
//
// Every test of the API builds its server here, so a change of wiring (a
// store moved to another package, a new dependency) is made once. It is a
// test-support package: no production package may import it.
package apitest

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/delivery"
	"github.com/pitboss/pitboss/adapters/metrics"
	"github.com/pitboss/pitboss/adapters/operatorwallet"
	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/adapters/postgres/deliverystore"
	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/postgres/logstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/postgres/promostore"
	"github.com/pitboss/pitboss/adapters/postgres/readstore"
	"github.com/pitboss/pitboss/adapters/postgres/roundstore"
	"github.com/pitboss/pitboss/adapters/providers"
	"github.com/pitboss/pitboss/adapters/secretbox"
	"github.com/pitboss/pitboss/adapters/system"
	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/api/vlog"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/projections"
	"github.com/pitboss/pitboss/promo"
	"github.com/pitboss/pitboss/statement"
)

// Options shape a Harness. The zero value is the whole API on Postgres:
// every store, the provider registry, the usage meter (flushed by the
// test) and a metrics registry; nothing on Kafka and no background worker
// but the ledger writer.
type Options struct {
	// Pool is the database to run on; nil: a fresh one, dropped when the
	// test ends. Two harnesses on one pool are two API processes of one
	// installation.
	Pool *pgxpool.Pool
	// Logger receives the server's log; nil: warnings and errors to the
	// test's output.
	Logger *slog.Logger
	// Loopback sends every request of Do over the loopback listener, as an
	// outside client's would; otherwise Do calls the handler in process
	// (faster, and Request.RemoteAddr can name the peer).
	Loopback bool

	// PublicURL is api.Config.PublicURL; empty: the loopback listener's
	// address, so game URLs and the demo game point at this server.
	PublicURL string
	// AdminToken enables the admin API (/admin/v1); empty: disabled (404).
	AdminToken string
	// RateTiers are the plan tiers in PITBOSS_RATE_TIERS form; empty: the
	// defaults.
	RateTiers string
	// HostEnvironments maps request hosts to environments
	// (api.Config.HostEnvironments); every other host is sandbox.
	HostEnvironments map[string]string
	// TrustedProxies are the peers whose X-Forwarded-For the signed launch
	// believes.
	TrustedProxies []netip.Prefix
	// PrivateCallbacks is api.Config.PrivateCallbacks: whose webhook and
	// callback URLs may be on loopback (the test's own receivers), by the
	// client's environment.
	PrivateCallbacks gateway.PrivateTargets
	// AllowPrivateCallbacks is PrivateCallbacks all: every client's URLs
	// may be on loopback.
	AllowPrivateCallbacks bool
	// SessionTTL is how long a launched game takes bets; zero: an hour.
	SessionTTL time.Duration
	// ReadyTimeout bounds each /readyz check; zero: the server's default.
	ReadyTimeout time.Duration
	// Ready are the /readyz checks, given the harness's pool.
	Ready func(pool *pgxpool.Pool) []api.ReadyCheck
	// ReadWait is how long a read with min_position waits for the read
	// models (projections.Queries.MaxWait); zero: the default.
	ReadWait time.Duration

	// Clock is the server's clock (Harness.Clock); nil: a Clock following
	// real time until the test sets it.
	Clock *Clock
	// LedgerClock stamps the events the commands append; nil: the system
	// clock. Give the harness's Clock to move both together.
	LedgerClock commands.Clock
	// IDs names the events; nil: UUIDv7 as in production.
	IDs commands.IDs

	// WithoutCatalog builds the server without a game catalog and provider
	// registry (Deps.Games and Deps.Launcher): the catalog routes answer
	// 503 and every provider launches as the demo kind.
	WithoutCatalog bool
	// PostgresRateStore keeps the rate-limit windows in Postgres, shared by
	// every API process, instead of this process's memory.
	PostgresRateStore bool
	// ReadModels runs the relay (event store to a fresh Kafka topic) and a
	// projector per projection (topic to read models) until the test ends,
	// as serve does, so the read routes follow the ledger. Without it the
	// read models move only when the test calls Pump.
	ReadModels bool
	// DeliveryWorker runs the delivery worker: deliveries are sent at once
	// and a failed one parks after its first attempt. It reaches loopback
	// for the clients PrivateCallbacks allows (every client when that is
	// none: the test's receivers are on loopback).
	DeliveryWorker bool
	// DemoGame mounts the built-in demo game on the server as cmd/pitboss
	// does. It calls the provider wallet over the loopback listener through
	// a proxy that records every call (Harness.WalletCalls).
	DemoGame bool
}

// privateCallbacks is the server's PrivateCallbacks setting.
func (o Options) privateCallbacks() gateway.PrivateTargets {
	if o.AllowPrivateCallbacks {
		return gateway.PrivateTargetsAll
	}
	return o.PrivateCallbacks
}

// Harness is the real API server on a real database, with its stores for
// the test to seed and inspect.
type Harness struct {
	t    testing.TB
	opts Options
	log  *slog.Logger

	// URL is the loopback listener's address (http://127.0.0.1:port),
	// serving the same handler as Do.
	URL string
	// Server is the API server; Handler its HTTP handler.
	Server  *api.Server
	Handler http.Handler
	// Clock is the server's clock.
	Clock *Clock
	// Commands is the ledger's command handler, for seeding money the way
	// the API would book it.
	Commands *commands.Handler
	// Promotions runs the free-bet campaigns (api.Deps.Promotions): a test
	// expires rewards with it (ExpireDue) on the harness's clock.
	Promotions *promo.Service

	// The stores behind the server, on Pool.
	Pool *pgxpool.Pool
	// Box is the master key the stores seal secrets with (and the
	// checkpoint keys, for a test that makes checkpoints).
	Box           *secretbox.Box
	Gateway       *gatewaystore.Gateway
	LaunchClients *gatewaystore.LaunchClients
	Deliveries    *deliverystore.Deliveries
	Accounts      *eventstore.Accounts
	ReadModels    *readstore.ReadModels
	Audit         *auditstore.Audit
	// Meter counts API requests per key; the test flushes it into Usage.
	Meter *api.UsageMeter
	Usage *gatewaystore.Usage
	// Metrics is the server's own metrics registry.
	Metrics *metrics.Registry
	// Operators are the clients' own wallets (seamless clients: set one
	// with Operators.SetClientWallet or the admin API), FollowUps the
	// queue of their unknown outcomes (docs/seamless-wallet.md).
	Operators *operatorwallet.Directory
	FollowUps *gatewaystore.FollowUps

	// WalletProxy stands between the demo game and the provider wallet
	// (Options.DemoGame); closing it makes the wallet unreachable.
	// WalletCalls receives each call it forwarded.
	WalletProxy *httptest.Server
	WalletCalls chan WalletCall

	client *http.Client
	pump   *pumpState
}

// pumpState is where Pump is: one per harness, shared by its With copies.
type pumpState struct {
	mu     sync.Mutex
	pumped int64 // the last position fed
}

// LogOrigin is the harness server's verifiable log origin base
// (api.Config.LogOrigin).
const LogOrigin = "pitboss.test/ledger"

// The log routes read the log store through the port they declare.
var _ vlog.Store = (*logstore.Store)(nil)

// New boots the server. Everything it starts stops, and the fresh
// database is dropped, when the test ends.
func New(t testing.TB, o Options) *Harness {
	t.Helper()
	pool := o.Pool
	if pool == nil {
		pool, _ = pgtest.NewDatabase(t)
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	h := &Harness{t: t, opts: o, log: logger, Pool: pool, Clock: o.Clock, pump: &pumpState{},
		client: &http.Client{Timeout: 30 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if h.Clock == nil {
		h.Clock = &Clock{}
	}
	// The listener comes first: its address is the public URL the provider
	// registry and the demo game need before the server exists.
	ts := httptest.NewUnstartedServer(nil)
	h.URL = "http://" + ts.Listener.Addr().String()
	publicURL := o.PublicURL
	if publicURL == "" {
		publicURL = h.URL
	}
	ttl := o.SessionTTL
	if ttl == 0 {
		ttl = time.Hour
	}

	key := make([]byte, secretbox.KeySize)
	_, _ = rand.Read(key)
	box, err := secretbox.New(key)
	if err != nil {
		t.Fatal(err)
	}
	h.Box = box
	h.Metrics = metrics.New()
	ledger, err := eventstore.NewLedger(pool, eventstore.LedgerConfig{Observer: h.Metrics}, logger)
	if err != nil {
		t.Fatal(err)
	}
	var ledgerClock commands.Clock = system.Clock{}
	if o.LedgerClock != nil {
		ledgerClock = o.LedgerClock
	}
	var ids commands.IDs = system.IDs{}
	if o.IDs != nil {
		ids = o.IDs
	}
	h.Commands = commands.NewHandler(ledger, ledgerClock, ids)
	// Provider secrets sealed, as in serve; API keys expire on the server's
	// clock, so a test moves time past a key's expiry or grace period.
	h.Gateway = gatewaystore.NewGateway(pool).WithSecretBox(box).WithKeyClock(h.Clock.Now)
	if h.LaunchClients, err = gatewaystore.NewLaunchClients(pool, box); err != nil {
		t.Fatal(err)
	}
	if h.Deliveries, err = deliverystore.NewDeliveries(pool, box); err != nil {
		t.Fatal(err)
	}
	h.Accounts = eventstore.NewAccounts(pool)
	h.ReadModels = readstore.NewReadModels(pool)
	h.Audit = auditstore.NewAudit(pool)
	h.Usage = gatewaystore.NewUsage(pool)
	h.Meter = api.NewUsageMeter(h.Usage, time.Hour, logger) // the tests flush
	h.Metrics.WatchUsage(h.Meter)
	h.Metrics.WatchLag(gatewaystore.NewLag(pool), time.Now, 5*time.Second, logger)
	// The breakers' cooldowns pass on the server's clock, so a test decides
	// when an open breaker half-opens.
	registry, err := providers.NewRegistryWithConfig(providers.Config{PublicURL: publicURL, Logger: logger,
		Now: h.Clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	var limits gateway.RateLimits
	if o.RateTiers != "" {
		tiers, err := gateway.ParseRateTiers(o.RateTiers)
		if err != nil {
			t.Fatal(err)
		}
		limits.Tiers = tiers
	}
	gw := h.Gateway
	h.Operators = operatorwallet.NewDirectory(gw, operatorwallet.DirectoryConfig{TTL: time.Minute,
		Timeout: 2 * time.Second})
	h.FollowUps = gatewaystore.NewFollowUps(pool)
	h.Metrics.WatchFollowUps(h.FollowUps.Pending, time.Now, 5*time.Second, logger)
	h.Promotions = promo.NewService(promostore.New(pool), h.Commands, gw, registry.Promotions(), h.Clock)
	deps := api.Deps{
		Promotions: h.Promotions,
		Commands:   h.Commands, Balances: h.Accounts, Wallets: gw, Keys: gw, Catalog: gw, Sessions: gw,
		LaunchClients: h.LaunchClients, Deliveries: h.Deliveries, Webhooks: h.Deliveries,
		Games: gw, Launcher: registry, RoundDetails: registry,
		Queries: &projections.Queries{Transactions: h.ReadModels, Reports: h.ReadModels, Rounds: h.ReadModels,
			Positions: h.ReadModels, Ledger: h.Accounts, Clients: h.Accounts, MaxWait: o.ReadWait},
		FXRates: gw, TxRecords: h.Accounts, ProviderRounds: roundstore.NewRounds(pool),
		Operators: h.Operators, FollowUps: h.FollowUps,
		Clock: h.Clock, IDs: ids, Logger: logger,
		Audit: h.Audit, Checkpoints: auditstore.NewCheckpoints(pool, nil), Log: logstore.New(pool),
		Console: api.ConsoleDeps{Lag: gatewaystore.NewLag(pool), Verifications: h.Audit,
			Details: auditstore.NewConsole(pool)},
		Admin: api.AdminDeps{Clients: gw, Launch: h.LaunchClients, Callbacks: h.Deliveries, Reveals: h.LaunchClients, FX: gw,
			Statements: &statement.Closer{Reports: &projections.Queries{Transactions: h.ReadModels, Reports: h.ReadModels,
				Positions: h.ReadModels, Ledger: h.Accounts, Clients: h.Accounts, MaxWait: o.ReadWait},
				Store: auditstore.NewStatements(pool), Signer: auditstore.NewCheckpoints(pool, box).WithClock(h.Clock.Now),
				FX: gw, IDs: ids, Now: h.Clock.Now},
			Deals: h.ReadModels, Wallets: h.Operators, FollowUps: h.FollowUps,
			SeamlessLedger: gw},
		Statements: auditstore.NewStatements(pool),
		Usage:      h.Usage, Meter: h.Meter, Metrics: h.Metrics,
	}
	if o.WithoutCatalog {
		deps.Games, deps.Launcher, deps.RoundDetails = nil, nil, nil
	}
	if o.PostgresRateStore {
		deps.RateStore = gatewaystore.NewRateWindows(pool)
	}
	if o.Ready != nil {
		deps.Ready = o.Ready(pool)
	}
	h.Server = api.NewServer(api.Config{
		PublicURL: publicURL, SessionTTL: ttl, HostEnvironments: o.HostEnvironments, DefaultEnvironment: "sandbox",
		TrustedProxies: o.TrustedProxies, PrivateCallbacks: o.privateCallbacks(), AdminToken: o.AdminToken,
		RateLimits: limits, ReadyTimeout: o.ReadyTimeout, LogOrigin: LogOrigin,
	}, deps)
	if o.DemoGame {
		h.mountDemoGame(deps.Games != nil)
	}
	h.Handler = h.Server.Handler()
	ts.Config.Handler = h.Handler
	ts.Start()

	runners := []func(context.Context) error{ledger.Run}
	if o.DeliveryWorker {
		workerTargets := o.privateCallbacks()
		if workerTargets == gateway.PrivateTargetsNone {
			workerTargets = gateway.PrivateTargetsAll
		}
		worker, err := delivery.NewWorker(h.Deliveries,
			delivery.NewSender(delivery.SenderConfig{Timeout: 30 * time.Second, PrivateTargets: workerTargets}),
			delivery.WorkerConfig{PollInterval: 50 * time.Millisecond, Logger: logger,
				Schedule: delivery.Schedule{Base: time.Second, Cap: time.Minute, MaxAttempts: 1, MaxAge: time.Hour}})
		if err != nil {
			t.Fatal(err)
		}
		runners = append(runners, worker.Run)
	}
	if o.ReadModels {
		runners = append(runners, h.readModelRunners()...)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, len(runners))
	for _, run := range runners {
		go func() { done <- run(ctx) }()
	}
	t.Cleanup(func() {
		ts.Close()
		if h.WalletProxy != nil {
			h.WalletProxy.Close()
		}
		cancel()
		for range runners {
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("harness: %v", err)
			}
		}
	})
	return h
}

// With is the harness reporting to t: a subtest's or a fuzz target's
// failures must be its own, not the test's that built the harness.
func (h *Harness) With(t testing.TB) *Harness {
	c := *h
	c.t = t
	return &c
}

// Bare is a second server on the harness's database built with nothing but
// the key store, as an API process without the optional stores is: the
// routes of the stores it lacks answer 503, the admin API 404. It listens
// on a loopback port of its own until the test ends.
func (h *Harness) Bare() *Harness {
	h.t.Helper()
	b := &Harness{t: h.t, opts: h.opts, log: h.log, client: h.client, Clock: h.Clock, Pool: h.Pool, Gateway: h.Gateway,
		pump: &pumpState{}}
	b.Server = api.NewServer(api.Config{DefaultEnvironment: "sandbox"}, api.Deps{Keys: h.Gateway, Logger: h.log})
	b.Handler = b.Server.Handler()
	ts := httptest.NewServer(b.Handler)
	h.t.Cleanup(ts.Close)
	b.URL = ts.URL
	return b
}

// EmptyServer is a server built with no store at all and the demo game
// mounted as serve mounts it (over stores that know nothing): enough to
// read the OpenAPI document and the routing table.
func EmptyServer(t testing.TB, adminToken string) *api.Server {
	t.Helper()
	srv := api.NewServer(api.Config{AdminToken: adminToken}, api.Deps{Logger: slog.New(slog.DiscardHandler)})
	mountDemoGame(t, srv, "http://127.0.0.1:1", noStores{}, noStores{}, nil, slog.New(slog.DiscardHandler), nil)
	return srv
}
