-- +goose Up

-- Signed checkpoints (docs/audit.md, "Signed checkpoints").
--
-- checkpoint_keys holds the Ed25519 signing keys. The private key (its
-- 32-byte seed) is sealed with the server's master key (adapters/secretbox,
-- context "checkpoint_key:" || key_id), never stored in plain text. The key
-- id is the first 8 bytes of SHA-256 of the public key, hex. The active key
-- is the newest row; rotating inserts a new one. Old rows stay so that old
-- checkpoints still verify against a listed public key.
CREATE TABLE checkpoint_keys (
    id                 bigserial   PRIMARY KEY,
    key_id             text        NOT NULL UNIQUE,
    public_key         bytea       NOT NULL CHECK (length(public_key) = 32),
    sealed_private_key bytea       NOT NULL,
    created_at         timestamptz NOT NULL
);

-- One row per checkpoint: the platform's (client_id '') and one per client
-- made in the same run (run_id, the platform checkpoint's id). payload is
-- the exact signed bytes (canonical JSON), signature the Ed25519 signature
-- over them. The other columns repeat what the payload says, for queries.
CREATE TABLE checkpoints (
    id         bigserial   PRIMARY KEY,
    run_id     bigint      NOT NULL,
    client_id  text        NOT NULL,
    position   bigint      NOT NULL,
    chain_hash bytea       NOT NULL,
    signed_at  timestamptz NOT NULL,
    key_id     text        NOT NULL REFERENCES checkpoint_keys (key_id),
    payload    bytea       NOT NULL,
    signature  bytea       NOT NULL CHECK (length(signature) = 64)
);
CREATE INDEX checkpoints_client_idx ON checkpoints (client_id, id);
CREATE INDEX checkpoints_platform_signed_at_idx ON checkpoints (signed_at DESC) WHERE client_id = '';

-- Which checkpoints went out on Kafka (the serve job publishes those
-- without a row here, then adds one: at least once).
CREATE TABLE checkpoint_publications (
    checkpoint_id bigint      PRIMARY KEY REFERENCES checkpoints (id),
    published_at  timestamptz NOT NULL
);

-- Keys and checkpoints are append-only for the application: a row cannot
-- be changed or removed (an owner of the database can still drop the
-- trigger; this keeps mistakes and the application out, not a database
-- administrator, whom the signatures and the published public keys catch).
-- +goose StatementBegin
CREATE FUNCTION checkpoints_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER checkpoint_keys_no_update_or_delete
    BEFORE UPDATE OR DELETE ON checkpoint_keys
    FOR EACH ROW EXECUTE FUNCTION checkpoints_append_only();
CREATE TRIGGER checkpoint_keys_no_truncate
    BEFORE TRUNCATE ON checkpoint_keys
    FOR EACH STATEMENT EXECUTE FUNCTION checkpoints_append_only();
CREATE TRIGGER checkpoints_no_update_or_delete
    BEFORE UPDATE OR DELETE ON checkpoints
    FOR EACH ROW EXECUTE FUNCTION checkpoints_append_only();
CREATE TRIGGER checkpoints_no_truncate
    BEFORE TRUNCATE ON checkpoints
    FOR EACH STATEMENT EXECUTE FUNCTION checkpoints_append_only();

-- +goose Down
DROP TABLE checkpoint_publications;
DROP TABLE checkpoints;
DROP TABLE checkpoint_keys;
DROP FUNCTION checkpoints_append_only();
