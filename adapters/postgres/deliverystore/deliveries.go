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

// targetsLockClass is the first key of the two-key advisory locks on a
// client's delivery targets ("PLVT"): anything that adds a target (a
// forward callback URL, a webhook endpoint, an endpoint enabled or
// subscribed to more kinds) holds it exclusively until it commits, and
// EnqueueBatch holds it shared for the batch's clients. So the targets an
// enqueue reads cannot grow between its statements, and the queues it
// locks are exactly the ones it inserts into.
const targetsLockClass int32 = 0x504C5654

func lockTargets(ctx context.Context, tx pgx.Tx, clientID string) error {
	if _, err := tx.Exec(ctx, postgres.KeyedLockSQL, targetsLockClass, clientID); err != nil {
		return fmt.Errorf("lock delivery targets of %s: %w", clientID, err)
	}
	return nil
}

// enqueueEvents is the batch as columns: the statements take it as arrays.
type enqueueEvents struct {
	clients, kinds, streams, eventIDs, eventTypes, callbacks, webhooks []string
	occurred                                                           []time.Time
	hasCallback                                                        []bool
	versions, positions                                                []int64
}

func columns(outs []gateway.Outgoing) enqueueEvents {
	n := len(outs)
	c := enqueueEvents{clients: make([]string, n), kinds: make([]string, n), streams: make([]string, n),
		eventIDs: make([]string, n), eventTypes: make([]string, n), callbacks: make([]string, n),
		webhooks: make([]string, n), occurred: make([]time.Time, n), hasCallback: make([]bool, n),
		versions: make([]int64, n), positions: make([]int64, n)}
	for i, o := range outs {
		c.clients[i], c.kinds[i], c.streams[i] = o.ClientID, o.Kind, o.StreamID
		c.eventIDs[i], c.eventTypes[i] = o.EventID, o.EventType
		c.callbacks[i], c.webhooks[i] = string(o.Callback), string(o.Webhook)
		c.occurred[i], c.hasCallback[i] = o.OccurredAt, o.Callback != nil
		c.versions[i], c.positions[i] = o.StreamVersion, o.Position
	}
	return c
}

// The three statements of EnqueueBatch, sent in one pipeline: one round
// trip, one implicit transaction. Each statement of a pipeline takes its
// own snapshot, so the queue locks of the second are held before the third
// reads the queues it inserts into.
//
// lockTargetsSQL takes the batch's clients' target locks, shared.
const lockTargetsSQL = `SELECT pg_advisory_xact_lock_shared($1, hashtext(c)) FROM unnest($2::text[]) AS c ORDER BY c`

// lockQueuesSQL takes the lock of every queue the batch adds to, in key
// order, holds the client's enabled webhook endpoints FOR SHARE (a
// concurrent delete or disable, which parks the endpoint's deliveries,
// waits for this enqueue), and reports which (client, kind) pairs have a
// target at all and the transaction's start.
const lockQueuesSQL = `
	WITH ev AS (
		SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::bool[], $5::text[])
			AS e(client_id, kind, occurred_at, has_callback, stream_id)
	),
	cb AS (SELECT id FROM clients WHERE id = ANY($6) AND forward_callback_url <> ''),
	eps AS (
		SELECT id, client_id, created_at, kinds FROM webhook_endpoints
		WHERE client_id = ANY($6) AND deleted_at IS NULL AND enabled ORDER BY id FOR SHARE
	),
	keys AS (
		SELECT $8 || '|' || e.stream_id AS k FROM ev e JOIN cb ON cb.id = e.client_id WHERE e.has_callback
		UNION
		SELECT w.id || '|' || e.stream_id FROM ev e JOIN eps w ON w.client_id = e.client_id
		WHERE w.created_at <= e.occurred_at AND (e.kind = ANY(w.kinds) OR '*' = ANY(w.kinds))
	),
	locked AS (SELECT k, pg_advisory_xact_lock($7, hashtext(k)) FROM keys ORDER BY k),
	targeted AS (
		SELECT DISTINCT e.client_id, e.kind FROM ev e
		WHERE EXISTS (SELECT 1 FROM cb WHERE cb.id = e.client_id)
		   OR EXISTS (SELECT 1 FROM eps w WHERE w.client_id = e.client_id AND (e.kind = ANY(w.kinds) OR '*' = ANY(w.kinds)))
	)
	SELECT now(), (SELECT count(*) FROM locked),
		coalesce(array_agg(client_id), '{}'), coalesce(array_agg(kind), '{}') FROM targeted`

// insertSQL inserts the deliveries: the forwarded callback of each event
// that has one when the client has a callback URL, and one per enabled
// webhook endpoint of the client subscribed to the event's kind (or "*")
// that existed when the event occurred; none that exists already (same
// event and endpoint). In each queue, the first new delivery is the head
// ('pending') unless the queue has one waiting already, and the others
// queue behind it in the order of outs.
const insertSQL = `
	WITH ev AS (
		SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::bool[], $5::text[], $6::uuid[],
				$7::text[], $8::bigint[], $9::bigint[], $10::text[], $11::text[])
			WITH ORDINALITY AS e(client_id, kind, occurred_at, has_callback, stream_id, event_id, event_type,
				stream_version, position, callback, webhook, ord)
	),
	todo AS (
		SELECT e.client_id, e.kind, e.stream_id, e.event_id, e.event_type, e.stream_version, e.position, e.ord,
			$12 AS target, $13 AS endpoint_id, e.callback AS payload
		FROM ev e
		WHERE e.has_callback AND EXISTS (SELECT 1 FROM clients c WHERE c.id = e.client_id AND c.forward_callback_url <> '')
		UNION ALL
		SELECT e.client_id, e.kind, e.stream_id, e.event_id, e.event_type, e.stream_version, e.position, e.ord,
			$14, w.id, e.webhook
		FROM ev e JOIN webhook_endpoints w ON w.client_id = e.client_id
		WHERE w.deleted_at IS NULL AND w.enabled AND w.created_at <= e.occurred_at
		  AND (e.kind = ANY(w.kinds) OR '*' = ANY(w.kinds))
	),
	fresh AS (
		SELECT t.*, t.endpoint_id || '|' || t.stream_id AS queue_key,
			row_number() OVER (PARTITION BY t.endpoint_id, t.stream_id ORDER BY t.ord) AS rn
		FROM todo t
		-- a subplan, not an anti join: one probe of the unique key per row,
		-- never a scan of the table
		WHERE (SELECT true FROM deliveries d WHERE d.event_id = t.event_id AND d.endpoint_id = t.endpoint_id) IS NULL
	)
	INSERT INTO deliveries (id, client_id, target, endpoint_id, queue_key, event_id, event_type, kind,
		stream_id, stream_version, position, payload, state)
	SELECT 'dl_' || left(replace(gen_random_uuid()::text, '-', ''), 24), f.client_id, f.target, f.endpoint_id,
		f.queue_key, f.event_id, f.event_type, f.kind, f.stream_id, f.stream_version, f.position, f.payload::json,
		CASE WHEN f.rn > 1 OR EXISTS (SELECT 1 FROM deliveries d WHERE d.queue_key = f.queue_key AND d.state IN ('queued', 'pending'))
		THEN 'queued' ELSE 'pending' END
	FROM fresh f ORDER BY f.queue_key, f.ord
	ON CONFLICT (event_id, endpoint_id) DO NOTHING`

// Enqueue inserts o's deliveries; see EnqueueBatch.
func (d *Deliveries) Enqueue(ctx context.Context, o gateway.Outgoing) (int, error) {
	r, err := d.EnqueueBatch(ctx, []gateway.Outgoing{o})
	return r.Added, err
}

// EnqueueBatch inserts, in one transaction, each event's deliveries: the
// forwarded callback when it has one and the client has a callback URL,
// and one per enabled webhook endpoint of the client subscribed to its kind
// (or "*") that existed when the event occurred. A delivery that exists
// already (same event and endpoint) is left alone. Deliveries of one queue
// (endpoint and stream) are inserted in the order of outs, so a partition's
// batch keeps each stream's order. It also reports which (client, kind)
// pairs of outs have a target at all (gateway.Enqueued).
//
// Round trips: one, whatever the batch's size and its mix of clients —
// three statements in one pipeline (lockTargetsSQL, lockQueuesSQL,
// insertSQL), which Postgres runs as one implicit transaction.
func (d *Deliveries) EnqueueBatch(ctx context.Context, outs []gateway.Outgoing) (gateway.Enqueued, error) {
	if len(outs) == 0 {
		return gateway.Enqueued{}, nil
	}
	var clients []string
	for i := range outs {
		if !slices.Contains(clients, outs[i].ClientID) {
			clients = append(clients, outs[i].ClientID)
		}
	}
	slices.Sort(clients)
	c := columns(outs)
	res := gateway.Enqueued{Targeted: map[gateway.TargetKey]bool{}}
	b := &pgx.Batch{}
	b.Queue(lockTargetsSQL, targetsLockClass, clients)
	b.Queue(lockQueuesSQL, c.clients, c.kinds, c.occurred, c.hasCallback, c.streams, clients, queueLockClass,
		gateway.CallbackEndpointID).QueryRow(func(row pgx.Row) error {
		var (
			locked           int64
			tClients, tKinds []string
		)
		if err := row.Scan(&res.AsOf, &locked, &tClients, &tKinds); err != nil {
			return err
		}
		for i := range tClients {
			res.Targeted[gateway.TargetKey{ClientID: tClients[i], Kind: tKinds[i]}] = true
		}
		return nil
	})
	b.Queue(insertSQL, c.clients, c.kinds, c.occurred, c.hasCallback, c.streams, c.eventIDs, c.eventTypes,
		c.versions, c.positions, c.callbacks, c.webhooks, gateway.TargetCallback, gateway.CallbackEndpointID,
		gateway.TargetWebhook).Exec(func(tag pgconn.CommandTag) error {
		res.Added = int(tag.RowsAffected())
		return nil
	})
	if err := d.pool.SendBatch(ctx, b).Close(); err != nil {
		return gateway.Enqueued{}, fmt.Errorf("enqueue %d events of %d clients: %w", len(outs), len(clients), err)
	}
	return res, nil
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
