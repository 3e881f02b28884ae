package gatewaystore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/secretbox"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// LaunchClients stores what the signed launch needs of a client: its
// sealed client secret and its launch settings (migration 00005).
type LaunchClients struct {
	pool *pgxpool.Pool
	box  *secretbox.Box
}

var (
	_ gateway.LaunchClients = (*LaunchClients)(nil)
	_ gateway.AdminLaunch   = (*LaunchClients)(nil)
)

// NewLaunchClients returns the store. box seals and opens client secrets.
func NewLaunchClients(pool *pgxpool.Pool, box *secretbox.Box) (*LaunchClients, error) {
	if box == nil {
		return nil, errors.New("launch clients: a secret box (master key) is required")
	}
	return &LaunchClients{pool: pool, box: box}, nil
}

// clientSecretContext binds a sealed secret to its client, so a sealed
// value copied to another client's row does not open.
func clientSecretContext(clientID string) string { return "client_secret:" + clientID }

// LaunchClient returns the client's secret (opened) and launch settings.
func (s *LaunchClients) LaunchClient(ctx context.Context, clientID string) (gateway.LaunchClient, error) {
	var (
		c      = gateway.LaunchClient{ClientID: clientID}
		sealed []byte
	)
	err := s.pool.QueryRow(ctx, `
		SELECT environment, client_secret, require_signature, ip_allow_list, allowed_return_hosts, default_currency
		FROM clients WHERE id = $1`, clientID).
		Scan(&c.Environment, &sealed, &c.RequireSignature, &c.IPAllowList, &c.AllowedReturnHosts, &c.DefaultCurrency)
	if errors.Is(err, pgx.ErrNoRows) {
		return gateway.LaunchClient{}, fmt.Errorf("client %s: %w", clientID, domain.ErrNotFound)
	}
	if err != nil {
		return gateway.LaunchClient{}, fmt.Errorf("launch client %s: %w", clientID, err)
	}
	if sealed != nil {
		if c.Secret, err = s.box.Open(sealed, clientSecretContext(clientID)); err != nil {
			return gateway.LaunchClient{}, fmt.Errorf("open client secret of %s: %w", clientID, err)
		}
	}
	return c, nil
}

// newClientSecret makes a client secret: "pbcs_" and 64 hex digits (256
// random bits). The client uses the text itself as the HMAC key.
func newClientSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return "pbcs_" + hex.EncodeToString(b)
}

// IssueClientSecret makes a new client secret, stores it sealed and
// returns it: the only time it is shown. An earlier secret stops working.
func (s *LaunchClients) IssueClientSecret(ctx context.Context, clientID string) (string, error) {
	secret := newClientSecret()
	tag, err := s.pool.Exec(ctx, `UPDATE clients SET client_secret = $2 WHERE id = $1`,
		clientID, s.box.Seal([]byte(secret), clientSecretContext(clientID)))
	if err != nil {
		return "", fmt.Errorf("issue client secret for %s: %w", clientID, err)
	}
	if tag.RowsAffected() == 0 {
		return "", fmt.Errorf("client %s: %w", clientID, domain.ErrNotFound)
	}
	return secret, nil
}

// EnsureClientSecret returns the client's secret, issuing one when it has
// none (created tells which). Only the sandbox set-up uses it to print the
// secret again; production secrets are shown once, at IssueClientSecret.
func (s *LaunchClients) EnsureClientSecret(ctx context.Context, clientID string) (secret string, created bool, err error) {
	secret = newClientSecret()
	var sealed []byte
	// One statement: of two concurrent callers, one writes and both read
	// the secret that was written.
	err = s.pool.QueryRow(ctx, `
		UPDATE clients SET client_secret = COALESCE(client_secret, $2) WHERE id = $1
		RETURNING client_secret`, clientID, s.box.Seal([]byte(secret), clientSecretContext(clientID))).Scan(&sealed)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, fmt.Errorf("client %s: %w", clientID, domain.ErrNotFound)
	}
	if err != nil {
		return "", false, fmt.Errorf("client secret of %s: %w", clientID, err)
	}
	pt, err := s.box.Open(sealed, clientSecretContext(clientID))
	if err != nil {
		return "", false, fmt.Errorf("open client secret of %s: %w", clientID, err)
	}
	return string(pt), string(pt) == secret, nil
}

// SetLaunchSettings replaces the client's launch settings. Return hosts
// are stored as gateway.ParseReturnHosts reads them; a currency must be
// known.
func (s *LaunchClients) SetLaunchSettings(ctx context.Context, clientID string, ls gateway.LaunchSettings) error {
	if ls.DefaultCurrency != "" {
		if _, err := domain.ParseCurrency(ls.DefaultCurrency); err != nil {
			return fmt.Errorf("default currency %q: %w", ls.DefaultCurrency, err)
		}
	}
	hosts, err := gateway.ParseReturnHosts(ls.AllowedReturnHosts)
	if err != nil {
		return fmt.Errorf("launch settings of client %s: %w", clientID, err)
	}
	nets := make([]netip.Prefix, 0, len(ls.IPAllowList))
	for _, p := range ls.IPAllowList {
		if !p.IsValid() {
			return fmt.Errorf("ip allow-list entry %v: %w", p, domain.ErrInvalidArgument)
		}
		nets = append(nets, p.Masked())
	}
	tag, err := s.pool.Exec(ctx, `
		UPDATE clients SET require_signature = $2, ip_allow_list = $3, allowed_return_hosts = $4, default_currency = $5
		WHERE id = $1`, clientID, ls.RequireSignature, nets, hosts, ls.DefaultCurrency)
	if err != nil {
		return fmt.Errorf("launch settings of %s: %w", clientID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("client %s: %w", clientID, domain.ErrNotFound)
	}
	return nil
}
