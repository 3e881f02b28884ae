package deliverystore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

const webhookColumns = `id, client_id, url, kinds, description, enabled, created_at, updated_at`

func scanWebhook(r pgx.CollectableRow) (gateway.WebhookEndpoint, error) {
	var e gateway.WebhookEndpoint
	err := r.Scan(&e.ID, &e.ClientID, &e.URL, &e.Kinds, &e.Description, &e.Enabled, &e.CreatedAt, &e.UpdatedAt)
	return e, err
}

// CreateWebhook stores a new endpoint with a new signing secret and returns
// both. A client has at most gateway.MaxWebhooksPerClient live endpoints.
func (d *Deliveries) CreateWebhook(ctx context.Context, e gateway.WebhookEndpoint) (gateway.WebhookEndpoint, string, error) {
	e.ID = newStoreID("wh_")
	secret := gateway.NewSigningSecret()
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return gateway.WebhookEndpoint{}, "", fmt.Errorf("create webhook endpoint: %w", err)
	}
	defer tx.Rollback(ctx)
	if err := lockTargets(ctx, tx, e.ClientID); err != nil {
		return gateway.WebhookEndpoint{}, "", err
	}
	rows, _ := tx.Query(ctx, `
		INSERT INTO webhook_endpoints (id, client_id, url, kinds, description, enabled, secret)
		SELECT $1, $2, $3, $4, $5, $6, $7
		WHERE (SELECT count(*) FROM webhook_endpoints WHERE client_id = $2 AND deleted_at IS NULL) < $8
		RETURNING `+webhookColumns,
		e.ID, e.ClientID, e.URL, e.Kinds, e.Description, e.Enabled, d.box.Seal([]byte(secret), webhookSecretContext(e.ID)),
		gateway.MaxWebhooksPerClient)
	out, err := pgx.CollectExactlyOneRow(rows, scanWebhook)
	var pe *pgconn.PgError
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return gateway.WebhookEndpoint{}, "", fmt.Errorf("a client has at most %d webhook endpoints: %w",
			gateway.MaxWebhooksPerClient, domain.ErrInvalidArgument)
	case errors.As(err, &pe) && pe.Code == "23503": // foreign key: no such client
		return gateway.WebhookEndpoint{}, "", fmt.Errorf("client %s: %w", e.ClientID, domain.ErrNotFound)
	case err != nil:
		return gateway.WebhookEndpoint{}, "", fmt.Errorf("create webhook endpoint: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return gateway.WebhookEndpoint{}, "", fmt.Errorf("create webhook endpoint: commit: %w", err)
	}
	return out, secret, nil
}

// ListWebhooks returns the client's live endpoints, oldest first.
func (d *Deliveries) ListWebhooks(ctx context.Context, clientID string) ([]gateway.WebhookEndpoint, error) {
	rows, _ := d.pool.Query(ctx, `SELECT `+webhookColumns+` FROM webhook_endpoints
		WHERE client_id = $1 AND deleted_at IS NULL ORDER BY created_at, id`, clientID)
	list, err := pgx.CollectRows(rows, scanWebhook)
	if err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	return list, nil
}

// Webhook returns one live endpoint of the client.
func (d *Deliveries) Webhook(ctx context.Context, clientID, id string) (gateway.WebhookEndpoint, error) {
	rows, _ := d.pool.Query(ctx, `SELECT `+webhookColumns+` FROM webhook_endpoints
		WHERE id = $1 AND client_id = $2 AND deleted_at IS NULL`, id, clientID)
	e, err := pgx.CollectExactlyOneRow(rows, scanWebhook)
	if errors.Is(err, pgx.ErrNoRows) {
		return gateway.WebhookEndpoint{}, fmt.Errorf("webhook endpoint %s: %w", id, domain.ErrNotFound)
	}
	if err != nil {
		return gateway.WebhookEndpoint{}, fmt.Errorf("webhook endpoint %s: %w", id, err)
	}
	return e, nil
}

// UpdateWebhook changes the given fields. Disabling an endpoint parks the
// deliveries waiting for it (they can be re-sent once it is enabled again);
// while disabled, no deliveries are made for it.
func (d *Deliveries) UpdateWebhook(ctx context.Context, clientID, id string, ch gateway.WebhookChange) (gateway.WebhookEndpoint, error) {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return gateway.WebhookEndpoint{}, fmt.Errorf("update webhook endpoint %s: %w", id, err)
	}
	defer tx.Rollback(ctx)
	// Enabling or subscribing to more kinds adds a target.
	if err := lockTargets(ctx, tx, clientID); err != nil {
		return gateway.WebhookEndpoint{}, err
	}
	rows, _ := tx.Query(ctx, `
		UPDATE webhook_endpoints SET url = coalesce($3, url), kinds = coalesce($4, kinds),
			description = coalesce($5, description), enabled = coalesce($6, enabled), updated_at = now()
		WHERE id = $1 AND client_id = $2 AND deleted_at IS NULL
		RETURNING `+webhookColumns, id, clientID, ch.URL, ch.Kinds, ch.Description, ch.Enabled)
	e, err := pgx.CollectExactlyOneRow(rows, scanWebhook)
	if errors.Is(err, pgx.ErrNoRows) {
		return gateway.WebhookEndpoint{}, fmt.Errorf("webhook endpoint %s: %w", id, domain.ErrNotFound)
	}
	if err != nil {
		return gateway.WebhookEndpoint{}, fmt.Errorf("update webhook endpoint %s: %w", id, err)
	}
	if !e.Enabled {
		if err := parkEndpoint(ctx, tx, id, "webhook endpoint disabled"); err != nil {
			return gateway.WebhookEndpoint{}, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return gateway.WebhookEndpoint{}, fmt.Errorf("update webhook endpoint %s: commit: %w", id, err)
	}
	return e, nil
}

// DeleteWebhook removes the endpoint (the row stays, marked deleted, so the
// delivery log still names it) and parks the deliveries waiting for it.
func (d *Deliveries) DeleteWebhook(ctx context.Context, clientID, id string) error {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("delete webhook endpoint %s: %w", id, err)
	}
	defer tx.Rollback(ctx)
	tag, err := tx.Exec(ctx, `UPDATE webhook_endpoints SET deleted_at = now(), enabled = false, updated_at = now()
		WHERE id = $1 AND client_id = $2 AND deleted_at IS NULL`, id, clientID)
	if err != nil {
		return fmt.Errorf("delete webhook endpoint %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("webhook endpoint %s: %w", id, domain.ErrNotFound)
	}
	if err := parkEndpoint(ctx, tx, id, "webhook endpoint deleted"); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("delete webhook endpoint %s: commit: %w", id, err)
	}
	return nil
}

// parkEndpoint parks every queued and pending delivery of an endpoint. The
// caller holds the endpoint row's lock (its UPDATE), which Enqueue's FOR
// SHARE waits for, so no new delivery slips in behind. The queues' locks are
// taken first, in key order, so a worker finishing (and promoting in) one of
// these queues is waited for instead of deadlocking with this update. A head
// in flight is not moved by its worker afterwards (Finish wants it
// pending); its attempt is still logged.
func parkEndpoint(ctx context.Context, tx pgx.Tx, endpointID, reason string) error {
	rows, _ := tx.Query(ctx, `SELECT DISTINCT queue_key FROM deliveries
		WHERE endpoint_id = $1 AND state IN ('queued', 'pending') ORDER BY queue_key`, endpointID)
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("queues of %s: %w", endpointID, err)
	}
	for _, k := range keys {
		if err := lockQueue(ctx, tx, k); err != nil {
			return err
		}
	}
	_, err = tx.Exec(ctx, `
		UPDATE deliveries SET state = 'parked', parked_at = now(), last_error = $2, updated_at = now()
		WHERE endpoint_id = $1 AND state IN ('queued', 'pending')`, endpointID, reason)
	if err != nil {
		return fmt.Errorf("park deliveries of %s: %w", endpointID, err)
	}
	return nil
}

// RotateWebhookSecret gives the endpoint a new secret and returns it.
func (d *Deliveries) RotateWebhookSecret(ctx context.Context, clientID, id string) (string, error) {
	secret := gateway.NewSigningSecret()
	tag, err := d.pool.Exec(ctx, `UPDATE webhook_endpoints SET secret = $3, updated_at = now()
		WHERE id = $1 AND client_id = $2 AND deleted_at IS NULL`,
		id, clientID, d.box.Seal([]byte(secret), webhookSecretContext(id)))
	if err != nil {
		return "", fmt.Errorf("rotate secret of %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return "", fmt.Errorf("webhook endpoint %s: %w", id, domain.ErrNotFound)
	}
	return secret, nil
}

// ForwardCallback returns the client's callback URL and when its signing
// secret was made.
func (d *Deliveries) ForwardCallback(ctx context.Context, clientID string) (gateway.ForwardCallback, error) {
	var fc gateway.ForwardCallback
	err := d.pool.QueryRow(ctx, `
		SELECT c.forward_callback_url, s.created_at FROM clients c
		LEFT JOIN callback_secrets s ON s.client_id = c.id WHERE c.id = $1`, clientID).Scan(&fc.URL, &fc.SecretCreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return gateway.ForwardCallback{}, fmt.Errorf("client %s: %w", clientID, domain.ErrNotFound)
	}
	if err != nil {
		return gateway.ForwardCallback{}, fmt.Errorf("forward callback of %s: %w", clientID, err)
	}
	return fc, nil
}

// RotateCallbackSecret creates or replaces the client's callback signing
// secret and returns it. Callbacks sent from then on (retries included)
// are signed with it.
func (d *Deliveries) RotateCallbackSecret(ctx context.Context, clientID string) (string, error) {
	secret := gateway.NewSigningSecret()
	_, err := d.pool.Exec(ctx, `
		INSERT INTO callback_secrets (client_id, secret) VALUES ($1, $2)
		ON CONFLICT (client_id) DO UPDATE SET secret = excluded.secret, created_at = now()`,
		clientID, d.box.Seal([]byte(secret), callbackSecretContext(clientID)))
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23503" {
		return "", fmt.Errorf("client %s: %w", clientID, domain.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("rotate callback secret of %s: %w", clientID, err)
	}
	return secret, nil
}

// SetForwardCallbackURL sets (or, with "", clears) where the client's game
// activity is forwarded. The URL is checked by the caller
// (gateway.CheckCallbackURL); the delivery client checks the address again at
// every connection.
func (d *Deliveries) SetForwardCallbackURL(ctx context.Context, clientID, url string) error {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("set forward callback url of %s: %w", clientID, err)
	}
	defer tx.Rollback(ctx)
	if err := lockTargets(ctx, tx, clientID); err != nil {
		return err
	}
	tag, err := tx.Exec(ctx, `UPDATE clients SET forward_callback_url = $2 WHERE id = $1`, clientID, url)
	if err != nil {
		return fmt.Errorf("set forward callback url of %s: %w", clientID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("client %s: %w", clientID, domain.ErrNotFound)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("set forward callback url of %s: commit: %w", clientID, err)
	}
	return nil
}
