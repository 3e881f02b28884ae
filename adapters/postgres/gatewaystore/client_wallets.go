package gatewaystore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// Client wallets (migration 00030, docs/seamless-wallet.md): a client's
// wallet mode and, for a seamless client, its own wallet's address,
// protocol, operator id and credential — sealed under the master key,
// bound to the client id, like every secret at rest.

func operatorCredentialContext(clientID string) string {
	return "operator_wallet_credential:" + clientID
}

var _ gateway.ClientWallets = (*Gateway)(nil)

// ClientWallet is the client's wallet settings, the credential opened.
func (g *Gateway) ClientWallet(ctx context.Context, clientID string) (gateway.ClientWallet, error) {
	var (
		w      gateway.ClientWallet
		sealed []byte
	)
	err := g.pool.QueryRow(ctx, `
		SELECT wallet_mode, operator_wallet_url, operator_wallet_protocol, operator_wallet_operator_id,
			operator_wallet_credential_sealed
		FROM clients WHERE id = $1`, clientID).Scan(&w.Mode, &w.URL, &w.Protocol, &w.OperatorID, &sealed)
	if errors.Is(err, pgx.ErrNoRows) {
		return w, fmt.Errorf("client %s: %w", gateway.ClipValue(clientID), domain.ErrNotFound)
	}
	if err != nil {
		return w, fmt.Errorf("wallet settings of client %s: %w", clientID, err)
	}
	if sealed == nil {
		return w, nil
	}
	w.CredentialSet = true
	if g.box == nil {
		return w, fmt.Errorf("operator wallet credential of client %s: %w", clientID, ErrNoSecretBox)
	}
	b, err := g.box.Open(sealed, operatorCredentialContext(clientID))
	if err != nil {
		return w, fmt.Errorf("open operator wallet credential of client %s: %w", clientID, err)
	}
	w.Credential = string(b)
	return w, nil
}

// SetClientWallet replaces the client's wallet settings. An empty
// Credential keeps the stored one for a seamless client; a ledger client
// keeps none. A credential is sealed: a gateway without the master key
// refuses it.
func (g *Gateway) SetClientWallet(ctx context.Context, clientID string, w gateway.ClientWallet) error {
	var sealed []byte
	if w.Credential != "" {
		if g.box == nil {
			return fmt.Errorf("set operator wallet credential of client %s: %w", clientID, ErrNoSecretBox)
		}
		sealed = g.box.Seal([]byte(w.Credential), operatorCredentialContext(clientID))
	}
	tag, err := g.pool.Exec(ctx, `
		UPDATE clients SET wallet_mode = $2, operator_wallet_url = $3, operator_wallet_protocol = $4,
			operator_wallet_operator_id = $5,
			operator_wallet_credential_sealed = CASE WHEN $2 = 'ledger' THEN NULL
				ELSE COALESCE($6, operator_wallet_credential_sealed) END
		WHERE id = $1`, clientID, w.Mode, w.URL, w.Protocol, w.OperatorID, sealed)
	if err != nil {
		return fmt.Errorf("set wallet settings of client %s: %w", clientID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("client %s: %w", gateway.ClipValue(clientID), domain.ErrNotFound)
	}
	return nil
}
