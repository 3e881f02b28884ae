-- +goose Up

-- Key management and usage monitoring. See docs/keys-and-admin.md.
--
-- A key's prefix ("pb_test_<id>" / "pb_live_<id>") is not stored: it is
-- derived from its id and environment. last_used_at is approximate: the
-- API processes count requests in memory and write it when they flush
-- usage (every PITBOSS_USAGE_FLUSH_INTERVAL). replaced_by names the key a
-- rotation issued in this key's place; the old key keeps working until its
-- expires_at (the grace period).
ALTER TABLE api_keys
    ADD COLUMN label        text        NOT NULL DEFAULT '',
    ADD COLUMN last_used_at timestamptz,
    ADD COLUMN replaced_by  text        REFERENCES api_keys (id);

-- Requests per client, key, minute and status class (2 = 2xx ... 5 = 5xx).
-- Rows are only ever added to (flushes of several processes add up), so a
-- minute's count is the sum over every API process.
CREATE TABLE api_usage (
    client_id    text        NOT NULL,
    minute       timestamptz NOT NULL,
    key_id       text        NOT NULL,
    status_class smallint    NOT NULL CHECK (status_class BETWEEN 1 AND 5),
    requests     bigint      NOT NULL CHECK (requests >= 0),
    PRIMARY KEY (client_id, minute, key_id, status_class)
);

-- The shared rate-limit window of each key, used only when
-- PITBOSS_RATE_LIMIT_STORE=postgres (the default counts in each API
-- process's memory). UNLOGGED: no WAL and no fsync per request; after a
-- crash the table is empty, which only forgives the current window.
CREATE UNLOGGED TABLE rate_limit_windows (
    key_id    text        PRIMARY KEY,
    resets_at timestamptz NOT NULL,
    count     integer     NOT NULL
);

-- +goose Down
DROP TABLE rate_limit_windows;
DROP TABLE api_usage;
ALTER TABLE api_keys
    DROP COLUMN replaced_by,
    DROP COLUMN last_used_at,
    DROP COLUMN label;
