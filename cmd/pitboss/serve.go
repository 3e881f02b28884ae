package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	rpprof "runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/pitboss/pitboss/adapters/catalogsync"
	"github.com/pitboss/pitboss/adapters/checkpointjob"
	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/adapters/lookupcache"
	"github.com/pitboss/pitboss/adapters/metrics"
	"github.com/pitboss/pitboss/adapters/operatorwallet"
	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/adapters/postgres/deliverystore"
	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/adapters/postgres/logstore"
	"github.com/pitboss/pitboss/adapters/postgres/promostore"
	"github.com/pitboss/pitboss/adapters/postgres/readstore"
	"github.com/pitboss/pitboss/adapters/postgres/roundstore"
	"github.com/pitboss/pitboss/adapters/providers"
	"github.com/pitboss/pitboss/adapters/relay"
	"github.com/pitboss/pitboss/adapters/roundclose"
	"github.com/pitboss/pitboss/adapters/system"
	"github.com/pitboss/pitboss/adapters/witness"
	"github.com/pitboss/pitboss/api"
	"github.com/pitboss/pitboss/commands"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/internal/procs"
	"github.com/pitboss/pitboss/promo"
	"github.com/pitboss/pitboss/statement"
	"github.com/pitboss/pitboss/wallet"
)

var allRoles = []string{"api", "relay", "forwarder", "projector"}

func parseRoles(s string) ([]string, error) {
	var roles []string
	for _, r := range strings.Split(s, ",") {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		if !slices.Contains(allRoles, r) {
			return nil, fmt.Errorf("unknown role %q (roles: %s)", r, strings.Join(allRoles, ", "))
		}
		roles = append(roles, r)
	}
	if len(roles) == 0 {
		return nil, errors.New("no role given")
	}
	return roles, nil
}

func serve(ctx context.Context, cfg config, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	rolesFlag := fs.String("roles", strings.Join(allRoles, ","), "comma-separated roles to run: "+strings.Join(allRoles, ", "))
	if err := parseFlags(fs, args, os.Stdout, os.Stderr); err != nil {
		return err
	}
	roles, err := parseRoles(*rolesFlag)
	if err != nil {
		return err
	}
	log := cfg.logger()
	cfg.Delivery.logPrivateTargets(log)
	if percent, limit, ok := serveGC(); ok {
		log.Info("garbage collector set (GOGC and GOMEMLIMIT override it)", "gogc", percent, "memory_limit_mib", limit)
	}
	pool, err := openDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	reads := pool
	if cfg.ReadDatabaseURL != "" && slices.Contains(roles, "api") {
		// The read models from a standby (docs/operations.md): never
		// migrated (a standby is read-only).
		if reads, err = postgres.Connect(ctx, cfg.ReadDatabaseURL); err != nil {
			return fmt.Errorf("postgres (PITBOSS_READ_DATABASE_URL): %w", err)
		}
		defer reads.Close()
		log.Info("the read models are read from PITBOSS_READ_DATABASE_URL", "host", reads.Config().ConnConfig.Host)
	}
	registry := metrics.New()
	cfg.Admin.kafkaRoles = slices.ContainsFunc(roles, func(r string) bool { return r != "api" })

	g, gctx := errgroup.WithContext(ctx)
	if cfg.AdaptiveProcs {
		// Not in g: it lasts as long as serve, and never fails it.
		pctx, stop := context.WithCancel(gctx)
		defer stop()
		go procs.Run(pctx, procs.Config{}, log.With("component", "procs"))
	}
	if addr := pprofAddr(); addr != "" {
		if err := startPprof(gctx, g, addr, log); err != nil {
			return err
		}
	}
	if slices.Contains(roles, "api") {
		if err := asRole(gctx, "api", func() error { return startAPI(gctx, g, cfg, pool, reads, registry, log) }); err != nil {
			return err
		}
	}
	if slices.Contains(roles, "relay") {
		var pub *kafka.BatchPublisher
		err := asRole(gctx, "relay", func() (err error) {
			pub, err = startRelay(ctx, gctx, g, cfg, pool, registry, log)
			return err
		})
		if pub != nil {
			defer pub.Close() // after g.Wait: the relay and the checkpoint job have stopped
		}
		if err != nil {
			return err
		}
	}
	if slices.Contains(roles, "forwarder") {
		if err := asRole(gctx, "forwarder", func() error { return startForwarder(gctx, g, cfg, pool, log) }); err != nil {
			return err
		}
	}
	if slices.Contains(roles, "projector") {
		if err := asRole(gctx, "projector", func() error { return startProjectors(gctx, g, cfg, pool, log) }); err != nil {
			return err
		}
	}
	log.Info("pitboss started", "roles", roles, "http", cfg.HTTPAddr, "topic", cfg.Topic)
	err = g.Wait()
	if errors.Is(err, context.Canceled) || errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	log.Info("pitboss stopped", "error", err)
	return err
}

// asRole runs start with the profiler label role=NAME: the goroutines it
// starts carry it (and theirs after them), so a CPU profile splits the
// process's time by role (`go tool pprof -tags`; make bench's
// per-component table).
func asRole(ctx context.Context, role string, start func() error) (err error) {
	rpprof.Do(ctx, rpprof.Labels("role", role), func(context.Context) { err = start() })
	return err
}

// startRelay runs the relay and the checkpoint job beside it, on a
// publisher the caller closes once they have stopped.
func startRelay(ctx, gctx context.Context, g *errgroup.Group, cfg config, pool *pgxpool.Pool, registry *metrics.Registry,
	log *slog.Logger) (*kafka.BatchPublisher, error) {
	if err := kafka.EnsureTopic(ctx, cfg.KafkaBrokers, cfg.Topic, 6, kafka.BrokerDefaultReplication); err != nil {
		return nil, fmt.Errorf("kafka topic %s at %s: %w", cfg.Topic, strings.Join(cfg.KafkaBrokers, ","), err)
	}
	// The batching publisher: one Kafka transaction per relay batch
	// (all or nothing, docs/kafka-events.md), not one round trip per
	// event (make bench, 64 concurrent wallet calls: 1,230-1,290
	// calls/s against 710-820 with NewPublisher, whose per-message
	// acknowledgements also starve the rest of the process).
	pub, err := kafka.NewBatchPublisher(cfg.KafkaBrokers, log)
	if err != nil {
		return nil, fmt.Errorf("kafka publisher: %w", err)
	}
	r, err := relay.New(pool, pub, relay.Config{Topic: cfg.Topic, Linger: cfg.RelayLinger}, log)
	if err != nil {
		return pub, err
	}
	watchRelay(registry, r)
	g.Go(func() error { return r.Run(gctx) })
	return pub, startCheckpointJob(ctx, gctx, g, cfg, pool, pub, log)
}

// startAPI runs the HTTP server and the ledger writer behind it. On
// shutdown the server first finishes in-flight requests, and only then does
// the writer stop, so no accepted request loses its ledger.
func startAPI(ctx context.Context, g *errgroup.Group, cfg config, pool, reads *pgxpool.Pool, registry *metrics.Registry, log *slog.Logger) error {
	adminToken, err := cfg.adminToken(log)
	if err != nil {
		return err
	}
	box, err := cfg.secretBox(log)
	if err != nil {
		return err
	}
	launchClients, err := gatewaystore.NewLaunchClients(pool, box)
	if err != nil {
		return err
	}
	gw := gatewaystore.NewGateway(pool).WithSecretBox(box)
	if n, err := gw.SealProviderSecrets(ctx); err != nil {
		return err
	} else if n > 0 {
		log.Info("sealed provider secrets stored in plain text", "providers", n)
	}
	providerTTL := cfg.ProviderCacheTTL
	if providerTTL == 0 {
		providerTTL = -1 // lookupcache: off
	}
	lookups, err := lookupcache.NewWithConfig(gw, lookupcache.Config{ProviderTTL: providerTTL})
	if err != nil {
		return err
	}
	ledger, err := eventstore.NewLedger(pool, eventstore.LedgerConfig{MaxBatch: cfg.BatchMax, CacheSize: cfg.LedgerCache,
		InFlight: cfg.LedgerInFlight, Observer: registry}, log)
	if err != nil {
		return err
	}
	registry.WatchLedgerPaths(func() metrics.LedgerPathCounts {
		st := ledger.Stats()
		return metrics.LedgerPathCounts{Cache: st.Fast, Store: st.Store, Refused: st.Refused, Pipelined: st.Pipelined}
	})
	writerCtx, stopWriter := context.WithCancel(context.WithoutCancel(ctx))
	g.Go(func() (err error) {
		// Its own profiler label: the group commit's share of the api role.
		rpprof.Do(writerCtx, rpprof.Labels("role", "ledger"), func(ctx context.Context) { err = ledger.Run(ctx) })
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	})
	deliveries, err := deliverystore.NewDeliveries(pool, box)
	if err != nil {
		stopWriter()
		return err
	}
	launcher, err := providers.NewRegistryWithConfig(providers.Config{PublicURL: cfg.PublicURL, Logger: log})
	if err != nil {
		stopWriter()
		return err
	}
	m := newMetering(cfg, pool, registry, log)
	// Seamless clients (docs/seamless-wallet.md): their own wallets, and
	// the queue of unknown outcomes this process works.
	operators := operatorwallet.NewDirectory(gw, operatorwallet.DirectoryConfig{TTL: cfg.ProviderCacheTTL})
	followUps := gatewaystore.NewFollowUps(pool)
	registry.WatchFollowUps(followUps.Pending, time.Now, 2*time.Second, log)
	cmds := commands.NewHandler(ledger, system.Clock{}, system.IDs{})
	rounds, err := roundclose.New(eventstore.NewRounds(pool), cmds, roundclose.Config{
		Ages: gateway.RoundAutoCloseAges(cfg.RoundAutoCloseAfter), Logger: log})
	if err != nil {
		stopWriter()
		return err
	}
	// The periodic catalog sync, when PITBOSS_CATALOG_SYNC_INTERVAL is set,
	// calls providers through this role's registry: the endpoints and
	// breakers of its launches.
	var catalogs *catalogsync.Job
	if cfg.CatalogSyncInterval > 0 {
		if catalogs, err = catalogsync.NewWithConfig(gw, gateway.CatalogSyncer{Store: gw, Lister: launcher},
			catalogsync.Config{Interval: cfg.CatalogSyncInterval, Logger: log}); err != nil {
			stopWriter()
			return err
		}
	}
	promotions := promo.NewService(promostore.New(pool), cmds, gw, launcher.Promotions(), system.Clock{})
	srv := api.NewServer(api.Config{
		PublicURL: cfg.PublicURL, HostEnvironments: cfg.hostEnvironments(), DefaultEnvironment: cfg.DefaultEnvironment,
		TrustedProxies: cfg.TrustedProxies, PrivateCallbacks: cfg.Delivery.PrivateTargets,
		AdminToken: adminToken, RateLimits: cfg.Admin.RateLimits, ReadyTimeout: cfg.Admin.ReadyTimeout,
		FollowUpGrace: cfg.SeamlessFollowUpGrace, LogOrigin: cfg.logOrigin(),
	}, api.Deps{
		Admin: api.AdminDeps{Clients: gw, Launch: launchClients, Callbacks: deliveries, Reveals: launchClients, FX: gw,
			Statements: &statement.Closer{Reports: readQueries(pool), Store: auditstore.NewStatements(pool),
				Signer: auditstore.NewCheckpoints(pool, box), FX: gw, IDs: system.IDs{}, Now: time.Now},
			Deals: readstore.NewReadModels(pool), Wallets: operators, FollowUps: followUps,
			SeamlessLedger: gw},
		Statements: auditstore.NewStatements(pool),
		Usage:      m.usage, Meter: m.meter, RateStore: m.rates, Metrics: registry, Ready: m.ready,
		Games: gw, Launcher: launcher, RoundDetails: launcher, Promotions: promotions,
		Commands: cmds,
		Balances: eventstore.NewAccounts(pool), Wallets: gw, Keys: gw, Catalog: lookups, Sessions: lookups,
		Clock: system.Clock{}, IDs: system.IDs{}, Logger: log, LaunchClients: launchClients,
		Deliveries: deliveries, Webhooks: deliveries, Queries: readQueriesOn(pool, reads), FXRates: gw, TxRecords: eventstore.NewAccounts(pool),
		ProviderRounds: roundstore.NewRounds(pool), Operators: operators, FollowUps: followUps,
		Audit: auditstore.NewAudit(pool), Checkpoints: auditstore.NewCheckpoints(pool, nil), Log: logstore.New(pool),
		Console: api.ConsoleDeps{Lag: gatewaystore.NewLag(pool), Verifications: auditstore.NewAudit(pool),
			Details: auditstore.NewConsole(pool)},
	})
	if err := mountDemoGame(srv, cfg.DemoWalletURL, lookups, lookups, gw, log); err != nil {
		stopWriter()
		return err
	}
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		stopWriter()
		return fmt.Errorf("listen on %s: %w", cfg.HTTPAddr, err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
	// The usage meter stops after the server has finished its in-flight
	// requests, and flushes their counts once more as it stops.
	meterCtx, stopMeter := context.WithCancel(context.WithoutCancel(ctx))
	g.Go(func() error { return m.meter.Run(meterCtx) })
	// The stale-round job writes through the ledger writer of this role,
	// so it runs here; it stops with the server's context, before the
	// writer (which stops only after Shutdown).
	g.Go(func() error { return rounds.Run(ctx) })
	if catalogs != nil {
		g.Go(func() error { return catalogs.Run(ctx) })
	}
	// Free-bet rewards past their validity expire through the same writer.
	g.Go(func() error {
		return promotions.RunExpiry(ctx, cfg.PromoExpiryInterval, func(err error) {
			log.Error("promotions: reward expiry", "error", err)
		})
	})
	g.Go(func() error {
		return wallet.FollowUpRunner{Core: srv.WalletCore(), Queue: followUps, Logger: log}.Run(ctx)
	})
	g.Go(func() error {
		if cfg.TLSCert != "" {
			hs.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
			return hs.ServeTLS(ln, cfg.TLSCert, cfg.TLSKey)
		}
		return hs.Serve(ln)
	})
	g.Go(func() error {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
		defer cancel()
		err := hs.Shutdown(sctx)
		stopMeter()
		stopWriter()
		return err
	})
	return nil
}

// startCheckpointJob runs the daily signed checkpoint in the relay role
// (docs/audit.md, "Signed checkpoints"): every minute it makes the day's
// checkpoint if none was signed since midnight UTC and publishes what is
// pending on the checkpoint topic. With several relay instances the
// store's advisory lock lets one at a time do it.
func startCheckpointJob(ctx, gctx context.Context, g *errgroup.Group, cfg config, pool *pgxpool.Pool, pub message.Publisher, log *slog.Logger) error {
	topic := cfg.Topic + checkpointjob.TopicSuffix
	if err := kafka.EnsureTopic(ctx, cfg.KafkaBrokers, topic, 3, kafka.BrokerDefaultReplication); err != nil {
		return fmt.Errorf("kafka topic %s at %s: %w", topic, strings.Join(cfg.KafkaBrokers, ","), err)
	}
	box, err := cfg.secretBox(log)
	if err != nil {
		return err
	}
	keys := auditstore.NewCheckpoints(pool, box)
	job, err := checkpointjob.New(keys, pub, checkpointjob.Config{Topic: topic, Logger: log})
	if err != nil {
		return err
	}
	g.Go(func() error { return job.Run(gctx) })
	// The verifiable log (docs/audit.md): its trees grown from the
	// committed events and their C2SP checkpoints signed, off the wallet's
	// answer path, one instance of the cluster at a time.
	g.Go(func() error {
		return logstore.Run(gctx, logstore.NewBuilder(pool, 0, log), logstore.New(pool), cfg.logOrigin(), keys,
			time.Second, cfg.LogCheckpointInterval, time.Now)
	})
	// The witnesses' cosignatures of the latest checkpoints, apart from
	// the builder, which a slow witness never holds up.
	if len(cfg.LogWitnesses) > 0 {
		cos := witness.NewCosigner(logstore.New(pool), cfg.LogWitnesses, nil, log)
		g.Go(func() error { return witness.Run(gctx, cos, cfg.LogCheckpointInterval) })
	}
	return nil
}
