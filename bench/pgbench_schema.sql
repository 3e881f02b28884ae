-- The baseline of `make bench`: a table shaped exactly like the event store.
-- LIKE ... INCLUDING ALL copies the migrated events table's columns,
-- defaults (tx_id, recorded_at), CHECK constraint and every index (primary
-- key, unique event_id, unique (stream_id, stream_version), (tx_id,
-- position), occurred_at, the per-client expression index), so the baseline
-- follows the migrations by itself. Positions and stream versions come from
-- sequences: no lock, no hash chain, no state — just Postgres committing one
-- row per transaction, which is the limit the wallet is compared with.
DROP TABLE IF EXISTS pgbench_events;
DROP SEQUENCE IF EXISTS pgbench_events_position;
DROP SEQUENCE IF EXISTS pgbench_events_version;
CREATE TABLE pgbench_events (LIKE events INCLUDING ALL);
CREATE SEQUENCE pgbench_events_position;
CREATE SEQUENCE pgbench_events_version;
