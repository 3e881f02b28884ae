package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/pitboss/pitboss/adapters/catalogsync"
	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/projector"
	"github.com/pitboss/pitboss/adapters/witness"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/promo"
	"github.com/pitboss/pitboss/wallet"
)

// config is every setting, read from PITBOSS_* environment variables. The
// README lists them with their defaults.
type config struct {
	DatabaseURL string
	// ReadDatabaseURL, when set, serves the read models' queries (history,
	// reports) from another server: a streaming standby
	// (docs/operations.md). Empty: DatabaseURL.
	ReadDatabaseURL    string
	KafkaBrokers       []string
	Topic              string
	HTTPAddr           string
	PublicURL          string
	SandboxHosts       []string
	ProductionHosts    []string
	DefaultEnvironment string
	DataDir            string
	LogLevel           slog.Level
	LogFormat          string
	BatchMax           int
	// LedgerCache is PITBOSS_LEDGER_CACHE: how many accounts, and how many
	// idempotency records, the ledger writer keeps to decide batches
	// without reading them first (eventstore.LedgerConfig.CacheSize).
	LedgerCache int
	// LedgerInFlight is PITBOSS_LEDGER_IN_FLIGHT: how many batches the
	// ledger writer may have in flight at once, 1 or 2
	// (eventstore.LedgerConfig.InFlight).
	LedgerInFlight  int
	ShutdownTimeout time.Duration
	// ProviderCacheTTL is PITBOSS_PROVIDER_CACHE_TTL: how long the api
	// role uses a provider (secret, enabled) it read before reading it
	// again (adapters/lookupcache); 0 reads it on every wallet call.
	ProviderCacheTTL time.Duration
	// RoundAutoCloseAfter is PITBOSS_ROUND_AUTO_CLOSE_AFTER: how long a
	// round of a provider whose wallet protocol names no limit may stay
	// open before the ledger closes it (0, the default: never). Caleta's
	// rounds close after its document's 48 hours whatever it says
	// (gateway.RoundAutoCloseAges).
	RoundAutoCloseAfter time.Duration
	// CatalogSyncInterval is PITBOSS_CATALOG_SYNC_INTERVAL: how often the
	// api role syncs the catalog of every enabled provider with a game
	// list (adapters/catalogsync; docs/providers-and-games.md#catalog-sync);
	// 0, the default: never (`pitboss catalog sync` by hand).
	CatalogSyncInterval time.Duration
	// SeamlessFollowUpGrace is PITBOSS_SEAMLESS_FOLLOWUP_GRACE: how long a
	// seamless client's unknown outcome waits before its follow-up's first
	// attempt (wallet.Deps.FollowUpGrace; docs/seamless-wallet.md#follow-ups).
	SeamlessFollowUpGrace time.Duration
	// LogOrigin is PITBOSS_LOG_ORIGIN: the verifiable log's C2SP origin
	// (the platform log's; a client's adds /clients/<id>); empty: the
	// public URL's host and "/ledger" (cfg.logOrigin).
	LogOrigin string
	// LogCheckpointInterval is PITBOSS_LOG_CHECKPOINT_INTERVAL: how often,
	// at most, a log that grew gets a new signed checkpoint.
	LogCheckpointInterval time.Duration
	// LogWitnesses is PITBOSS_LOG_WITNESSES: the witnesses asked to
	// cosign the log's checkpoints (relay role; docs/audit.md, "Witness
	// cosigning"), each its cosignature verifier key and its URL.
	LogWitnesses []witness.Witness
	// PromoExpiryInterval is PITBOSS_PROMO_EXPIRY_INTERVAL: how often the
	// api role expires free-bet rewards past their validity
	// (promo.Service.RunExpiry; docs/promotions.md).
	PromoExpiryInterval time.Duration
	// RelayLinger is PITBOSS_RELAY_LINGER: how long the relay gathers
	// after a wake-up when its last batch was small (relay.Config.Linger;
	// 0s: never). ConsumerFetchWait is PITBOSS_CONSUMER_FETCH_WAIT: how
	// long the broker may hold the projector's and the forwarder's
	// fetches at a light load (kafka.BatchConsumerConfig.FetchWait; 0s,
	// the default: it answers at once). README's configuration; the
	// figures in docs/benchmarks.md.
	RelayLinger, ConsumerFetchWait time.Duration
	// AdaptiveProcs is PITBOSS_ADAPTIVE_PROCS (on, the default, or off):
	// serve runs on one P while it is light and on all of them under load
	// (internal/procs). A GOMAXPROCS the operator set turns it off.
	AdaptiveProcs bool
	// SecretKey is PITBOSS_SECRET_KEY, the master key that seals client
	// and provider secrets (see secretkey.go); empty: a key file in DataDir.
	SecretKey string
	// TLSCert and TLSKey are PITBOSS_TLS_CERT / PITBOSS_TLS_KEY: PEM files
	// the api role serves HTTPS with (both or neither; default plain HTTP
	// behind a TLS-terminating proxy, see docs/threat-model.md).
	TLSCert, TLSKey string
	TrustedProxies  []netip.Prefix
	// Delivery is the outbound callback and webhook settings (forwarder.go).
	Delivery deliveryConfig
	// Admin is the admin API, rate limits, usage and readiness settings
	// (admin_config.go).
	Admin adminConfig
	// DemoWalletURL is where the built-in demo game calls the provider
	// wallet: PITBOSS_DEMO_WALLET_URL, default this process's own listen
	// address on loopback (demo_wallet.go; the game is wired in
	// demo_game.go).
	DemoWalletURL string
	// ReplayMemory is PITBOSS_REPLAY_MEMORY: the memory budget of `pitboss
	// replay` in bytes (its --memory flag's default; replay.go).
	ReplayMemory int64
	// ProjectorMode is PITBOSS_PROJECTOR_MODE (projector.RoleConfigs).
	ProjectorMode string
}

func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}

// envInt reads an integer setting from lo to hi, def when unset; a value
// that is not one is added to errs and returned as read.
func envInt(name string, def, lo, hi int, errs *[]error) int {
	v, err := strconv.Atoi(env(name, strconv.Itoa(def)))
	if err != nil || v < lo || v > hi {
		*errs = append(*errs, fmt.Errorf("%s must be an integer from %d to %d", name, lo, hi))
	}
	return v
}

func list(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, strings.ToLower(s))
		}
	}
	return out
}

func loadConfig() (config, error) {
	c := config{
		DatabaseURL:        env("PITBOSS_DATABASE_URL", "postgres://pitboss:pitboss@127.0.0.1:5433/pitboss?sslmode=disable"),
		ReadDatabaseURL:    os.Getenv("PITBOSS_READ_DATABASE_URL"),
		KafkaBrokers:       list(env("PITBOSS_KAFKA_BROKERS", "127.0.0.1:9092")),
		Topic:              env("PITBOSS_KAFKA_TOPIC", "pitboss.ledger.events.v1"),
		HTTPAddr:           env("PITBOSS_HTTP_ADDR", "127.0.0.1:8080"),
		SandboxHosts:       list(env("PITBOSS_SANDBOX_HOSTS", "localhost,127.0.0.1,sandbox.pitboss.local")),
		ProductionHosts:    list(env("PITBOSS_PRODUCTION_HOSTS", "api.pitboss.local")),
		DefaultEnvironment: env("PITBOSS_DEFAULT_ENVIRONMENT", "sandbox"),
		DataDir:            env("PITBOSS_DATA_DIR", ".data"),
		LogFormat:          env("PITBOSS_LOG_FORMAT", "json"),
	}
	c.PublicURL = env("PITBOSS_PUBLIC_URL", "http://"+c.HTTPAddr)
	c.DemoWalletURL = env("PITBOSS_DEMO_WALLET_URL", loopbackURL(c.HTTPAddr))
	var errs []error
	if err := c.LogLevel.UnmarshalText([]byte(env("PITBOSS_LOG_LEVEL", "info"))); err != nil {
		errs = append(errs, fmt.Errorf("PITBOSS_LOG_LEVEL: %w", err))
	}
	c.BatchMax = envInt("PITBOSS_BATCH_MAX", 256, 1, 10_000, &errs)
	c.LedgerCache = envInt("PITBOSS_LEDGER_CACHE", eventstore.DefaultLedgerCacheSize, 2, 10_000_000, &errs)
	c.LedgerInFlight = envInt("PITBOSS_LEDGER_IN_FLIGHT", eventstore.DefaultLedgerInFlight, 1, 2, &errs)
	var err error
	if c.ShutdownTimeout, err = time.ParseDuration(env("PITBOSS_SHUTDOWN_TIMEOUT", "20s")); err != nil {
		errs = append(errs, fmt.Errorf("PITBOSS_SHUTDOWN_TIMEOUT: %w", err))
	}
	if c.ProviderCacheTTL, err = time.ParseDuration(env("PITBOSS_PROVIDER_CACHE_TTL", "1s")); err != nil ||
		c.ProviderCacheTTL < 0 || c.ProviderCacheTTL > time.Minute {
		errs = append(errs, fmt.Errorf("PITBOSS_PROVIDER_CACHE_TTL must be a duration from 0s to 1m"))
	}
	if c.RoundAutoCloseAfter, err = time.ParseDuration(env("PITBOSS_ROUND_AUTO_CLOSE_AFTER", "0s")); err != nil ||
		(c.RoundAutoCloseAfter != 0 && c.RoundAutoCloseAfter < time.Hour) {
		errs = append(errs, fmt.Errorf("PITBOSS_ROUND_AUTO_CLOSE_AFTER must be 0s (off) or a duration of at least 1h"))
	}
	errs = append(errs, c.loadLog()...)
	if c.PromoExpiryInterval, err = time.ParseDuration(env("PITBOSS_PROMO_EXPIRY_INTERVAL", promo.DefaultExpiryInterval.String())); err != nil ||
		c.PromoExpiryInterval < time.Second || c.PromoExpiryInterval > time.Hour {
		errs = append(errs, fmt.Errorf("PITBOSS_PROMO_EXPIRY_INTERVAL must be a duration from 1s to 1h"))
	}
	errs = append(errs, c.loadGather()...)
	if c.CatalogSyncInterval, err = time.ParseDuration(env("PITBOSS_CATALOG_SYNC_INTERVAL", "0s")); err != nil ||
		(c.CatalogSyncInterval != 0 && (c.CatalogSyncInterval < catalogsync.MinInterval || c.CatalogSyncInterval > catalogsync.MaxInterval)) {
		errs = append(errs, fmt.Errorf("PITBOSS_CATALOG_SYNC_INTERVAL must be 0s (off) or a duration from %s to %s",
			catalogsync.MinInterval, catalogsync.MaxInterval))
	}
	if c.SeamlessFollowUpGrace, err = time.ParseDuration(env("PITBOSS_SEAMLESS_FOLLOWUP_GRACE", wallet.FollowUpGrace.String())); err != nil ||
		c.SeamlessFollowUpGrace < time.Second || c.SeamlessFollowUpGrace > time.Hour {
		errs = append(errs, fmt.Errorf("PITBOSS_SEAMLESS_FOLLOWUP_GRACE must be a duration from 1s to 1h"))
	}
	c.ProjectorMode = env("PITBOSS_PROJECTOR_MODE", projector.ModeCombined)
	if _, err := projector.RoleConfigs(c.ProjectorMode, nil, ""); err != nil {
		errs = append(errs, fmt.Errorf("PITBOSS_PROJECTOR_MODE: %w", err))
	}
	if c.ReplayMemory, err = parseBytes(env("PITBOSS_REPLAY_MEMORY", "512MB")); err != nil {
		errs = append(errs, fmt.Errorf("PITBOSS_REPLAY_MEMORY: %w", err))
	}
	if c.DefaultEnvironment != "sandbox" && c.DefaultEnvironment != "production" {
		errs = append(errs, fmt.Errorf("PITBOSS_DEFAULT_ENVIRONMENT must be sandbox or production"))
	}
	// PITBOSS_CURRENCIES adds precisions: "XYZ:8,ABC:2".
	for _, pair := range list(env("PITBOSS_CURRENCIES", "")) {
		code, exp, found := strings.Cut(strings.ToUpper(pair), ":")
		e, err := strconv.Atoi(exp)
		if !found || err != nil {
			errs = append(errs, fmt.Errorf("PITBOSS_CURRENCIES: %q is not CODE:DECIMALS", pair))
			continue
		}
		if err := domain.RegisterCurrency(code, e); err != nil {
			errs = append(errs, fmt.Errorf("PITBOSS_CURRENCIES: %w", err))
		}
	}
	c.SecretKey = os.Getenv("PITBOSS_SECRET_KEY")
	c.TLSCert, c.TLSKey = os.Getenv("PITBOSS_TLS_CERT"), os.Getenv("PITBOSS_TLS_KEY")
	if (c.TLSCert == "") != (c.TLSKey == "") {
		errs = append(errs, errors.New("PITBOSS_TLS_CERT and PITBOSS_TLS_KEY go together: set both or neither"))
	}
	// PITBOSS_TRUSTED_PROXIES: CIDRs (or single addresses) of the proxies
	// whose X-Forwarded-For the signed launch's IP allow-list believes.
	for _, s := range list(env("PITBOSS_TRUSTED_PROXIES", "")) {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				errs = append(errs, fmt.Errorf("PITBOSS_TRUSTED_PROXIES: %q is not a CIDR or an address", s))
				continue
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		c.TrustedProxies = append(c.TrustedProxies, p.Masked())
	}
	if len(c.KafkaBrokers) == 0 {
		errs = append(errs, errors.New("PITBOSS_KAFKA_BROKERS is empty"))
	}
	errs = append(errs, c.Delivery.load()...)
	errs = append(errs, c.Admin.load()...)
	return c, errors.Join(errs...)
}

func (c config) hostEnvironments() map[string]string {
	m := map[string]string{}
	for _, h := range c.SandboxHosts {
		m[h] = "sandbox"
	}
	for _, h := range c.ProductionHosts {
		m[h] = "production"
	}
	return m
}

func (c config) logger() *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	if c.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, opts))
}

// validLogOrigin: a C2SP origin is a schema-less URL-like name; it is also
// the note key name, which may hold no space or '+'.
func validLogOrigin(s string) bool {
	if s == "" || len(s) > 200 || strings.Contains(s, "://") || strings.ContainsAny(s, " +\t\n") {
		return false
	}
	host, _, _ := strings.Cut(s, "/")
	return host != "" && !strings.HasSuffix(s, "/")
}

// logOrigin is the verifiable log's origin: PITBOSS_LOG_ORIGIN, or the
// public URL's host (with its port) and "/ledger".
func (c config) logOrigin() string {
	if c.LogOrigin != "" {
		return c.LogOrigin
	}
	if u, err := url.Parse(c.PublicURL); err == nil && u.Host != "" {
		return u.Host + "/ledger"
	}
	return "pitboss.local/ledger"
}

// loadLog reads the verifiable log's settings (docs/audit.md).
func (c *config) loadLog() []error {
	var errs []error
	c.LogOrigin = env("PITBOSS_LOG_ORIGIN", "")
	if c.LogOrigin != "" && !validLogOrigin(c.LogOrigin) {
		errs = append(errs, fmt.Errorf("PITBOSS_LOG_ORIGIN must be a host name with an optional path (e.g. casino.example/ledger), no scheme, spaces or '+'"))
	}
	var err error
	if c.LogCheckpointInterval, err = time.ParseDuration(env("PITBOSS_LOG_CHECKPOINT_INTERVAL", "1m")); err != nil ||
		c.LogCheckpointInterval < time.Second || c.LogCheckpointInterval > 24*time.Hour {
		errs = append(errs, fmt.Errorf("PITBOSS_LOG_CHECKPOINT_INTERVAL must be a duration from 1s to 24h"))
	}
	if c.LogWitnesses, err = witness.ParseWitnesses(env("PITBOSS_LOG_WITNESSES", "")); err != nil {
		errs = append(errs, fmt.Errorf("PITBOSS_LOG_WITNESSES: %w", err))
	}
	return errs
}

// loadGather reads the light-load settings: PITBOSS_RELAY_LINGER,
// PITBOSS_CONSUMER_FETCH_WAIT and PITBOSS_ADAPTIVE_PROCS.
func (c *config) loadGather() []error {
	var errs []error
	var err error
	switch v := env("PITBOSS_ADAPTIVE_PROCS", "on"); v {
	case "on", "off":
		c.AdaptiveProcs = v == "on" && os.Getenv("GOMAXPROCS") == ""
	default:
		errs = append(errs, fmt.Errorf("PITBOSS_ADAPTIVE_PROCS must be on or off, not %q", v))
	}
	if c.RelayLinger, err = time.ParseDuration(env("PITBOSS_RELAY_LINGER", defaultGather.String())); err != nil ||
		c.RelayLinger < 0 || c.RelayLinger > time.Second {
		errs = append(errs, fmt.Errorf("PITBOSS_RELAY_LINGER must be a duration from 0s (off) to 1s"))
	}
	if c.ConsumerFetchWait, err = time.ParseDuration(env("PITBOSS_CONSUMER_FETCH_WAIT", "0s")); err != nil ||
		c.ConsumerFetchWait < 0 || c.ConsumerFetchWait > time.Second {
		errs = append(errs, fmt.Errorf("PITBOSS_CONSUMER_FETCH_WAIT must be a duration from 0s (off) to 1s"))
	}
	return errs
}

// defaultGather is the default of PITBOSS_RELAY_LINGER: at a light load
// the relay waits this long to carry several events per Kafka transaction
// (issue 38); under load nothing waits. 50 ms against 20 ms at 250 calls/s
// (four interleaved pairs): the machine's CPU per call 2,462 → 1,976 µs
// (fewer Kafka transactions, relay reads and checkpoints, projector and
// forwarder transactions), relay lag p99 26–28 → 55–56 ms of issue 38's
// 100, projection lag p99 116–121 → 142–147 ms of its 250; 100 ms put the
// relay lag p99 over 100 ms. PITBOSS_CONSUMER_FETCH_WAIT is off by default:
// the relay's linger already spaces the transactions, so a held fetch
// gathered nothing more at 250 calls/s, and held fetches cost the broker
// and the service about 0.045 cores while idle (docs/benchmarks.md).
const defaultGather = 50 * time.Millisecond
