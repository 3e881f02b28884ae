package eventstore

// The statements of a batch transaction: load.go reads the state with the
// first three (Accounts.Head shares sqlHead), append.go writes it back with
// the others (GenerateLedger shares sqlUpsertAccounts and eventColumns).
const (
	sqlLoadAccounts = `SELECT account_id, balance, version FROM accounts WHERE account_id = ANY($1::text[])`
	sqlLoadRecords  = `SELECT key, record FROM tx_records WHERE key = ANY($1::text[])`
	sqlHead         = `SELECT position, hash FROM events ORDER BY position DESC LIMIT 1`

	// The events of a batch, in position order; a position or an event id
	// already taken fails the batch, a stream version already taken is
	// the ConcurrencyError commands retry.
	sqlInsertEvents = `
INSERT INTO events (position, event_id, stream_id, stream_version, event_type, occurred_at, body, prev_hash, hash)
SELECT u.position, u.event_id, u.stream_id, u.stream_version, u.event_type, u.occurred_at, u.body::json, u.prev_hash, u.hash
  FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::bigint[], $5::text[], $6::timestamptz[], $7::text[], $8::bytea[], $9::bytea[])
    AS u(position, event_id, stream_id, stream_version, event_type, occurred_at, body, prev_hash, hash)`
	// Fails the transaction (SQLSTATE PB001) unless the chain head is at
	// ($1, $2): migration 00026.
	sqlExpectHead = `SELECT ledger_expect_head($1, $2)`

	sqlUpsertAccounts = `
INSERT INTO accounts (account_id, kind, currency, balance, version, last_position)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[])
ON CONFLICT (account_id) DO UPDATE
   SET balance = EXCLUDED.balance, version = EXCLUDED.version,
       last_position = EXCLUDED.last_position, updated_at = now()`
	// A plain INSERT: a key that already exists is a broken batch (an
	// operation that did not declare a record it wrote), never a silent pass.
	sqlInsertRecords = `
INSERT INTO tx_records (key, kind, record)
SELECT u.key, u.kind, u.record::jsonb FROM unnest($1::text[], $2::text[], $3::text[]) AS u(key, kind, record)`
	// Every record named must be there: one that is not fails the
	// transaction (SQLSTATE PB002, migration 00027) rather than being
	// skipped by a commit already sent.
	sqlUpdateRecords = `
WITH updated AS (
UPDATE tx_records t SET kind = u.kind, record = u.record::jsonb, updated_at = now()
  FROM unnest($1::text[], $2::text[], $3::text[]) AS u(key, kind, record)
 WHERE t.key = u.key
RETURNING 1)
SELECT ledger_expect_rows('update records', count(*), cardinality($1::text[])) FROM updated`
)

var eventColumns = []string{"position", "event_id", "stream_id", "stream_version", "event_type",
	"occurred_at", "body", "prev_hash", "hash"}
