package gatewaystore

import (
	"context"
	"errors"
	"fmt"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// Launch credentials (migration 00025): who we are at a provider whose
// launch kind calls its own API, and our own secret there (our RSA private
// key for caleta, the casino token for evolution). The secret is only ever
// stored sealed under the master key, bound to the provider id; lists see
// launch_key_fingerprint instead.

func launchSecretContext(id string) string { return "provider_launch_secret:" + id }

// ErrNoSecretBox: a launch secret cannot be stored or read by a gateway
// without the master key.
var ErrNoSecretBox = errors.New("launch secrets are sealed with the master key (PITBOSS_SECRET_KEY), which this gateway lacks")

// openLaunchSecret opens a provider's sealed launch secret; "" for none.
func (g *Gateway) openLaunchSecret(id string, sealed []byte) (string, error) {
	if sealed == nil {
		return "", nil
	}
	if g.box == nil {
		return "", fmt.Errorf("provider %s: %w", id, ErrNoSecretBox)
	}
	b, err := g.box.Open(sealed, launchSecretContext(id))
	if err != nil {
		return "", fmt.Errorf("open launch secret of provider %s: %w", id, err)
	}
	return string(b), nil
}

// SetProviderLaunchCredentials stores what c gives of an existing
// provider's launch credentials; empty fields keep what it has. The secret
// is sealed (a gateway without a secret box refuses it) and its
// fingerprint stored beside it. API processes pick the change up within
// their provider cache's TTL.
func (g *Gateway) SetProviderLaunchCredentials(ctx context.Context, id string, c gateway.LaunchCredentials) error {
	if err := gateway.CheckLaunchCredentials(c); err != nil {
		return fmt.Errorf("provider %s: %w: %w", id, err, domain.ErrInvalidArgument)
	}
	var sealed []byte
	if c.Secret != "" {
		if g.box == nil {
			return fmt.Errorf("set launch secret of provider %s: %w", id, ErrNoSecretBox)
		}
		sealed = g.box.Seal([]byte(c.Secret), launchSecretContext(id))
	}
	tag, err := g.pool.Exec(ctx, `
		UPDATE providers SET
			launch_operator_id = COALESCE(NULLIF($2, ''), launch_operator_id),
			launch_country = COALESCE(NULLIF($3, ''), launch_country),
			launch_secret_sealed = COALESCE($4, launch_secret_sealed),
			launch_key_fingerprint = COALESCE(NULLIF($5, ''), launch_key_fingerprint)
		WHERE id = $1`, id, c.OperatorID, c.Country, sealed, gateway.LaunchSecretFingerprint(c.Secret))
	if err != nil {
		return fmt.Errorf("set launch credentials of provider %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("provider %s: %w", id, domain.ErrNotFound)
	}
	return nil
}
