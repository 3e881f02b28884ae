package gatewaystore

import (
	"context"
	"errors"
	"fmt"

	"github.com/pitboss/pitboss/adapters/secretbox"
)

// Provider secrets at rest (migration 00005): a gateway given a secret box
// writes them sealed (providers.secret_sealed, AES-256-GCM under the master
// key, bound to the provider id) and blanks the plain-text column. It still
// reads rows written in plain text before, and SealProviderSecrets moves
// those over. A gateway without a box keeps the old plain-text behaviour
// and refuses to guess at a sealed row.

// WithSecretBox makes the gateway seal provider secrets with box. It
// returns g for chaining after NewGateway.
func (g *Gateway) WithSecretBox(box *secretbox.Box) *Gateway {
	g.box = box
	return g
}

func providerSecretContext(id string) string { return "provider_secret:" + id }

// sealProviderSecret returns the column values for a provider secret.
func (g *Gateway) sealProviderSecret(id, secret string) (plain string, sealed []byte) {
	if g.box == nil {
		return secret, nil
	}
	return "", g.box.Seal([]byte(secret), providerSecretContext(id))
}

// openProviderSecret returns a provider's secret from its column values.
func (g *Gateway) openProviderSecret(id, plain string, sealed []byte) (string, error) {
	if sealed == nil {
		return plain, nil
	}
	if g.box == nil {
		return "", fmt.Errorf("provider %s: secret is sealed and this server has no master key", id)
	}
	b, err := g.box.Open(sealed, providerSecretContext(id))
	if err != nil {
		return "", fmt.Errorf("open secret of provider %s: %w", id, err)
	}
	return string(b), nil
}

// SealProviderSecrets seals every provider secret still stored in plain
// text and reports how many it sealed. Each row is updated only if it is
// unchanged since it was read, so a concurrent UpsertProvider wins.
func (g *Gateway) SealProviderSecrets(ctx context.Context) (int, error) {
	if g.box == nil {
		return 0, errors.New("seal provider secrets: no master key")
	}
	rows, err := g.pool.Query(ctx, `SELECT id, secret FROM providers WHERE secret_sealed IS NULL`)
	if err != nil {
		return 0, fmt.Errorf("list plain provider secrets: %w", err)
	}
	type plainRow struct{ id, secret string }
	var todo []plainRow
	for rows.Next() {
		var r plainRow
		if err := rows.Scan(&r.id, &r.secret); err != nil {
			rows.Close()
			return 0, fmt.Errorf("list plain provider secrets: %w", err)
		}
		todo = append(todo, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("list plain provider secrets: %w", err)
	}
	n := 0
	for _, r := range todo {
		tag, err := g.pool.Exec(ctx, `
			UPDATE providers SET secret = '', secret_sealed = $3
			WHERE id = $1 AND secret = $2 AND secret_sealed IS NULL`,
			r.id, r.secret, g.box.Seal([]byte(r.secret), providerSecretContext(r.id)))
		if err != nil {
			return n, fmt.Errorf("seal secret of provider %s: %w", r.id, err)
		}
		n += int(tag.RowsAffected())
	}
	return n, nil
}
