-- +goose Up

-- Signed-query launch (GET /v1/launch) settings per client. See
-- docs/signed-launch.md.
--
-- client_secret is the client's HMAC key sealed with the server master key
-- (AES-256-GCM, adapters/secretbox): we must be able to compute the HMAC,
-- so it cannot be a one-way hash, but it is never stored in plain text.
-- require_signature NULL means "the environment's default": required in
-- production, optional in the sandbox. An empty ip_allow_list means every
-- address is allowed; an empty allowed_return_hosts means no return_url is
-- accepted (players get the default game-closed page).
ALTER TABLE clients
    ADD COLUMN client_secret        bytea,
    ADD COLUMN require_signature    boolean,
    ADD COLUMN ip_allow_list        cidr[] NOT NULL DEFAULT '{}',
    ADD COLUMN allowed_return_hosts text[] NOT NULL DEFAULT '{}',
    ADD COLUMN default_currency     text   NOT NULL DEFAULT '';

-- Provider secrets move to the same sealed form. secret (plain text) stays
-- readable for rows written before this migration or by a server without a
-- master key; a server with a key writes secret_sealed and blanks secret.
ALTER TABLE providers
    ADD COLUMN secret_sealed bytea;

-- +goose Down
ALTER TABLE providers
    DROP COLUMN secret_sealed;
ALTER TABLE clients
    DROP COLUMN default_currency,
    DROP COLUMN allowed_return_hosts,
    DROP COLUMN ip_allow_list,
    DROP COLUMN require_signature,
    DROP COLUMN client_secret;
