// Package deliverystore is the Postgres store of outbound deliveries: the
// queue the forwarder fills and the delivery workers drain, the delivery
// log, the clients' webhook endpoints and forwarded-callback settings, and
// their signing secrets, sealed with the server's master key. It
// implements the gateway's delivery ports; the workers that use it import
// it, never the other way round.
package deliverystore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/adapters/secretbox"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// Deliveries is the outbound delivery store (migration 00006): the queue the
// forwarder fills and the delivery workers drain, the delivery log, webhook
// endpoints and the signing secrets, sealed with the server's master key.
//
// Queues: the deliveries of one endpoint and one ledger stream are sent in
// order. Only the head of a queue is 'pending'; the ones behind it are
// 'queued'; finishing the head (succeeded or parked) promotes the next one
// in the same transaction. Every transaction that changes which row of a
// queue is pending first takes queueLockClass's advisory lock on the queue
// key, so two writers never both decide they are the head.
type Deliveries struct {
	pool *pgxpool.Pool
	box  *secretbox.Box
}

var (
	_ gateway.Deliveries       = (*Deliveries)(nil)
	_ gateway.Webhooks         = (*Deliveries)(nil)
	_ gateway.DeliveryQueue    = (*Deliveries)(nil)
	_ gateway.DeliveryEnqueuer = (*Deliveries)(nil)
	_ gateway.AdminCallbacks   = (*Deliveries)(nil)
)

// NewDeliveries returns the store; box seals and opens signing secrets.
func NewDeliveries(pool *pgxpool.Pool, box *secretbox.Box) (*Deliveries, error) {
	if pool == nil || box == nil {
		return nil, errors.New("deliveries: a pool and a secret box (master key) are required")
	}
	return &Deliveries{pool: pool, box: box}, nil
}

// queueLockClass is the first key of the two-key advisory locks on delivery
// queues ("PLVD"). Two-int4 advisory locks are a key space of their own, so
// they never collide with the single-bigint locks of the ledger and relay.
const queueLockClass int32 = 0x504C5644

const (
	stateQueued    = gateway.DeliveryQueued
	statePending   = gateway.DeliveryPending
	stateSucceeded = gateway.DeliverySucceeded
	stateParked    = gateway.DeliveryParked
)

func queueKey(endpointID, streamID string) string { return endpointID + "|" + streamID }

func lockQueue(ctx context.Context, tx pgx.Tx, key string) error {
	if _, err := tx.Exec(ctx, postgres.KeyedLockSQL, queueLockClass, key); err != nil {
		return fmt.Errorf("lock delivery queue %s: %w", key, err)
	}
	return nil
}

func newStoreID(prefix string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

func callbackSecretContext(clientID string) string { return "callback_secret:" + clientID }
func webhookSecretContext(id string) string        { return "webhook_secret:" + id }

// ---- forwarder side -------------------------------------------------------

// enqueueRow is one delivery to insert: event o to endpointID.
type enqueueRow struct {
	o                  *gateway.Outgoing
	target, endpointID string
	key                string // queue key
	payload            []byte
}

// webhookEndpoint is what Enqueue needs of an endpoint.
type webhookEndpoint struct {
	id, clientID string
	createdAt    time.Time
	kinds        []string
}

// takes reports whether the endpoint gets o: it existed when o occurred
// and subscribes to o.Kind or "*".
func (w webhookEndpoint) takes(o *gateway.Outgoing) bool {
	// Postgres keeps microseconds; compare as the SQL filter did.
	if w.createdAt.After(o.OccurredAt.Truncate(time.Microsecond)) {
		return false
	}
	return slices.Contains(w.kinds, o.Kind) || slices.Contains(w.kinds, "*")
}

// Enqueue inserts o's deliveries; see EnqueueBatch.
func (d *Deliveries) Enqueue(ctx context.Context, o gateway.Outgoing) (int, error) {
	return d.EnqueueBatch(ctx, []gateway.Outgoing{o})
}

// EnqueueBatch inserts, in one transaction, each event's deliveries: the
// forwarded callback when it has one and the client has a callback URL,
// and one per enabled webhook endpoint of the client subscribed to its kind
// (or "*") that existed when the event occurred. A delivery that exists
// already (same event and endpoint) is left alone. Deliveries of one queue
// (endpoint and stream) are inserted in the order of outs, so a partition's
// batch keeps each stream's order.
//
// Round trips: begin, one pipelined lookup of the clients' callback URLs and
// endpoints, one pipelined insert (queue locks, in one global order, then
// the rows), commit — whatever the batch's size. With nothing to deliver,
// the insert is skipped.
func (d *Deliveries) EnqueueBatch(ctx context.Context, outs []gateway.Outgoing) (int, error) {
	if len(outs) == 0 {
		return 0, nil
	}
	var clients []string
	for i := range outs {
		if !slices.Contains(clients, outs[i].ClientID) {
			clients = append(clients, outs[i].ClientID)
		}
	}
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("enqueue %d events: %w", len(outs), err)
	}
	defer tx.Rollback(ctx)

	callbackURL := map[string]bool{}
	var endpoints []webhookEndpoint
	lookup := &pgx.Batch{}
	lookup.Queue(`SELECT id FROM clients WHERE id = ANY($1) AND forward_callback_url <> ''`, clients).
		Query(func(rows pgx.Rows) error {
			ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
			for _, id := range ids {
				callbackURL[id] = true
			}
			return err
		})
	// FOR SHARE: a concurrent delete or disable (which parks the endpoint's
	// deliveries) waits for this insert, or this one no longer sees the
	// endpoint. Either way no delivery is left behind for a gone endpoint.
	lookup.Queue(`
		SELECT id, client_id, created_at, kinds FROM webhook_endpoints
		WHERE client_id = ANY($1) AND deleted_at IS NULL AND enabled
		ORDER BY id FOR SHARE`, clients).
		Query(func(rows pgx.Rows) error {
			var err error
			endpoints, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (webhookEndpoint, error) {
				var w webhookEndpoint
				return w, r.Scan(&w.id, &w.clientID, &w.createdAt, &w.kinds)
			})
			return err
		})
	if err := tx.SendBatch(ctx, lookup).Close(); err != nil {
		return 0, fmt.Errorf("enqueue: callback URLs and webhook endpoints of %v: %w", clients, err)
	}

	var todo []enqueueRow
	for i := range outs {
		o := &outs[i]
		if o.Callback != nil && callbackURL[o.ClientID] {
			todo = append(todo, enqueueRow{o: o, target: gateway.TargetCallback, endpointID: gateway.CallbackEndpointID,
				key: queueKey(gateway.CallbackEndpointID, o.StreamID), payload: o.Callback})
		}
		for _, w := range endpoints {
			if w.clientID == o.ClientID && w.takes(o) {
				todo = append(todo, enqueueRow{o: o, target: gateway.TargetWebhook, endpointID: w.id,
					key: queueKey(w.id, o.StreamID), payload: o.Webhook})
			}
		}
	}
	if len(todo) == 0 {
		return 0, tx.Commit(ctx)
	}
	// One lock order for every transaction that takes several queue locks;
	// within a queue, the order of outs (stable sort).
	slices.SortStableFunc(todo, func(a, b enqueueRow) int { return compareStrings(a.key, b.key) })

	added := 0
	insert := &pgx.Batch{}
	for i, r := range todo {
		if i == 0 || todo[i-1].key != r.key {
			insert.Queue(postgres.KeyedLockSQL, queueLockClass, r.key)
		}
		o := r.o
		insert.Queue(`
			INSERT INTO deliveries (id, client_id, target, endpoint_id, queue_key, event_id, event_type, kind,
				stream_id, stream_version, position, payload, state)
			SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,
				CASE WHEN EXISTS (SELECT 1 FROM deliveries WHERE queue_key = $5 AND state IN ('queued', 'pending'))
				THEN 'queued' ELSE 'pending' END
			ON CONFLICT (event_id, endpoint_id) DO NOTHING`,
			newStoreID("dl_"), o.ClientID, r.target, r.endpointID, r.key, o.EventID, o.EventType, o.Kind,
			o.StreamID, o.StreamVersion, o.Position, string(r.payload)).
			Exec(func(tag pgconn.CommandTag) error {
				added += int(tag.RowsAffected())
				return nil
			})
	}
	if err := tx.SendBatch(ctx, insert).Close(); err != nil {
		return 0, fmt.Errorf("enqueue %d deliveries of %d events: %w", len(todo), len(outs), err)
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("enqueue %d events: commit: %w", len(outs), err)
	}
	return added, nil
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ---- worker side ----------------------------------------------------------

// Claim leases up to max due heads: it counts the attempt and moves
// next_attempt_at to the end of the lease, so no other worker takes them
// until the lease runs out. The endpoint's URL and secret, and the
// client's environment (which decides whether inside targets are allowed),
// are read now, so a fixed URL or a rotated secret applies to the next
// attempt.
func (d *Deliveries) Claim(ctx context.Context, max int, lease time.Duration) ([]gateway.DeliveryJob, error) {
	rows, _ := d.pool.Query(ctx, `
		WITH due AS (
			SELECT id FROM deliveries
			WHERE state = 'pending' AND next_attempt_at <= now()
			ORDER BY next_attempt_at, queue_seq
			LIMIT $1
			FOR UPDATE SKIP LOCKED
		)
		UPDATE deliveries d
		SET attempts = d.attempts + 1, round_attempts = d.round_attempts + 1,
			round_started_at = coalesce(d.round_started_at, now()),
			next_attempt_at = now() + $2 * interval '1 microsecond', last_attempt_at = now(), updated_at = now()
		FROM due WHERE d.id = due.id
		RETURNING d.id, d.client_id, d.target, d.endpoint_id, d.event_id::text, d.event_type, d.kind, d.payload::text,
			d.attempts, d.round_attempts, d.round_started_at,
			coalesce((SELECT c.environment FROM clients c WHERE c.id = d.client_id), '')`, max, lease.Microseconds())
	jobs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (gateway.DeliveryJob, error) {
		var (
			j       gateway.DeliveryJob
			payload string
		)
		err := r.Scan(&j.ID, &j.ClientID, &j.Target, &j.EndpointID, &j.EventID, &j.EventType, &j.Kind, &payload,
			&j.Attempt, &j.RoundAttempt, &j.RoundStartedAt, &j.Environment)
		j.Payload = []byte(payload)
		return j, err
	})
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	for i := range jobs {
		if err := d.resolve(ctx, &jobs[i]); err != nil {
			// The lease runs out and the delivery is claimed again.
			return nil, err
		}
	}
	return jobs, nil
}

// resolve fills in the job's URL and secret, or why it cannot be sent.
func (d *Deliveries) resolve(ctx context.Context, j *gateway.DeliveryJob) error {
	if j.Target == gateway.TargetCallback {
		var url string
		err := d.pool.QueryRow(ctx, `SELECT forward_callback_url FROM clients WHERE id = $1`, j.ClientID).Scan(&url)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("callback url of %s: %w", j.ClientID, err)
		}
		if url == "" {
			j.Gone = "the client has no forward callback URL"
			return nil
		}
		j.URL = url
		secret, err := d.callbackSecret(ctx, j.ClientID)
		if err != nil {
			j.Fault = err.Error()
		}
		j.Secret = secret
		return nil
	}
	var (
		url     string
		sealed  []byte
		enabled bool
		deleted *time.Time
	)
	err := d.pool.QueryRow(ctx, `SELECT url, secret, enabled, deleted_at FROM webhook_endpoints WHERE id = $1`,
		j.EndpointID).Scan(&url, &sealed, &enabled, &deleted)
	switch {
	case errors.Is(err, pgx.ErrNoRows) || deleted != nil:
		j.Gone = "webhook endpoint deleted"
		return nil
	case err != nil:
		return fmt.Errorf("webhook endpoint %s: %w", j.EndpointID, err)
	case !enabled:
		j.Gone = "webhook endpoint disabled"
		return nil
	}
	j.URL = url
	secret, err := d.box.Open(sealed, webhookSecretContext(j.EndpointID))
	if err != nil {
		j.Fault = fmt.Sprintf("signing secret of %s does not open: %v", j.EndpointID, err)
	}
	j.Secret = string(secret)
	return nil
}

// callbackSecret returns the client's callback signing secret, creating one
// when the client has none yet, so no callback is ever sent unsigned (the
// client learns a secret from POST /api/v1/forward-callback/rotate-secret).
func (d *Deliveries) callbackSecret(ctx context.Context, clientID string) (string, error) {
	var sealed []byte
	err := d.pool.QueryRow(ctx, `SELECT secret FROM callback_secrets WHERE client_id = $1`, clientID).Scan(&sealed)
	if errors.Is(err, pgx.ErrNoRows) {
		fresh := d.box.Seal([]byte(gateway.NewSigningSecret()), callbackSecretContext(clientID))
		err = d.pool.QueryRow(ctx, `
			WITH ins AS (
				INSERT INTO callback_secrets (client_id, secret) VALUES ($1, $2)
				ON CONFLICT (client_id) DO NOTHING RETURNING secret
			)
			SELECT secret FROM ins UNION ALL SELECT secret FROM callback_secrets WHERE client_id = $1
			LIMIT 1`, clientID, fresh).Scan(&sealed)
	}
	if err != nil {
		return "", fmt.Errorf("callback secret of %s: %w", clientID, err)
	}
	secret, err := d.box.Open(sealed, callbackSecretContext(clientID))
	if err != nil {
		return "", fmt.Errorf("callback secret of %s does not open: %w", clientID, err)
	}
	return string(secret), nil
}

// Finish logs the attempt and moves the delivery on. Only a job that still
// holds its lease (the attempt counter is unchanged, the delivery still
// pending) moves it; the attempt is logged either way.
func (d *Deliveries) Finish(ctx context.Context, j gateway.DeliveryJob, o gateway.DeliveryOutcome) error {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("finish delivery %s: %w", j.ID, err)
	}
	defer tx.Rollback(ctx)
	r := o.Result
	if r.StartedAt.IsZero() {
		r.StartedAt = time.Now()
	}
	_, err = tx.Exec(ctx, `
		INSERT INTO delivery_attempts (delivery_id, attempt, url, started_at, latency_us, status_code, error, response_excerpt)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (delivery_id, attempt) DO NOTHING`,
		j.ID, j.Attempt, o.URL, r.StartedAt, r.Latency.Microseconds(), nullStatus(r.StatusCode), r.Error, r.Excerpt)
	if err != nil {
		return fmt.Errorf("log attempt %d of %s: %w", j.Attempt, j.ID, err)
	}
	var key string
	if err := tx.QueryRow(ctx, `SELECT queue_key FROM deliveries WHERE id = $1`, j.ID).Scan(&key); err != nil {
		return fmt.Errorf("delivery %s: %w", j.ID, err)
	}
	if err := lockQueue(ctx, tx, key); err != nil {
		return err
	}
	var tag pgconn.CommandTag
	switch {
	case o.Succeeded:
		tag, err = tx.Exec(ctx, `
			UPDATE deliveries SET state = 'succeeded', delivered_at = now(), last_status_code = $3, last_error = '',
				updated_at = now()
			WHERE id = $1 AND attempts = $2 AND state = 'pending'`, j.ID, j.Attempt, nullStatus(r.StatusCode))
	case o.Park:
		tag, err = tx.Exec(ctx, `
			UPDATE deliveries SET state = 'parked', parked_at = now(), last_status_code = $3, last_error = $4,
				updated_at = now()
			WHERE id = $1 AND attempts = $2 AND state = 'pending'`, j.ID, j.Attempt, nullStatus(r.StatusCode), r.Error)
	default:
		tag, err = tx.Exec(ctx, `
			UPDATE deliveries SET next_attempt_at = now() + $5 * interval '1 microsecond', last_status_code = $3,
				last_error = $4, updated_at = now()
			WHERE id = $1 AND attempts = $2 AND state = 'pending'`,
			j.ID, j.Attempt, nullStatus(r.StatusCode), r.Error, o.RetryAfter.Microseconds())
	}
	if err != nil {
		return fmt.Errorf("update delivery %s: %w", j.ID, err)
	}
	if tag.RowsAffected() == 1 && (o.Succeeded || o.Park) {
		if err := promote(ctx, tx, key); err != nil {
			return err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("finish delivery %s: commit: %w", j.ID, err)
	}
	return nil
}

// promote makes the oldest queued delivery of the queue its head, unless
// the queue has one. The caller holds the queue's lock.
func promote(ctx context.Context, tx pgx.Tx, key string) error {
	_, err := tx.Exec(ctx, `
		UPDATE deliveries SET state = 'pending', next_attempt_at = now(), updated_at = now()
		WHERE id = (SELECT id FROM deliveries WHERE queue_key = $1 AND state = 'queued' ORDER BY queue_seq LIMIT 1)
		  AND NOT EXISTS (SELECT 1 FROM deliveries WHERE queue_key = $1 AND state = 'pending')`, key)
	if err != nil {
		return fmt.Errorf("promote in queue %s: %w", key, err)
	}
	return nil
}

func nullStatus(code int) *int {
	if code == 0 {
		return nil
	}
	return &code
}

// ---- the delivery log -----------------------------------------------------

const deliveryColumns = `id, client_id, target, endpoint_id, event_id::text, event_type, kind, stream_id, stream_version,
	state, attempts, next_attempt_at, last_attempt_at, coalesce(last_status_code, 0), last_error, delivered_at, parked_at,
	created_at`

func scanDelivery(r pgx.CollectableRow) (gateway.Delivery, error) {
	var (
		x    gateway.Delivery
		next time.Time
	)
	err := r.Scan(&x.ID, &x.ClientID, &x.Target, &x.EndpointID, &x.EventID, &x.EventType, &x.Kind, &x.StreamID,
		&x.StreamVersion, &x.State, &x.Attempts, &next, &x.LastAttemptAt, &x.LastStatusCode, &x.LastError,
		&x.DeliveredAt, &x.ParkedAt, &x.CreatedAt)
	if x.State == stateQueued || x.State == statePending {
		x.NextAttemptAt = &next
	}
	return x, err
}

// ListDeliveries returns one page of the client's deliveries, newest first,
// each with its attempts, and the number of deliveries the filter matches.
func (d *Deliveries) ListDeliveries(ctx context.Context, clientID string, f gateway.DeliveryFilter) ([]gateway.Delivery, int64, error) {
	if f.Page < 1 {
		f.Page = 1
	}
	if f.PerPage < 1 {
		f.PerPage = 20
	}
	where := `client_id = $1 AND ($2 = '' OR state = $2) AND ($3 = '' OR endpoint_id = $3)
		AND ($4 = '' OR event_id = nullif($4, '')::uuid)`
	args := []any{clientID, f.State, f.EndpointID, f.EventID}
	var total int64
	if err := d.pool.QueryRow(ctx, `SELECT count(*) FROM deliveries WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count deliveries: %w", err)
	}
	rows, _ := d.pool.Query(ctx, `SELECT `+deliveryColumns+` FROM deliveries WHERE `+where+`
		ORDER BY seq DESC LIMIT $5 OFFSET $6`, append(args, f.PerPage, int64(f.Page-1)*int64(f.PerPage))...)
	list, err := pgx.CollectRows(rows, scanDelivery)
	if err != nil {
		return nil, 0, fmt.Errorf("list deliveries: %w", err)
	}
	if err := d.attachLog(ctx, list); err != nil {
		return nil, 0, err
	}
	return list, total, nil
}

func (d *Deliveries) attachLog(ctx context.Context, list []gateway.Delivery) error {
	if len(list) == 0 {
		return nil
	}
	ids := make([]string, len(list))
	at := make(map[string]int, len(list))
	for i, x := range list {
		ids[i], at[x.ID] = x.ID, i
		list[i].Log = []gateway.DeliveryAttempt{}
	}
	rows, _ := d.pool.Query(ctx, `
		SELECT delivery_id, attempt, url, started_at, latency_us, coalesce(status_code, 0), error, response_excerpt
		FROM delivery_attempts WHERE delivery_id = ANY($1) ORDER BY delivery_id, attempt`, ids)
	var (
		id string
		a  gateway.DeliveryAttempt
		us int64
	)
	_, err := pgx.ForEachRow(rows, []any{&id, &a.Attempt, &a.URL, &a.StartedAt, &us, &a.StatusCode, &a.Error, &a.Excerpt},
		func() error {
			a.Latency = time.Duration(us) * time.Microsecond
			i := at[id]
			list[i].Log = append(list[i].Log, a)
			return nil
		})
	if err != nil {
		return fmt.Errorf("delivery log: %w", err)
	}
	return nil
}

// Delivery returns one of the client's deliveries with its log and payload.
func (d *Deliveries) Delivery(ctx context.Context, clientID, id string) (gateway.Delivery, error) {
	rows, _ := d.pool.Query(ctx, `SELECT `+deliveryColumns+`, payload::text FROM deliveries WHERE id = $1 AND client_id = $2`,
		id, clientID)
	x, err := pgx.CollectExactlyOneRow(rows, func(r pgx.CollectableRow) (gateway.Delivery, error) {
		var (
			x       gateway.Delivery
			next    time.Time
			payload string
		)
		err := r.Scan(&x.ID, &x.ClientID, &x.Target, &x.EndpointID, &x.EventID, &x.EventType, &x.Kind, &x.StreamID,
			&x.StreamVersion, &x.State, &x.Attempts, &next, &x.LastAttemptAt, &x.LastStatusCode, &x.LastError,
			&x.DeliveredAt, &x.ParkedAt, &x.CreatedAt, &payload)
		if x.State == stateQueued || x.State == statePending {
			x.NextAttemptAt = &next
		}
		x.Payload = []byte(payload)
		return x, err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return gateway.Delivery{}, fmt.Errorf("delivery %s: %w", id, domain.ErrNotFound)
	}
	if err != nil {
		return gateway.Delivery{}, fmt.Errorf("delivery %s: %w", id, err)
	}
	list := []gateway.Delivery{x}
	if err := d.attachLog(ctx, list); err != nil {
		return gateway.Delivery{}, err
	}
	return list[0], nil
}

// ResendDelivery puts a parked or succeeded delivery back at the end of its
// queue with a new round of attempts (the schedule starts over); it is the
// head at once when nothing else of its queue is waiting.
func (d *Deliveries) ResendDelivery(ctx context.Context, clientID, id string) (gateway.Delivery, error) {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return gateway.Delivery{}, fmt.Errorf("resend %s: %w", id, err)
	}
	defer tx.Rollback(ctx)
	var key string
	err = tx.QueryRow(ctx, `SELECT queue_key FROM deliveries WHERE id = $1 AND client_id = $2`, id, clientID).Scan(&key)
	if errors.Is(err, pgx.ErrNoRows) {
		return gateway.Delivery{}, fmt.Errorf("delivery %s: %w", id, domain.ErrNotFound)
	}
	if err != nil {
		return gateway.Delivery{}, fmt.Errorf("delivery %s: %w", id, err)
	}
	if err := lockQueue(ctx, tx, key); err != nil {
		return gateway.Delivery{}, err
	}
	tag, err := tx.Exec(ctx, `
		UPDATE deliveries SET
			state = CASE WHEN EXISTS (SELECT 1 FROM deliveries WHERE queue_key = $2 AND state IN ('queued', 'pending'))
				THEN 'queued' ELSE 'pending' END,
			queue_seq = nextval('deliveries_seq'), round_attempts = 0, round_started_at = NULL,
			next_attempt_at = now(), delivered_at = NULL, parked_at = NULL, updated_at = now()
		WHERE id = $1 AND state IN ('parked', 'succeeded')`, id, key)
	if err != nil {
		return gateway.Delivery{}, fmt.Errorf("resend %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return gateway.Delivery{}, fmt.Errorf("resend %s: %w", id, gateway.ErrDeliveryInProgress)
	}
	if err := tx.Commit(ctx); err != nil {
		return gateway.Delivery{}, fmt.Errorf("resend %s: commit: %w", id, err)
	}
	return d.Delivery(ctx, clientID, id)
}
