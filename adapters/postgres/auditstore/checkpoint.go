package auditstore

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/secretbox"
	"github.com/pitboss/pitboss/audit"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/statement"
)

// Checkpoints makes, keeps and lists the signed checkpoints
// (docs/audit.md, "Signed checkpoints") and their Ed25519 signing keys,
// whose private halves it seals with the master key.
type Checkpoints struct {
	pool *pgxpool.Pool
	box  *secretbox.Box
	now  func() time.Time
}

var _ audit.Checkpoints = (*Checkpoints)(nil)

// ErrNothingToSign is returned by Make on an empty event store.
var ErrNothingToSign = errors.New("the event store is empty: there is nothing to sign")

// NewCheckpoints returns the checkpoint store. box seals the signing keys;
// it may be nil for a reader that only lists (the API).
func NewCheckpoints(pool *pgxpool.Pool, box *secretbox.Box) *Checkpoints {
	return &Checkpoints{pool: pool, box: box, now: time.Now}
}

// WithClock returns c with now as its clock (tests).
func (c *Checkpoints) WithClock(now func() time.Time) *Checkpoints {
	x := *c
	x.now = now
	return &x
}

// Advisory lock keys (class, hashtext key) of the checkpoint makers and the
// key table.
const (
	checkpointLockClass = 0x636b7074 // "ckpt"
	lockMake            = "make"
	lockKeys            = "keys"
)

func sealContext(keyID string) string { return "checkpoint_key:" + keyID }

// RotateKey makes a new signing key, active from now on. Old keys stay
// listed (and keep verifying the checkpoints they signed).
func (c *Checkpoints) RotateKey(ctx context.Context) (audit.CheckpointKey, error) {
	var k audit.CheckpointKey
	err := pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, checkpointLockClass, lockKeys); err != nil {
			return fmt.Errorf("lock checkpoint keys: %w", err)
		}
		var err error
		k, _, err = c.insertKey(ctx, tx)
		return err
	})
	return k, err
}

func (c *Checkpoints) insertKey(ctx context.Context, tx pgx.Tx) (audit.CheckpointKey, ed25519.PrivateKey, error) {
	if c.box == nil {
		return audit.CheckpointKey{}, nil, errors.New("checkpoint keys: no master key to seal them with")
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return audit.CheckpointKey{}, nil, fmt.Errorf("generate checkpoint key: %w", err)
	}
	k := audit.CheckpointKey{KeyID: audit.CheckpointKeyID(pub), PublicKey: pub, CreatedAt: c.now().UTC().Truncate(time.Microsecond), Active: true}
	sealed := c.box.Seal(priv.Seed(), sealContext(k.KeyID))
	if _, err := tx.Exec(ctx, `INSERT INTO checkpoint_keys (key_id, public_key, sealed_private_key, created_at) VALUES ($1, $2, $3, $4)`,
		k.KeyID, []byte(pub), sealed, k.CreatedAt); err != nil {
		return k, nil, fmt.Errorf("store checkpoint key: %w", err)
	}
	return k, priv, nil
}

// activeKey is the newest key, opened; one is made when there is none.
func (c *Checkpoints) activeKey(ctx context.Context) (string, ed25519.PrivateKey, error) {
	var (
		keyID string
		priv  ed25519.PrivateKey
	)
	err := pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, checkpointLockClass, lockKeys); err != nil {
			return fmt.Errorf("lock checkpoint keys: %w", err)
		}
		var sealed []byte
		err := tx.QueryRow(ctx, `SELECT key_id, sealed_private_key FROM checkpoint_keys ORDER BY id DESC LIMIT 1`).Scan(&keyID, &sealed)
		if errors.Is(err, pgx.ErrNoRows) {
			k, p, err := c.insertKey(ctx, tx)
			keyID, priv = k.KeyID, p
			return err
		}
		if err != nil {
			return fmt.Errorf("read checkpoint key: %w", err)
		}
		if c.box == nil {
			return errors.New("checkpoint key: no master key to open it with")
		}
		seed, err := c.box.Open(sealed, sealContext(keyID))
		if err != nil {
			return fmt.Errorf("open checkpoint key %s: %w", keyID, err)
		}
		if len(seed) != ed25519.SeedSize {
			return fmt.Errorf("checkpoint key %s: sealed seed is %d bytes", keyID, len(seed))
		}
		priv = ed25519.NewKeyFromSeed(seed)
		if got := audit.CheckpointKeyID(priv.Public().(ed25519.PublicKey)); got != keyID {
			return fmt.Errorf("checkpoint key %s: the sealed seed is key %s's", keyID, got)
		}
		return nil
	})
	return keyID, priv, err
}

// SigningKey opens the active signing key (one is made when there is
// none), for other signed records: statements.
func (c *Checkpoints) SigningKey(ctx context.Context) (string, ed25519.PrivateKey, error) {
	id, priv, err := c.activeKey(ctx)
	if errors.Is(err, secretbox.ErrWrongKey) {
		err = fmt.Errorf("%w: %w", statement.ErrSigningKey, err)
	}
	return id, priv, err
}

// MakeCheckpoint is Make for a caller that needs only that it ran.
func (c *Checkpoints) MakeCheckpoint(ctx context.Context) error {
	_, err := c.Make(ctx)
	return err
}

// Keys lists every signing key's public half, oldest first; the last one is
// active.
func (c *Checkpoints) Keys(ctx context.Context) ([]audit.CheckpointKey, error) {
	rows, err := c.pool.Query(ctx, `SELECT key_id, public_key, created_at FROM checkpoint_keys ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list checkpoint keys: %w", err)
	}
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (audit.CheckpointKey, error) {
		var k audit.CheckpointKey
		var pub []byte
		err := r.Scan(&k.KeyID, &pub, &k.CreatedAt)
		k.PublicKey, k.CreatedAt = pub, k.CreatedAt.UTC()
		return k, err
	})
	if err != nil {
		return nil, fmt.Errorf("list checkpoint keys: %w", err)
	}
	if n := len(keys); n > 0 {
		keys[n-1].Active = true
	}
	return keys, nil
}

// PublicKey returns the public key with id keyID; domain.ErrNotFound when
// there is none.
func (c *Checkpoints) PublicKey(ctx context.Context, keyID string) (ed25519.PublicKey, error) {
	var pub []byte
	err := c.pool.QueryRow(ctx, `SELECT public_key FROM checkpoint_keys WHERE key_id = $1`, keyID).Scan(&pub)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("checkpoint key %s: %w", keyID, domain.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read checkpoint key %s: %w", keyID, err)
	}
	return pub, nil
}

const (
	// Per client (stream client = data.client_id) and currency, and per
	// currency over every event (GROUPING(client) = 1): the postings up to
	// $1, their exact sum and their debits.
	sqlCheckpointTotals = `
SELECT x.client, x.currency, count(*), sum(x.amount)::text,
       coalesce(sum(-x.amount) FILTER (WHERE x.amount < 0), 0)::text, GROUPING(x.client)
  FROM (
    SELECT CASE WHEN split_part(e.stream_id, ':', 2) = e.body->'data'->>'client_id'
                THEN split_part(e.stream_id, ':', 2) END AS client,
           regexp_replace(p.value->>'account', '^.*:', '') AS currency,
           (p.value->>'amount')::numeric AS amount
      FROM events e
     CROSS JOIN LATERAL json_array_elements(CASE WHEN json_typeof(e.body->'data'->'postings') = 'array'
                                                 THEN e.body->'data'->'postings' ELSE '[]'::json END) p
     WHERE e.position <= $1
  ) x
 GROUP BY GROUPING SETS ((x.client, x.currency), (x.currency))
 ORDER BY x.currency COLLATE "C"`

	// Each client's last event at or below $1, and the chain's hash there.
	sqlCheckpointClientHeads = `
SELECT h.client, h.position, e.hash
  FROM (SELECT split_part(stream_id, ':', 2) AS client, max(position) AS position
          FROM events
         WHERE position <= $1 AND split_part(stream_id, ':', 2) = body->'data'->>'client_id'
         GROUP BY 1) h
  JOIN events e ON e.position = h.position
 WHERE h.client <> ''
 ORDER BY h.client COLLATE "C"`

	checkpointColumns = `c.id, c.client_id, c.position, c.chain_hash, c.signed_at, c.key_id, c.payload, c.signature, k.public_key`
)

// MakeResult is what one run made.
type MakeResult struct {
	Platform audit.SignedCheckpoint
	Clients  int // client checkpoints made beside it
}

// Make signs the ledger's head now: the platform's checkpoint and one per
// client with events, in one snapshot and one transaction. Runs are
// serialised (a session advisory lock), so two never interleave.
func (c *Checkpoints) Make(ctx context.Context) (MakeResult, error) {
	conn, err := c.pool.Acquire(ctx)
	if err != nil {
		return MakeResult{}, fmt.Errorf("acquire connection: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1, hashtext($2))`, checkpointLockClass, lockMake); err != nil {
		return MakeResult{}, fmt.Errorf("lock checkpoints: %w", err)
	}
	defer unlockMake(ctx, conn)
	return c.makeOn(ctx, conn)
}

// MakeIfDue makes a checkpoint unless the newest platform checkpoint was
// signed at or after dueAfter, or another instance is making one right now
// (it then skips: the other's run is the day's). made says whether it did.
func (c *Checkpoints) MakeIfDue(ctx context.Context, dueAfter time.Time) (MakeResult, bool, error) {
	d, err := c.Daily(ctx, dueAfter, nil)
	return d.Result, d.Made, err
}

// DailyResult is what one Daily call did.
type DailyResult struct {
	Ran       bool // it held the lock (else another instance was at work, and it did nothing)
	Made      bool
	Result    MakeResult
	Published int
}

// Daily is the serve job's tick: holding the checkpoint lock without
// waiting for it (another instance holding it is doing the same), it makes
// a checkpoint when the newest platform checkpoint was signed before
// dueAfter, then hands every checkpoint not yet published to publish, in id
// order, in batches, marking each batch published once publish returned
// nil (at least once). publish may be nil (nothing is published).
func (c *Checkpoints) Daily(ctx context.Context, dueAfter time.Time, publish func([]audit.SignedCheckpoint) error) (DailyResult, error) {
	var d DailyResult
	conn, err := c.pool.Acquire(ctx)
	if err != nil {
		return d, fmt.Errorf("acquire connection: %w", err)
	}
	defer conn.Release()
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, hashtext($2))`, checkpointLockClass, lockMake).Scan(&d.Ran); err != nil {
		return d, fmt.Errorf("lock checkpoints: %w", err)
	}
	if !d.Ran {
		return d, nil
	}
	defer unlockMake(ctx, conn)
	var last *time.Time
	if err := conn.QueryRow(ctx, `SELECT max(signed_at) FROM checkpoints WHERE client_id = ''`).Scan(&last); err != nil {
		return d, fmt.Errorf("read last checkpoint: %w", err)
	}
	if last == nil || last.Before(dueAfter) {
		d.Result, err = c.makeOn(ctx, conn)
		if err != nil && !errors.Is(err, ErrNothingToSign) {
			return d, err
		}
		d.Made = err == nil
	}
	for publish != nil {
		batch, err := c.Unpublished(ctx, 100)
		if err != nil || len(batch) == 0 {
			return d, err
		}
		if err := publish(batch); err != nil {
			return d, fmt.Errorf("publish checkpoints: %w", err)
		}
		ids := make([]int64, len(batch))
		for i, cp := range batch {
			ids[i] = cp.ID
		}
		if err := c.MarkPublished(ctx, ids); err != nil {
			return d, err
		}
		d.Published += len(batch)
	}
	return d, nil
}

func unlockMake(ctx context.Context, conn *pgxpool.Conn) {
	_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1, hashtext($2))`, checkpointLockClass, lockMake)
}

// makeOn makes a checkpoint on conn, which holds the checkpoint lock.
func (c *Checkpoints) makeOn(ctx context.Context, conn *pgxpool.Conn) (res MakeResult, err error) {
	keyID, priv, err := c.activeKey(ctx)
	if err != nil {
		return res, err
	}
	signedAt := c.now().UTC().Truncate(time.Microsecond)
	err = pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		var head int64
		var headHash []byte
		err := tx.QueryRow(ctx, `SELECT position, hash FROM events ORDER BY position DESC LIMIT 1`).Scan(&head, &headHash)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrNothingToSign
		}
		if err != nil {
			return fmt.Errorf("read the chain head: %w", err)
		}
		platform, perClient, err := checkpointTotals(ctx, tx, head)
		if err != nil {
			return err
		}
		var runID int64
		if err := tx.QueryRow(ctx, `SELECT nextval(pg_get_serial_sequence('checkpoints', 'id'))`).Scan(&runID); err != nil {
			return fmt.Errorf("allocate checkpoint id: %w", err)
		}
		base := audit.CheckpointPayload{Format: audit.CheckpointFormat, SignedAt: signedAt.Format(audit.CheckpointTimeLayout), KeyID: keyID}
		p := base
		p.Scope, p.Position, p.ChainHash, p.Totals = audit.CheckpointScopePlatform, head, hex.EncodeToString(headHash), platform
		if res.Platform, err = insertCheckpoint(ctx, tx, runID, runID, "", p, headHash, signedAt, priv); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, sqlCheckpointClientHeads, head)
		if err != nil {
			return fmt.Errorf("read client heads: %w", err)
		}
		type clientHead struct {
			client   string
			position int64
			hash     []byte
		}
		heads, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (clientHead, error) {
			var h clientHead
			err := r.Scan(&h.client, &h.position, &h.hash)
			return h, err
		})
		if err != nil {
			return fmt.Errorf("read client heads: %w", err)
		}
		for _, h := range heads {
			p := base
			p.Scope, p.ClientID, p.Position, p.ChainHash = audit.CheckpointScopeClient, h.client, h.position, hex.EncodeToString(h.hash)
			p.Totals = perClient[h.client]
			if _, err := insertCheckpoint(ctx, tx, 0, runID, h.client, p, h.hash, signedAt, priv); err != nil {
				return err
			}
		}
		res.Clients = len(heads)
		return nil
	})
	if err != nil {
		return res, err
	}
	res.Platform.PublicKey = priv.Public().(ed25519.PublicKey)
	return res, nil
}

// checkpointTotals reads the totals up to head: the platform's and each
// client's, at each currency's precision.
func checkpointTotals(ctx context.Context, tx pgx.Tx, head int64) ([]audit.CurrencyTotal, map[string][]audit.CurrencyTotal, error) {
	rows, err := tx.Query(ctx, sqlCheckpointTotals, head)
	if err != nil {
		return nil, nil, fmt.Errorf("sum postings up to %d: %w", head, err)
	}
	defer rows.Close()
	platform := []audit.CurrencyTotal{}
	perClient := map[string][]audit.CurrencyTotal{}
	for rows.Next() {
		var (
			client        *string
			t             audit.CurrencyTotal
			sum, debits   string
			platformLevel int
		)
		if err := rows.Scan(&client, &t.Currency, &t.Postings, &sum, &debits, &platformLevel); err != nil {
			return nil, nil, fmt.Errorf("sum postings: %w", err)
		}
		if t.Sum, err = audit.CanonicalAmount(sum, t.Currency); err != nil {
			return nil, nil, fmt.Errorf("sum of %s postings: %w", t.Currency, err)
		}
		if t.Debits, err = audit.CanonicalAmount(debits, t.Currency); err != nil {
			return nil, nil, fmt.Errorf("debits of %s postings: %w", t.Currency, err)
		}
		switch {
		case platformLevel == 1:
			platform = append(platform, t)
		case client != nil && *client != "":
			perClient[*client] = append(perClient[*client], t)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("sum postings: %w", err)
	}
	return platform, perClient, nil
}

func insertCheckpoint(ctx context.Context, tx pgx.Tx, id, runID int64, client string, p audit.CheckpointPayload,
	hash []byte, signedAt time.Time, priv ed25519.PrivateKey,
) (audit.SignedCheckpoint, error) {
	payload, sig, err := audit.SignCheckpoint(p, priv)
	if err != nil {
		return audit.SignedCheckpoint{}, fmt.Errorf("sign checkpoint of %q: %w", client, err)
	}
	cp := audit.SignedCheckpoint{ID: id, ClientID: client, Position: p.Position, ChainHash: hash, SignedAt: signedAt,
		KeyID: p.KeyID, Payload: payload, Signature: sig}
	const cols = `run_id, client_id, position, chain_hash, signed_at, key_id, payload, signature`
	if id > 0 {
		_, err = tx.Exec(ctx, `INSERT INTO checkpoints (id, `+cols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			id, runID, client, p.Position, hash, signedAt, p.KeyID, payload, sig)
	} else {
		err = tx.QueryRow(ctx, `INSERT INTO checkpoints (`+cols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
			runID, client, p.Position, hash, signedAt, p.KeyID, payload, sig).Scan(&cp.ID)
	}
	if err != nil {
		return cp, fmt.Errorf("store checkpoint of %q: %w", client, err)
	}
	return cp, nil
}

func scanCheckpoint(r pgx.CollectableRow) (audit.SignedCheckpoint, error) {
	var cp audit.SignedCheckpoint
	var pub []byte
	err := r.Scan(&cp.ID, &cp.ClientID, &cp.Position, &cp.ChainHash, &cp.SignedAt, &cp.KeyID, &cp.Payload, &cp.Signature, &pub)
	cp.PublicKey, cp.SignedAt = pub, cp.SignedAt.UTC()
	return cp, err
}

// ClientCheckpoints returns up to limit of the client's checkpoints with an
// id above after, in id order.
func (c *Checkpoints) ClientCheckpoints(ctx context.Context, clientID string, after int64, limit int) ([]audit.SignedCheckpoint, error) {
	if clientID == "" {
		return nil, errors.New("client checkpoints: no client")
	}
	rows, err := c.pool.Query(ctx, `SELECT `+checkpointColumns+` FROM checkpoints c JOIN checkpoint_keys k USING (key_id)
 WHERE c.client_id = $1 AND c.id > $2 ORDER BY c.id LIMIT $3`, clientID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("list checkpoints of %s: %w", clientID, err)
	}
	out, err := pgx.CollectRows(rows, scanCheckpoint)
	if err != nil {
		return nil, fmt.Errorf("list checkpoints of %s: %w", clientID, err)
	}
	return out, nil
}

// PlatformCheckpointsIn returns the platform's checkpoints whose position
// is from from to to (both included), oldest first: those an export of
// that range ties to (pitboss export --checkpoints).
func (c *Checkpoints) PlatformCheckpointsIn(ctx context.Context, from, to int64) ([]audit.SignedCheckpoint, error) {
	rows, err := c.pool.Query(ctx, `SELECT `+checkpointColumns+` FROM checkpoints c JOIN checkpoint_keys k USING (key_id)
 WHERE c.client_id = '' AND c.position BETWEEN $1 AND $2 ORDER BY c.id`, from, to)
	if err != nil {
		return nil, fmt.Errorf("list platform checkpoints: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanCheckpoint)
	if err != nil {
		return nil, fmt.Errorf("list platform checkpoints: %w", err)
	}
	return out, nil
}

// Get returns checkpoint id (any scope); domain.ErrNotFound when there is
// none.
func (c *Checkpoints) Get(ctx context.Context, id int64) (audit.SignedCheckpoint, error) {
	rows, err := c.pool.Query(ctx, `SELECT `+checkpointColumns+` FROM checkpoints c JOIN checkpoint_keys k USING (key_id) WHERE c.id = $1`, id)
	if err != nil {
		return audit.SignedCheckpoint{}, fmt.Errorf("read checkpoint %d: %w", id, err)
	}
	cp, err := pgx.CollectExactlyOneRow(rows, scanCheckpoint)
	if errors.Is(err, pgx.ErrNoRows) {
		return cp, fmt.Errorf("checkpoint %d: %w", id, domain.ErrNotFound)
	}
	if err != nil {
		return cp, fmt.Errorf("read checkpoint %d: %w", id, err)
	}
	return cp, nil
}

// Unpublished returns up to limit checkpoints not yet published on Kafka,
// in id order.
func (c *Checkpoints) Unpublished(ctx context.Context, limit int) ([]audit.SignedCheckpoint, error) {
	rows, err := c.pool.Query(ctx, `SELECT `+checkpointColumns+` FROM checkpoints c JOIN checkpoint_keys k USING (key_id)
 WHERE NOT EXISTS (SELECT 1 FROM checkpoint_publications p WHERE p.checkpoint_id = c.id) ORDER BY c.id LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("list unpublished checkpoints: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanCheckpoint)
	if err != nil {
		return nil, fmt.Errorf("list unpublished checkpoints: %w", err)
	}
	return out, nil
}

// MarkPublished records that the checkpoints ids went out.
func (c *Checkpoints) MarkPublished(ctx context.Context, ids []int64) error {
	_, err := c.pool.Exec(ctx, `INSERT INTO checkpoint_publications (checkpoint_id, published_at)
SELECT unnest($1::bigint[]), $2 ON CONFLICT DO NOTHING`, ids, c.now().UTC())
	if err != nil {
		return fmt.Errorf("mark checkpoints published: %w", err)
	}
	return nil
}
