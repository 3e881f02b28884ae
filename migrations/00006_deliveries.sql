-- +goose Up

-- Outbound deliveries: forwarded callbacks (to clients.forward_callback_url)
-- and webhooks, fed by the forwarder role from the Kafka ledger topic. See
-- docs/callbacks-and-webhooks.md.

-- The key a client's forwarded callbacks are signed with. secret holds the
-- sealed form (adapters/postgres/deliveries_secrets.go), never the plain key.
CREATE TABLE callback_secrets (
    client_id  text        PRIMARY KEY REFERENCES clients (id),
    secret     bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- A client's webhook endpoints, each subscribed to event kinds ('*' = all).
-- Deleted endpoints are kept (deleted_at) so the delivery log still names them.
CREATE TABLE webhook_endpoints (
    id          text        PRIMARY KEY,
    client_id   text        NOT NULL REFERENCES clients (id),
    url         text        NOT NULL,
    kinds       text[]      NOT NULL,
    description text        NOT NULL DEFAULT '',
    enabled     boolean     NOT NULL DEFAULT true,
    secret      bytea       NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    deleted_at  timestamptz
);
CREATE INDEX webhook_endpoints_client_idx ON webhook_endpoints (client_id, created_at) WHERE deleted_at IS NULL;

-- One row per (event, endpoint): the Kafka consumer inserts it (the unique
-- key makes a redelivered message a no-op) and a delivery worker sends it.
--
-- Deliveries of one endpoint and one ledger stream (a player's wallet) form
-- a queue (queue_key) that is sent strictly in queue_seq order: only the queue's
-- head is 'pending' (due at next_attempt_at); the ones behind it are
-- 'queued'. When the head succeeds or is parked, the next one becomes the
-- head in the same transaction. Writers of a queue serialize on an advisory
-- lock of its key. endpoint_id is 'callback' for the forwarded callback.
-- seq is the order of creation (listing); queue_seq the order in the queue,
-- which a re-send moves to the back.
CREATE SEQUENCE deliveries_seq;
CREATE TABLE deliveries (
    id               text        PRIMARY KEY,
    seq              bigint      NOT NULL DEFAULT nextval('deliveries_seq'),
    queue_seq        bigint      NOT NULL DEFAULT nextval('deliveries_seq'),
    client_id        text        NOT NULL,
    target           text        NOT NULL CHECK (target IN ('callback', 'webhook')),
    endpoint_id      text        NOT NULL,
    queue_key        text        NOT NULL,
    event_id         uuid        NOT NULL,
    event_type       text        NOT NULL,
    kind             text        NOT NULL,
    stream_id        text        NOT NULL,
    stream_version   bigint      NOT NULL,
    position         bigint      NOT NULL,
    payload          json        NOT NULL,   -- the exact bytes sent (json keeps them verbatim)
    state            text        NOT NULL CHECK (state IN ('queued', 'pending', 'succeeded', 'parked')),
    attempts         integer     NOT NULL DEFAULT 0,   -- every attempt ever; numbers the log
    round_attempts   integer     NOT NULL DEFAULT 0,   -- since the last (re)send; drives the schedule
    round_started_at timestamptz,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    last_attempt_at  timestamptz,
    last_status_code integer,
    last_error       text        NOT NULL DEFAULT '',
    delivered_at     timestamptz,
    parked_at        timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT deliveries_event_endpoint_key UNIQUE (event_id, endpoint_id)
);
CREATE INDEX deliveries_due_idx ON deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX deliveries_queue_idx ON deliveries (queue_key, queue_seq) WHERE state IN ('queued', 'pending');
CREATE INDEX deliveries_endpoint_active_idx ON deliveries (endpoint_id) WHERE state IN ('queued', 'pending');
CREATE INDEX deliveries_client_idx ON deliveries (client_id, seq DESC);
CREATE INDEX deliveries_client_state_idx ON deliveries (client_id, state, seq DESC);

-- The delivery log: one row per attempt.
CREATE TABLE delivery_attempts (
    delivery_id      text        NOT NULL REFERENCES deliveries (id),
    attempt          integer     NOT NULL,
    url              text        NOT NULL,
    started_at       timestamptz NOT NULL,
    latency_us       bigint      NOT NULL,
    status_code      integer,               -- NULL: no HTTP response (refused, timeout, network)
    error            text        NOT NULL DEFAULT '',
    response_excerpt text        NOT NULL DEFAULT '',   -- at most 1 KiB of the response body
    PRIMARY KEY (delivery_id, attempt)
);

-- +goose Down
DROP TABLE delivery_attempts;
DROP TABLE deliveries;
DROP SEQUENCE deliveries_seq;
DROP TABLE webhook_endpoints;
DROP TABLE callback_secrets;
