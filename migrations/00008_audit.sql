-- +goose NO TRANSACTION
-- +goose Up

-- The auditor's toolkit (docs/audit.md).
--
-- GET /api/v1/audit/events shows a client only its own events, paged by
-- position. Every stream id names its client as its second part
-- ("player:acme:p-17:EUR", "client:acme:EUR", "house:acme:prov:EUR"), so
-- this index finds a client's events in position order without reading
-- anyone else's. CONCURRENTLY (hence NO TRANSACTION): on a large event store
-- the build must not block the ledger writer.
CREATE INDEX CONCURRENTLY IF NOT EXISTS events_client_position_idx
    ON events (split_part(stream_id, ':', 2), position);

-- The outcome of every `pitboss verify` run (unless --record=false), so the
-- console can show when the books were last verified and what was found.
CREATE TABLE IF NOT EXISTS audit_runs (
    id            bigserial   PRIMARY KEY,
    started_at    timestamptz NOT NULL,
    finished_at   timestamptz NOT NULL,
    ok            boolean     NOT NULL,
    events        bigint      NOT NULL,
    head_position bigint      NOT NULL,
    head_hash     text        NOT NULL,   -- hex, '' for an empty store
    report        jsonb       NOT NULL    -- audit.Report
);
CREATE INDEX IF NOT EXISTS audit_runs_finished_at_idx ON audit_runs (finished_at DESC);

-- +goose Down
DROP TABLE IF EXISTS audit_runs;
DROP INDEX CONCURRENTLY IF EXISTS events_client_position_idx;
