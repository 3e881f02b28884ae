package architecture

// Size limits (issue 15, issue 33): a file over MaxFileLines, or a
// function over MaxFuncLines, is too long to find one's way in. There is
// no limit on a package: how big a room is follows from what it holds
// (a limit on it cut readstore into sub-packages that existed only for
// room).
const (
	// MaxFileLines: every .go file of a package, test files aside.
	MaxFileLines = 700
	// MaxFuncLines: a function's body, from its opening brace's line to
	// its closing brace's, in the production packages (test support
	// aside).
	MaxFuncLines = 100
)

// LongFuncs are the functions allowed over MaxFuncLines, each with why.
// A name is the package path relative to the module, a dot, and the
// function (Type.Method for a method, either receiver). The list only
// shrinks: an entry whose function is gone or back under the limit fails
// the test until it is removed.
var LongFuncs = map[string]string{
	"adapters/postgres/readstore.newReadModelSQL": "SQL text: every statement of the store, built once per schema",
	"adapters/postgres/readstore.ReadModels.filteredPage": "builds the filtered history query; each clause's shape is " +
		"a measured plan, commented where it is made",
	"adapters/postgres/readstore.ReadModels.applyEvents": "the projector's batch as its two round trips, in the " +
		"order they run (locks and lookups, then changes and commit)",
	"adapters/postgres/readstore.ReadModels.Compare": "the in-memory replay in passes (read, write, compare per " +
		"pass, each timed); to split",
	"projections.history.Apply": "one case per event type of the history read model",
	"api.Server.ggrReport": "the GGR report's two answers, CSV and JSON, each with or without the reporting " +
		"currency; to split",
	"api/admin.server.updateClient": "one clause per optional setting of the PATCH body, checked before any is " +
		"written",
	"cmd/pitboss.providerCommand": "the provider subcommands' flags and their checks",
	"cmd/pitboss.dealCommand":     "the deal subcommands' flags and their checks",
	"cmd/pitboss.startAPI":        "wiring: the api role's stores, caches and server, in the order they depend on",
	"cmd/pitboss-bench.runWrite":  "the write benchmark's steps in order: database, service, load, measurements",
	"cmd/pitboss-bench.runRead":   "the read benchmark's steps in order: generated ledger, replay, clients, queries, verify",
	"cmd/pitboss-bench.markdown":  "text: the report's sections, written in order",
}
