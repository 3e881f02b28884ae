package api

import (
	"github.com/pitboss/pitboss/api/admin"
	"github.com/pitboss/pitboss/audit"
	"github.com/pitboss/pitboss/gateway"
)

// AdminDeps are the stores behind /admin/v1. Without Clients the admin API
// answers 503; without Launch, Callbacks or Deps.Webhooks the fields and
// routes they serve answer 503.
type AdminDeps struct {
	Clients   gateway.AdminClients
	Launch    gateway.AdminLaunch
	Callbacks gateway.AdminCallbacks
	// Reveals shows client secrets on demand and records each showing
	// (the tokens area); without it those routes answer 503.
	Reveals gateway.ClientSecretReveals
	// FX stores exchange rates (PUT/GET /admin/v1/fx-rates); without it
	// those routes answer 503.
	FX gateway.FXRates
	// Statements closes periods into signed statements (POST
	// /admin/v1/clients/{id}/statements); without it, or without
	// Deps.Statements, the statement routes answer 503.
	Statements admin.StatementCloser
	// Deals stores commission deal versions (POST/GET /admin/v1/deals);
	// without it those routes answer 503.
	Deals gateway.CommissionDeals
	// Wallets stores clients' wallet modes (PUT
	// /admin/v1/clients/{id}/wallet, docs/seamless-wallet.md); without it
	// that route answers 503.
	Wallets gateway.ClientWallets
	// FollowUps lists the seamless wallet's follow-ups (GET
	// /admin/v1/seamless/follow-ups); without it that route answers 503.
	FollowUps admin.FollowUpList
	// SeamlessLedger reads what the ledger booked for a seamless client
	// (GET /admin/v1/clients/{id}/seamless/reconciliation, with
	// Deps.Operators); without it that route answers 503.
	SeamlessLedger admin.SeamlessLedger
}

// ConsoleDeps are the stores behind the routes the console added to the
// API (docs/console.md). Each may be nil: its route then answers 503, or
// (the overview's lag) leaves its part out.
type ConsoleDeps struct {
	// Lag reads the relay's and the projections' lag as the asking client
	// is shown it (GET /api/v1/console/overview).
	Lag gateway.ClientLagSource
	// Verifications reads the last recorded `pitboss verify` run (GET
	// /api/v1/audit/head).
	Verifications audit.Runs
	// Details reads one history row with its ledger events (GET
	// /api/v1/transactions/{id}).
	Details audit.TransactionDetails
}
