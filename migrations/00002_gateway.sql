-- +goose Up

-- Operators ("clients") of the gateway.
CREATE TABLE clients (
    id                   text        PRIMARY KEY,
    name                 text        NOT NULL,
    environment          text        NOT NULL CHECK (environment IN ('sandbox', 'production')),
    plan                 text        NOT NULL DEFAULT 'standard',
    forward_callback_url text        NOT NULL DEFAULT '',
    created_at           timestamptz NOT NULL DEFAULT now()
);

-- API keys are stored only as SHA-256 hashes of the full key; the prefix
-- (the part before the secret) identifies a key in logs and listings.
CREATE TABLE api_keys (
    id          text        PRIMARY KEY,
    client_id   text        NOT NULL REFERENCES clients (id),
    key_hash    bytea       NOT NULL UNIQUE,
    environment text        NOT NULL CHECK (environment IN ('sandbox', 'production')),
    scopes      text[]      NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz,
    revoked_at  timestamptz
);
CREATE INDEX api_keys_client_idx ON api_keys (client_id);

-- Game providers and the shared secret they sign wallet calls with.
CREATE TABLE providers (
    id         text        PRIMARY KEY,
    name       text        NOT NULL,
    secret     text        NOT NULL,
    enabled    boolean     NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE games (
    id          text        PRIMARY KEY,
    provider_id text        NOT NULL REFERENCES providers (id),
    name        text        NOT NULL,
    category    text        NOT NULL DEFAULT 'slots',
    enabled     boolean     NOT NULL DEFAULT true,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX games_provider_idx ON games (provider_id);

-- Game sessions opened by a launch: what a provider's wallet call is
-- checked against (whose wallet, which currency, until when bets are taken).
CREATE TABLE game_sessions (
    id             text        PRIMARY KEY,
    client_id      text        NOT NULL REFERENCES clients (id),
    player_id      text        NOT NULL,
    provider_id    text        NOT NULL REFERENCES providers (id),
    game_id        text        NOT NULL,
    currency       text        NOT NULL,
    transaction_id text        NOT NULL,
    return_url     text        NOT NULL DEFAULT '',
    expires_at     timestamptz NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE game_sessions;
DROP TABLE games;
DROP TABLE providers;
DROP TABLE api_keys;
DROP TABLE clients;
