package gatewaystore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// Provider signature schemes (migration 00012, docs/provider-wallet.md):
// what `pitboss provider` reads and sets.

// SetProviderSignatureScheme moves a provider to scheme (gateway.SignatureV1
// or SignatureV2). Its other columns are left alone. API processes pick the
// change up within their provider cache's TTL.
func (g *Gateway) SetProviderSignatureScheme(ctx context.Context, id, scheme string) error {
	if err := gateway.CheckSignatureScheme("signature_scheme", scheme); err != nil {
		return fmt.Errorf("provider %s: %w: %w", id, err, domain.ErrInvalidArgument)
	}
	tag, err := g.pool.Exec(ctx, `UPDATE providers SET signature_scheme = $2 WHERE id = $1`, id, scheme)
	if err != nil {
		return fmt.Errorf("set signature scheme of provider %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("provider %s: %w", id, domain.ErrNotFound)
	}
	return nil
}

// AllProviders lists every provider, enabled or not, by id, without
// secrets (Secret is empty): which provider is on which signature scheme.
func (g *Gateway) AllProviders(ctx context.Context) ([]gateway.Provider, error) {
	rows, err := g.pool.Query(ctx, `SELECT id, name, enabled, signature_scheme FROM providers ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list providers: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (gateway.Provider, error) {
		var p gateway.Provider
		err := row.Scan(&p.ID, &p.Name, &p.Enabled, &p.SignatureScheme)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("list providers: %w", err)
	}
	return out, nil
}
