package architecture

// Rooms is the package map: every package of the module is in exactly one
// room, and imports only what its room allows (architecture_test.go checks
// both over `go list`). docs/architecture.md's table is rendered from it:
// after an edit here, `go test ./architecture -run TestPackageMapDoc
// -update` rewrites the doc.
var Rooms = []Room{
	// The core: pure (no HTTP, nothing of the adapters), each declaring its
	// own ports.
	{Packages: []string{"domain"},
		Holds: "money and currencies, account ids (`ParseAccountID`), events and their canonical body (`EncodeBody`, " +
			"`DecodeBody`), wallet decisions (`DecideBet` ..., the settled-bet rule of `DecideRollback`), the idempotency " +
			"record, exact JSON amounts (`AmountText`), the one-line text rule of what the ledger stores (`CheckText`, " +
			"`MaxReasonLength`), commission deals and their versions, exchange rates and exact conversion; rules " +
			"answer `*domain.FieldError` or a sentinel error",
		Note: "standard library and `govalues/decimal` only, with everything it pulls in (checked)"},
	{Packages: []string{"commands"},
		Holds: "one file per money command; the `Ledger`, `Clock`, `IDs` ports; `MemoryLedger` (the `Ledger` contract " +
			"suite is `commands/ledgertest`, run by `MemoryLedger` and the Postgres writer)",
		Imports: []string{"domain"}},
	{Packages: []string{"projections"},
		Holds: "read-model builders (history, balances, GGR, commission), their ports and queries, `Memory`, the GGR " +
			"report in a reporting currency (`GGRIn`, the `FXRates` port); the store contract suite is " +
			"`projections/projectionstest`, run by `Memory` and `readstore`",
		Imports: []string{"domain"}},
	{Packages: []string{"gateway"},
		Holds: "everything that is not the ledger: clients, API keys and scopes (`CheckScopes`, `HashKey`), " +
			"environments, catalog, provider routes, kinds and wallet protocols, game sessions, signed-launch settings " +
			"(`ParseAllowList`, `ParseReturnHosts`, `CheckUnsignedLaunchBalance`), the HMAC signers and the provider " +
			"wallet's signature schemes (`Signature`, `VerifyProviderCall`: v1, v2), webhooks and deliveries " +
			"(`CheckCallbackURL`, `ClassifyAddress`: the one SSRF rule, `PrivateTargets`: whose targets may be inside, " +
			"by client environment, webhook kinds, the delivery queue port), usage, rate tiers and the rate store " +
			"(`MemoryRateStore`), the deal and FX-rate ports, lag; rules answer `*gateway.FieldError`",
		Imports: []string{"domain", "gateway/rsasig"}},
	{Packages: []string{"gateway/rsasig"},
		Holds: "RSASSA-PKCS1-v1_5 SHA-256 verification with a key prepared once (`Prepare`, `Key.VerifySHA256`): " +
			"crypto/rsa's steps on `filippo.io/bigmod`, a third cheaper per Caleta call than crypto/rsa, which " +
			"prepares the key on every call"},
	{Packages: []string{"wallet"},
		Holds: "the wallet core every wallet protocol shares: the caller and its session, the game a call is booked " +
			"under, the money calls (balance, bet, win, rollback) over `commands`, idempotency fingerprints, one " +
			"`Verdict` for every outcome; its `Catalog` and `Sessions` ports",
		Imports: []string{"domain", "commands", "gateway"}},
	{Packages: []string{"promo"},
		Holds: "free-bet campaigns operators grant (docs/promotions.md): the campaign as data, each reward's grant, " +
			"cancellation and expiry through `commands`, the provider's own promotion API asked first " +
			"(`ProviderPromotions`), the campaign report (`Reports`, its money read from the history read model); its " +
			"`Store`, `ReportStore`, `Ledger` and `Catalog` ports",
		Imports: []string{"domain", "commands", "gateway", "projections"}},
	{Packages: []string{"ledgerlog"},
		Holds: "the verifiable log over the ledger: RFC 6962 leaves over the events' canonical bodies, the tree grown " +
			"in batches (`Append`: Go's `golang.org/x/mod/sumdb/tlog` arithmetic, C2SP tiles of height 8), C2SP " +
			"checkpoints as signed notes (`Sign`, `Open`); one log for the platform, one per client (docs/audit.md)"},
	{Packages: []string{"audit"},
		Holds: "pure checks of the hash chain, double entry and account folds; signed checkpoints (payload, canonical " +
			"bytes, Ed25519); the read ports of the audit and console routes (`Log`, `Runs`, `TransactionDetails`)",
		Imports: []string{"domain", "projections"}},
	{Packages: []string{"statement", "reconcile"},
		Holds: "finance's own documents, both pure: a closed period's statement (`statement`: GGR and commission per " +
			"currency at a ledger position, the late changes it carries, totals, signed with the checkpoint key; " +
			"docs/statements.md) and a daily file reconciled against the ledger (`reconcile`: the column mapping, the " +
			"CSV reader, the comparison; docs/reconciliation.md). The rest of finance lives with its layer: deal " +
			"versions and FX in `domain`, commission and GGR in a reporting currency in `projections`, their ports in " +
			"`gateway`, stores in `readstore`, `gatewaystore` and `auditstore`, routes in `api/admin` and `api/statements`",
		Imports: []string{"audit", "projections", "domain"}},

	// The HTTP side.
	{Packages: []string{"api"},
		Holds: "the server: `NewServer`, `Config`, `Deps`, every route registration and the middleware order (request " +
			"id, metrics, recover, log, 405; API-key auth, usage, rate limit), the one error handler, the OpenAPI " +
			"document; the operator API's own handlers (transactions, balance, catalog and launches, reads and " +
			"reports, reconciliation, audit, console routes), the signed launch and return address, the usage meter",
		Imports: []string{"api/...", "wallet", "commands", "projections", "gateway", "audit", "reconcile", "domain", "console",
			"promo", "ledgerlog"}},
	{Packages: []string{"api/wire"},
		Holds: "what every handler package answers with: the error codes and `Error`, `Classify` (the one mapping of " +
			"domain, gateway, read-model and provider errors to status and code), the success envelope (`OK`, " +
			"`OKPage`, `Number`, `TimeLayout`), strict body and query reading (`BindJSON`, `DecodeJSON`, `QueryInt` " +
			"...), the request's id and principal",
		Imports: []string{"wallet", "commands", "projections", "gateway", "domain"}},
	{Packages: []string{"api/admin"},
		Holds: "the admin API (`/admin/v1`): admin-token auth, clients, keys, tiers, launch and callback settings, the " +
			"client secret's recorded reveal (the tokens area), deals, FX rates, closing statements, a client's wallet " +
			"mode and the seamless wallet's follow-ups; `Register(group, Deps)`",
		Imports: []string{"api/wire", "api/deliveries", "api/usage", "api/statements", "api/vlog", "gateway", "projections",
			"statement", "domain", "wallet", "ledgerlog"}},
	{Packages: []string{"api/deliveries"},
		Holds: "the delivery log, webhook endpoints (`Endpoints`: one implementation for `/api/v1` and `/admin/v1`) " +
			"and the forwarded-callback setting",
		Imports: []string{"api/wire", "gateway", "domain"}},
	{Packages: []string{"api/usage"},
		Holds:   "usage reports (`Reports`), for the client and the admin alike",
		Imports: []string{"api/wire", "gateway", "domain"}},
	{Packages: []string{"api/vlog"},
		Holds: "the verifiable log over HTTP (docs/audit.md): each log as C2SP tlog-tiles (checkpoint, hash tiles, entry " +
			"bundles; `TilePath`, `ParseTilePath`), its note verifier keys, inclusion and consistency proofs against its " +
			"checkpoints; one implementation for a client's own log (`/api/v1/audit/log`) and the platform's " +
			"(`/admin/v1/log`); its `Store` port",
		Imports: []string{"api/wire", "audit", "ledgerlog", "domain"}},
	{Packages: []string{"api/statements"},
		Holds: "closed periods' statements (docs/statements.md): a client's list, each as JSON (with the signed " +
			"record), CSV or a printable HTML page; closing a period, for the admin API",
		Imports: []string{"api/wire", "statement", "domain"}},
	{Packages: []string{"api/dialect/*"},
		Holds: "the wallet protocols, one thin dialect each (`pitboss`: `/provider/v1/wallet`, HMAC-signed; " +
			"`caleta`, `evolution`, `redtiger`, `tbb`: the providers' own protocols, docs/protocols/): auth, decode, " +
			"encode, and the table from `wallet`'s verdict to the protocol's statuses; the money is `wallet`'s",
		Imports: []string{"wallet", "api/wire", "gateway", "gateway/rsasig", "projections", "domain"},
		Note: "not `commands`: a dialect reaches the ledger only through `wallet`; `projections` only for our " +
			"protocol's daily round export (`pitboss.Rounds`)"},
	{Packages: []string{"console"},
		Holds: "the operator and finance console: static HTML, CSS and JavaScript embedded in the binary and served " +
			"at `/console/` (docs/console.md)"},
	{Packages: []string{"demogame"},
		Holds: "the built-in demo game provider (`/demo/*`): plays a slot and calls the provider wallet over HTTP " +
			"like any provider; mounted by `cmd`",
		Imports: []string{"gateway", "domain"}},
	{Packages: []string{"providersim"},
		Holds: "the provider simulator (`pitboss provider-sim`, docs/provider-onboarding.md): an outside client that " +
			"plays a session on a wallet protocol over HTTP and checks every answer against the protocol's " +
			"document; one file per protocol, one function per step",
		Imports: []string{"gateway", "domain"},
		Note:    "the v2 signer and money; it speaks the wire, never the server's packages"},
	{Packages: []string{"operatorsim"},
		Holds: "the operator wallet simulator (`pitboss operator-sim`, docs/seamless-wallet.md): a seamless client's own " +
			"wallet with balances kept in a state file, speaking valkyrie-pam or tbb, with fault injection (latency, " +
			"timeouts, 5xx, an answer lost after the movement, a restart)",
		Imports: []string{"gateway", "domain"},
		Note:    "money and the signer; it speaks the wire, never the server's packages"},
	{Packages: []string{"schemas"},
		Holds: "the JSON Schemas of what Pitboss sends outside (every event body, the forwarded callback, the " +
			"webhook envelope; docs/kafka-events.md), and `Compile` for the tests and tools that validate bodies"},

	// The adapters: PostgreSQL stores first.
	{Packages: []string{"migrations"},
		Holds: "the numbered SQL migrations, embedded in the binary, applied by `pitboss migrate` and the tests"},
	{Packages: []string{"adapters/postgres"},
		Holds:   "connection, migrations runner, helpers the stores share",
		Imports: []string{"migrations"}},
	{Packages: []string{"adapters/postgres/eventstore"},
		Holds: "the ledger writer (group commit, hash chain, commit order = position order), account reader, ledger " +
			"generator (`GenerateLedger`, driven by a `Traffic`: `SeedEvents`' or the benchmark's)",
		Imports: []string{"adapters/postgres", "commands", "projections", "domain"}},
	{Packages: []string{"adapters/postgres/readstore"},
		Holds: "read-model store: the schema names, batched apply, queries and the history row scanner (`TxCols`, " +
			"`ScanTx`, also read by the console detail), commission deals; rebuild (`pitboss replay`: in passes or " +
			"slices, the history row's binary COPY form, the one-pass numbering), the comparison with the live tables " +
			"(a salted row digest, then row by row), shadow tables, their keys and indexes, and swap",
		Imports: []string{"adapters/postgres", "adapters/postgres/readstore/bincopy",
			"adapters/postgres/readstore/replaypass", "projections", "gateway", "domain"}},
	{Packages: []string{"adapters/postgres/readstore/bincopy"},
		Holds: "PostgreSQL's binary COPY format written a row at a time (typed appenders, no value boxed): a codec " +
			"that knows no read model"},
	{Packages: []string{"adapters/postgres/readstore/replaypass"},
		Holds: "the record of a rebuild's written slices and the state each carries to the next, for resuming an " +
			"interrupted `replay --full`",
		Imports: []string{"projections"}},
	{Packages: []string{"adapters/postgres/gatewaystore"},
		Holds: "clients and keys, catalog, provider routes and sealed secrets, game sessions, signed-launch " +
			"settings, usage, rate windows, FX rates, lag",
		Imports: []string{"adapters/postgres", "adapters/secretbox", "wallet", "gateway", "projections", "domain"}},
	{Packages: []string{"adapters/postgres/deliverystore"},
		Holds:   "delivery queue and log, webhook endpoints, forwarded-callback settings",
		Imports: []string{"adapters/postgres", "adapters/secretbox", "gateway", "domain"}},
	{Packages: []string{"adapters/postgres/auditstore"},
		Holds: "verify (chain, double entry, folds, read models, the verifiable log recomputed), verify runs, export, audit pages, transaction " +
			"detail, closed statements",
		Imports: []string{"adapters/postgres", "adapters/postgres/readstore", "adapters/secretbox", "audit",
			"statement", "ledgerlog", "adapters/postgres/logstore", "projections", "domain"}},
	{Packages: []string{"adapters/postgres/roundstore"},
		Holds:   "a provider's daily round export, read from the history read model (docs/reconciliation.md)",
		Imports: []string{"projections"}},
	{Packages: []string{"adapters/postgres/logstore"},
		Holds: "the verifiable log in PostgreSQL (migration 00033): each log's tree, its C2SP tiles, which event each " +
			"leaf is, the signed checkpoints; `Builder`, which grows the platform's and each client's log from the " +
			"committed events, gap-safe and resumable (docs/audit.md)",
		Imports: []string{"ledgerlog", "domain"}},
	{Packages: []string{"adapters/postgres/promostore"},
		Holds: "free-bet campaigns and the providers' grants (migration 00031); the ledger's reward records and the " +
			"history read model's promo money per campaign, for the campaign report (docs/promotions.md)",
		Imports: []string{"promo", "domain"}},

	// The adapters: workers, Kafka, providers, the rest.
	{Packages: []string{"adapters/relay"},
		Holds:   "event store → Kafka, gap-safe, one active",
		Imports: []string{"adapters/kafka", "adapters/system", "domain"}},
	{Packages: []string{"adapters/witness"},
		Holds: "the witnesses' cosignatures of the verifiable log's checkpoints over C2SP tlog-witness (`Cosigner`, " +
			"`AddCheckpoint`, cosignature/v1 `Verify`), added to the stored notes; `ParseWitnesses` reads " +
			"PITBOSS_LOG_WITNESSES (docs/audit.md)",
		Imports: []string{"adapters/postgres/logstore"}},
	{Packages: []string{"adapters/checkpointjob"},
		Holds: "the daily signed checkpoint (in the relay role, under an advisory lock) and its publication on the " +
			"checkpoints topic",
		Imports: []string{"adapters/kafka", "adapters/postgres/auditstore", "audit"}},
	{Packages: []string{"adapters/kafka"},
		Holds: "Kafka publisher and consumers (franz-go, sarama, watermill-kafka)"},
	{Packages: []string{"adapters/projector"},
		Holds:   "the consumer group that applies events to the read models",
		Imports: []string{"adapters/kafka", "adapters/system", "projections", "domain"}},
	{Packages: []string{"adapters/forwarder", "adapters/delivery"},
		Holds:   "callbacks and webhooks: enqueue from Kafka; signed delivery with retries and SSRF guard",
		Imports: []string{"adapters/kafka", "adapters/system", "gateway", "domain"}},
	{Packages: []string{"adapters/roundclose"},
		Holds: "the stale-round job: rounds open past their provider's limit closed through `commands` (one " +
			"`wallet.round_closed.v1` each), one instance of the cluster at a time",
		Imports: []string{"commands", "domain"}},
	{Packages: []string{"adapters/catalogsync"},
		Holds: "the periodic catalog sync: each enabled provider with a game list synced from it through " +
			"`gateway.CatalogSyncer`, one instance of the cluster at a time (off unless PITBOSS_CATALOG_SYNC_INTERVAL)",
		Imports: []string{"gateway"}},
	{Packages: []string{"adapters/providers"},
		Holds: "launch adapters per provider kind, failover, circuit breakers; the providers' own calls beside the " +
			"launch over the same endpoints and breakers (promotion APIs: `promo.ProviderPromotions`)",
		Imports: []string{"promo", "gateway", "domain"}},
	{Packages: []string{"adapters/operatorwallet"},
		Holds: "a seamless client's own wallet over HTTP (`wallet.OperatorWallet`): the valkyrie-pam and tbb clients, " +
			"their error codes as verdicts, unknown outcomes; `Directory`, the client's wallet from its settings",
		Imports: []string{"wallet", "gateway", "domain"}},
	{Packages: []string{"adapters/lookupcache"},
		Holds:   "provider, game and game-session lookups from memory",
		Imports: []string{"wallet", "gateway"}},
	{Packages: []string{"adapters/metrics"},
		Holds:   "the Prometheus registry and every series (`/metrics`)",
		Imports: []string{"gateway"}},
	{Packages: []string{"adapters/secretbox", "adapters/system"},
		Holds: "sealing secrets at rest; the wall clock (`system.Sleep`: a wait that ends with its context) and ids"},

	// The commands, their helpers, and what only tests use.
	{Packages: []string{"cmd/pitboss", "cmd/pitboss-bench", "cmd/testtimes"},
		Holds: "flags, configuration, wiring (the only place that knows every concrete type); the benchmark driver; " +
			"the slowest tests at the end of `make test`",
		Imports: []string{Everything}},
	{Packages: []string{"internal/progress", "internal/procmem", "internal/freeport", "internal/procs"},
		Holds: "the long commands' progress (a redrawn line and structured records), the process's resident memory, " +
			"loopback ports for the processes the benchmark and the chaos stack start, `serve`'s Ps adapted to its load",
		Imports: []string{"internal/procmem"}},
	{Packages: []string{"architecture"},
		Holds: "this map as Go data (`Rooms`), the size limits, and the test that checks the import graph and the " +
			"sizes against them and renders this table"},
	{Packages: []string{"*test", "internal/eventually", "chaos/..."},
		Holds: "test support: the contract suites (`commands/ledgertest`, `projections/projectionstest`, " +
			"`gateway/gatewaytest`), `api/apitest` (the one API test harness: the real server on a fresh Postgres " +
			"database, with options for what the tests vary), harnesses on real Postgres and Kafka, headless " +
			"Chromium for the browser tests (`internal/browsertest`), the model test (`modeltest`), poll-until-true, " +
			"the chaos suite and its stack",
		Imports: []string{Everything},
		Note:    "no production package imports them (checked)"},
}
