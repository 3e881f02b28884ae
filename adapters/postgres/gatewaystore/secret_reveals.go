package gatewaystore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// The reveal trail of client secrets (migration 00013): the tokens area
// of the admin API shows a client's sealed secret on demand, and every
// showing is a row of client_secret_reveals.

var _ gateway.ClientSecretReveals = (*LaunchClients)(nil)

const revealColumns = `id, client_id, revealed_at, actor, remote_addr, user_agent, reason`

func scanReveal(r pgx.CollectableRow) (gateway.SecretReveal, error) {
	var v gateway.SecretReveal
	err := r.Scan(&v.ID, &v.ClientID, &v.RevealedAt, &v.Actor, &v.RemoteAddr, &v.UserAgent, &v.Reason)
	return v, err
}

// RevealClientSecret opens the client's secret and records the reveal in
// one transaction. The client's row is read FOR SHARE, so a secret issued
// at the same moment is either the one shown (and recorded) or comes
// after it. The record is committed before the secret is returned; a
// client without a secret records nothing.
func (s *LaunchClients) RevealClientSecret(ctx context.Context, r gateway.SecretReveal) (string, gateway.SecretReveal, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return "", gateway.SecretReveal{}, fmt.Errorf("reveal client secret of %s: %w", r.ClientID, err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var sealed []byte
	err = tx.QueryRow(ctx, `SELECT client_secret FROM clients WHERE id = $1 FOR SHARE`, r.ClientID).Scan(&sealed)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", gateway.SecretReveal{}, fmt.Errorf("client %s: %w", r.ClientID, domain.ErrNotFound)
	case err != nil:
		return "", gateway.SecretReveal{}, fmt.Errorf("reveal client secret of %s: %w", r.ClientID, err)
	case sealed == nil:
		return "", gateway.SecretReveal{}, fmt.Errorf("client %s: %w", r.ClientID, gateway.ErrNoClientSecret)
	}
	secret, err := s.box.Open(sealed, clientSecretContext(r.ClientID))
	if err != nil {
		return "", gateway.SecretReveal{}, fmt.Errorf("open client secret of %s: %w", r.ClientID, err)
	}
	rows, _ := tx.Query(ctx, `
		INSERT INTO client_secret_reveals (client_id, revealed_at, actor, remote_addr, user_agent, reason)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING `+revealColumns,
		r.ClientID, r.RevealedAt, r.Actor, r.RemoteAddr, r.UserAgent, r.Reason)
	rec, err := pgx.CollectExactlyOneRow(rows, scanReveal)
	if err != nil {
		return "", gateway.SecretReveal{}, fmt.Errorf("record the reveal of %s's client secret: %w", r.ClientID, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return "", gateway.SecretReveal{}, fmt.Errorf("reveal client secret of %s: commit: %w", r.ClientID, err)
	}
	return string(secret), rec, nil
}

// ClientSecretReveals returns one page of the client's reveal trail,
// newest first, and the total; an unknown client is domain.ErrNotFound.
func (s *LaunchClients) ClientSecretReveals(ctx context.Context, clientID string, page, perPage int) ([]gateway.SecretReveal, int64, error) {
	var (
		exists bool
		total  int64
	)
	if err := s.pool.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM clients WHERE id = $1),
		       (SELECT count(*) FROM client_secret_reveals WHERE client_id = $1)`, clientID).Scan(&exists, &total); err != nil {
		return nil, 0, fmt.Errorf("count the reveals of %s's client secret: %w", clientID, err)
	}
	if !exists {
		return nil, 0, fmt.Errorf("client %s: %w", clientID, domain.ErrNotFound)
	}
	rows, _ := s.pool.Query(ctx, `SELECT `+revealColumns+` FROM client_secret_reveals WHERE client_id = $1
		ORDER BY revealed_at DESC, id DESC LIMIT $2 OFFSET $3`, clientID, perPage, int64(page-1)*int64(perPage))
	list, err := pgx.CollectRows(rows, scanReveal)
	if err != nil {
		return nil, 0, fmt.Errorf("list the reveals of %s's client secret: %w", clientID, err)
	}
	return list, total, nil
}
