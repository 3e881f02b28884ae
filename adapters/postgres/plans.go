package postgres

// Every statement of the ledger writer and of a projector batch finds its
// rows by key through an index, over arrays whose length follows the load:
// one key at concurrency 1, thirty at 64. Postgres plans a prepared
// statement afresh on every execution (a custom plan) for as long as the
// custom plans made so far cost less, on average, than the generic one; a
// quiet period of one-key arrays makes them look several times cheaper, so
// when the load rises every statement is planned again on every call.
// `make bench` showed it: the 64-concurrency step made 2,870 calls/s run
// alone and 2,324–2,478 after a concurrency-1 step, with the ledger's
// account lookup at 0.75–0.84 ms a statement instead of 0.21 and the
// checkpoints' update at 0.47–0.49 instead of 0.14. Their generic plans
// are index scans (checked with EXPLAIN under force_generic_plan), so the
// writer's connection and the projector's batch transactions use them
// always. The API's queries keep Postgres's choice.
//
// PlanCacheModeParam is the setting, GenericPlans its value for those
// connections and transactions.
const (
	PlanCacheModeParam = "plan_cache_mode"
	GenericPlans       = "force_generic_plan"
)
