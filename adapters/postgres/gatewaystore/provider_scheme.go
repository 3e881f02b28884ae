package gatewaystore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// Provider signature schemes (migration 00012, docs/provider-wallet.md)
// and wallet protocols (migration 00016): what `pitboss provider` reads
// and sets.

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
// secrets (Secret is empty): which provider is on which signature scheme
// and wallet protocol, with its public key.
func (g *Gateway) AllProviders(ctx context.Context) ([]gateway.Provider, error) {
	rows, err := g.pool.Query(ctx, `
		SELECT id, name, enabled, signature_scheme, wallet_protocol, wallet_public_key, launch_key_fingerprint
		FROM providers ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list providers: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (gateway.Provider, error) {
		var p gateway.Provider
		err := row.Scan(&p.ID, &p.Name, &p.Enabled, &p.SignatureScheme, &p.WalletProtocol, &p.WalletPublicKey,
			&p.LaunchKeyFingerprint)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("list providers: %w", err)
	}
	return out, nil
}

// SetProviderWalletProtocol moves a provider to wallet protocol (migration
// 00016, gateway.WalletProtocols) with publicKeyPEM, the provider's RSA
// public key; an empty key keeps the one it has, which a caleta provider
// must then have. Its other columns are left alone. API processes pick the
// change up within their provider cache's TTL.
func (g *Gateway) SetProviderWalletProtocol(ctx context.Context, id, protocol, publicKeyPEM string) error {
	if err := gateway.CheckWalletProtocol("wallet_protocol", protocol); err != nil {
		return fmt.Errorf("provider %s: %w: %w", id, err, domain.ErrInvalidArgument)
	}
	if publicKeyPEM != "" {
		if err := gateway.CheckWalletCredentials("wallet_public_key", protocol, publicKeyPEM); err != nil {
			return fmt.Errorf("provider %s: %w: %w", id, err, domain.ErrInvalidArgument)
		}
	}
	var key string
	err := g.pool.QueryRow(ctx, `
		UPDATE providers SET wallet_protocol = $2, wallet_public_key = COALESCE(NULLIF($3, ''), wallet_public_key)
		WHERE id = $1 AND ($2 <> 'caleta' OR COALESCE(NULLIF($3, ''), wallet_public_key) <> '')
		RETURNING wallet_public_key`, id, protocol, publicKeyPEM).Scan(&key)
	if errors.Is(err, pgx.ErrNoRows) {
		var exists bool
		if err := g.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM providers WHERE id = $1)`, id).Scan(&exists); err != nil {
			return fmt.Errorf("set wallet protocol of provider %s: %w", id, err)
		}
		if !exists {
			return fmt.Errorf("provider %s: %w", id, domain.ErrNotFound)
		}
		return fmt.Errorf("provider %s: %w: %w", id,
			gateway.CheckWalletCredentials("wallet_public_key", protocol, ""), domain.ErrInvalidArgument)
	}
	if err != nil {
		return fmt.Errorf("set wallet protocol of provider %s: %w", id, err)
	}
	return nil
}
