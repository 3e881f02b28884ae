// Package gateway is the model and the rules of everything that is not the
// ledger: clients, API keys and scopes, environments, the catalog and
// provider routes, game sessions and the signed launch, webhooks and
// deliveries, usage, rate tiers and lag. It declares the ports its stores
// implement (adapters/postgres, adapters/providers ...) and the HTTP layer
// (api) and the CLI use.
//
// Nothing here knows HTTP: a rule that refuses a field returns a
// *FieldError, which api/wire turns into the one error answer and the
// CLI prints as it is.
package gateway
