-- +goose Up

-- Statements (docs/statements.md): a closed period (a month or a day) of a
-- client's play at one provider. payload is the exact signed bytes
-- (canonical JSON, package statement), signature the Ed25519 signature over
-- them with the checkpoint key key_id. The other columns repeat what the
-- payload says, for queries. Periods of one client and provider never
-- overlap and close in order (the store checks both under a lock).
CREATE TABLE statements (
    id          uuid        PRIMARY KEY,
    client_id   text        NOT NULL,
    provider    text        NOT NULL,
    period      text        NOT NULL CHECK (period IN ('month', 'day')),
    period_from date        NOT NULL,
    period_to   date        NOT NULL CHECK (period_to >= period_from),
    closed_at   timestamptz NOT NULL,
    key_id      text        NOT NULL REFERENCES checkpoint_keys (key_id),
    payload     bytea       NOT NULL,
    signature   bytea       NOT NULL CHECK (length(signature) = 64),
    UNIQUE (client_id, provider, period_from)
);
CREATE INDEX statements_client_closed_idx ON statements (client_id, closed_at DESC, id);

-- Append-only for the application, like the checkpoints (00014).
CREATE TRIGGER statements_no_update_or_delete
    BEFORE UPDATE OR DELETE ON statements
    FOR EACH ROW EXECUTE FUNCTION checkpoints_append_only();
CREATE TRIGGER statements_no_truncate
    BEFORE TRUNCATE ON statements
    FOR EACH STATEMENT EXECUTE FUNCTION checkpoints_append_only();

-- +goose Down
DROP TABLE statements;
