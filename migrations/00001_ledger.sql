-- +goose Up

-- The event store: the source of truth. Positions are allocated by the
-- writer while it holds a transaction-scoped advisory lock, so positions
-- appear in commit order and the hash chain is global. tx_id records the
-- writing transaction so the relay can read gap-safely even if a writer ever
-- bypassed that lock (see adapters/postgres/relay.go).
CREATE TABLE events (
    position       bigint      PRIMARY KEY,
    event_id       uuid        NOT NULL UNIQUE,
    stream_id      text        NOT NULL,
    stream_version bigint      NOT NULL CHECK (stream_version > 0),
    event_type     text        NOT NULL,
    occurred_at    timestamptz NOT NULL,
    body           json        NOT NULL,   -- canonical bytes, kept verbatim: the hash covers them
    prev_hash      bytea       NOT NULL,
    hash           bytea       NOT NULL,
    tx_id          xid8        NOT NULL DEFAULT pg_current_xact_id(),
    recorded_at    timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT events_stream_version_key UNIQUE (stream_id, stream_version)
);
CREATE INDEX events_tx_id_position_idx ON events (tx_id, position);
CREATE INDEX events_occurred_at_idx ON events (occurred_at);

-- Current state of every account, written in the same transaction as the
-- events that change it, so commands never replay streams.
CREATE TABLE accounts (
    account_id    text        PRIMARY KEY,
    kind          text        NOT NULL,
    currency      text        NOT NULL,
    balance       bigint      NOT NULL,
    version       bigint      NOT NULL,
    last_position bigint      NOT NULL,
    updated_at    timestamptz NOT NULL DEFAULT now(),
    -- the account id without its currency: "player:acme:p-17:" lists a
    -- player's wallets in every currency.
    owner         text        GENERATED ALWAYS AS (left(account_id, length(account_id) - length(currency))) STORED,
    CONSTRAINT accounts_no_overdraft CHECK (kind IN ('house', 'external') OR balance >= 0)
);

CREATE INDEX accounts_owner_idx ON accounts (owner);

-- One row per external transaction id (and per round): idempotency, the
-- original answer for retries, and rollback state. The primary key is what
-- makes an external id single-use.
CREATE TABLE tx_records (
    key        text        PRIMARY KEY,
    kind       text        NOT NULL,
    record     jsonb       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- Where each relay got to: (tx_id, position) of the last published event.
CREATE TABLE relay_checkpoints (
    name       text        PRIMARY KEY,
    tx_id      xid8        NOT NULL,
    position   bigint      NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE relay_checkpoints;
DROP TABLE tx_records;
DROP TABLE accounts;
DROP TABLE events;
