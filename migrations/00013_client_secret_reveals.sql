-- +goose Up

-- The tokens area's reveal trail (docs/keys-and-admin.md#tokens-area).
-- An API key is stored as its SHA-256 and is never shown again; a client's
-- signed-launch secret is sealed (clients.client_secret, migration 00005)
-- because both sides must hold it to sign, so the admin API can open and
-- show it. Each time it does, a row is written here in the same
-- transaction that reads the secret: no reveal without its row.
--
-- actor names the credential ("admin-token:" and a fingerprint of the
-- token: there is one admin token, so it tells tokens apart, not people);
-- remote_addr is the requester's address as the server judged it (trusted
-- proxies considered; '' when unknown); user_agent is cleaned of control
-- characters and cut to 256 characters; reason is the admin's free text
-- (one line, at most 200 characters; '' when none was given).
CREATE TABLE client_secret_reveals (
    id          bigserial   PRIMARY KEY,
    client_id   text        NOT NULL REFERENCES clients (id),
    revealed_at timestamptz NOT NULL,
    actor       text        NOT NULL,
    remote_addr text        NOT NULL DEFAULT '',
    user_agent  text        NOT NULL DEFAULT '',
    reason      text        NOT NULL DEFAULT ''
);
CREATE INDEX client_secret_reveals_client_idx ON client_secret_reveals (client_id, revealed_at DESC, id DESC);

-- The trail is append-only for the application: a row cannot be changed
-- or removed (an owner of the database can still drop the trigger; this
-- keeps mistakes and the application out, not a database administrator).
-- +goose StatementBegin
CREATE FUNCTION client_secret_reveals_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'client_secret_reveals is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER client_secret_reveals_no_update_or_delete
    BEFORE UPDATE OR DELETE ON client_secret_reveals
    FOR EACH ROW EXECUTE FUNCTION client_secret_reveals_append_only();
CREATE TRIGGER client_secret_reveals_no_truncate
    BEFORE TRUNCATE ON client_secret_reveals
    FOR EACH STATEMENT EXECUTE FUNCTION client_secret_reveals_append_only();

-- +goose Down
DROP TABLE client_secret_reveals;
DROP FUNCTION client_secret_reveals_append_only();
