package gateway

import (
	"context"

	"github.com/pitboss/pitboss/domain"
)

// CommissionDeals stores commission deal versions for the admin API
// (docs/finance.md): append-only, a deal's history is its versions.
type CommissionDeals interface {
	// AddDealVersion stores v (its ID and CreatedAt are set by the store)
	// and returns it as stored.
	AddDealVersion(ctx context.Context, v domain.DealVersion) (domain.DealVersion, error)
	// DealVersions are every version of the deals f selects, oldest first.
	DealVersions(ctx context.Context, f DealFilter) ([]domain.DealVersion, error)
	// DealHistory is a page of the versions f selects, newest first, and
	// their total.
	DealHistory(ctx context.Context, f DealFilter, page, perPage int) ([]domain.DealVersion, int64, error)
}

// DealFilter selects deals; empty fields select all. ClientID selects that
// client's own deals, and with WithDefaults also the providers' defaults
// (the deals that apply to the client).
type DealFilter struct {
	Provider     string
	ClientID     string
	WithDefaults bool
}
