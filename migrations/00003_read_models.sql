-- +goose Up

-- Read models: projections of the event store, kept by the projector role
-- (one Kafka consumer group per projection) and rebuilt by `pitboss replay`.
-- Everything derived from events lives in the schema "readmodels", so a
-- rebuild can be written into a shadow schema and swapped in atomically
-- (ALTER SCHEMA ... RENAME). Configuration (commission_rates) and the
-- operational log (projection_dead_letters) stay in the default schema: they
-- are not derived from events and survive a swap. docs/read-models.md
-- describes every table.
CREATE SCHEMA readmodels;

-- Per projection and stream: the last stream version applied. Written in the
-- same transaction as the read-model change, so a redelivered event (version
-- at or below) has no second effect and a gap (version above + 1) is seen.
CREATE TABLE readmodels.checkpoints (
    projection text   NOT NULL,
    stream_id  text   NOT NULL,
    version    bigint NOT NULL CHECK (version >= 0),
    position   bigint NOT NULL,
    PRIMARY KEY (projection, stream_id)
);

-- Per projection: its watermark. Every event at or below it is applied, so
-- a read answered from the projection reflects at least this position.
CREATE TABLE readmodels.positions (
    projection text   PRIMARY KEY,
    position   bigint NOT NULL
);
INSERT INTO readmodels.positions (projection, position) VALUES ('history', 0), ('balances', 0);

-- Transaction history: one row per event (money movements, launches) plus
-- one game_result row per (client, provider, round). Amounts are signed
-- minor units from the wallet's point of view (a bet is negative).
-- seq/sub is the row's place in the history: the position of the event that
-- created it (for a game result, the lowest position of its events) and 0
-- for event rows, 1 for game results.
CREATE TABLE readmodels.transactions (
    id            uuid        PRIMARY KEY,
    client_id     text        NOT NULL,
    type          text        NOT NULL CHECK (type IN ('bet', 'win', 'rollback', 'deposit', 'withdrawal',
                                                      'transfer', 'adjustment', 'balance_sync', 'launch', 'game_result')),
    amount        bigint      NOT NULL,
    currency      text        NOT NULL,
    scale         smallint    NOT NULL,
    base_status   text        NOT NULL CHECK (base_status IN ('pending', 'settled', 'rolled_back', 'failed')),
    created_at    timestamptz NOT NULL,
    provider      text,
    game          text,
    player_id     text,
    round_id      text,
    external_id   text,
    reference_id  text,
    seq           bigint      NOT NULL,
    sub           smallint    NOT NULL,
    position      bigint      NOT NULL,
    balance_after bigint,
    promo         boolean     NOT NULL DEFAULT false,
    -- game_result rows only: bets still standing, bets rolled back, wins
    -- credited (net of reversals), and whether the provider closed the round.
    open_bets     bigint      NOT NULL DEFAULT 0,
    rolled_bets   bigint      NOT NULL DEFAULT 0,
    wins          bigint      NOT NULL DEFAULT 0,
    closed        boolean     NOT NULL DEFAULT false,
    -- The one place the status rule of a game result lives.
    status        text        GENERATED ALWAYS AS (
        CASE
            WHEN type <> 'game_result' THEN base_status
            WHEN open_bets = 0 AND rolled_bets > 0 AND wins = 0 THEN 'rolled_back'
            WHEN closed THEN 'settled'
            ELSE 'pending'
        END) STORED
);
CREATE INDEX transactions_client_seq_idx ON readmodels.transactions (client_id, seq DESC, sub DESC);
CREATE INDEX transactions_client_player_seq_idx ON readmodels.transactions (client_id, player_id, seq DESC, sub DESC);
CREATE INDEX transactions_client_type_seq_idx ON readmodels.transactions (client_id, type, seq DESC, sub DESC);
CREATE INDEX transactions_client_created_idx ON readmodels.transactions (client_id, created_at);
CREATE INDEX transactions_seq_idx ON readmodels.transactions (seq);
-- A provider's transaction id is single-use per client (the ledger's
-- idempotency key): rollbacks find the bet or win they undo by it.
CREATE UNIQUE INDEX transactions_game_tx_idx ON readmodels.transactions (client_id, provider, external_id)
    WHERE type IN ('bet', 'win');

-- Dense per-client numbering of the history in (seq, sub) order, for rows at
-- or below the watermark: page N of the unfiltered history is a range of rn,
-- however deep. tx_counts holds each client's numbered rows.
CREATE TABLE readmodels.tx_order (
    client_id text   NOT NULL,
    rn        bigint NOT NULL,
    id        uuid   NOT NULL,
    PRIMARY KEY (client_id, rn)
);
CREATE TABLE readmodels.tx_counts (
    client_id text   PRIMARY KEY,
    rows      bigint NOT NULL
);
-- Per client and UTC day of created_at: the lowest and highest seq of the
-- numbered rows. A time filter becomes a seq range, walked in history order
-- (seq and time go together, but only this makes the bound exact).
CREATE TABLE readmodels.tx_days (
    client_id text   NOT NULL,
    day       date   NOT NULL,
    min_seq   bigint NOT NULL,
    max_seq   bigint NOT NULL,
    PRIMARY KEY (client_id, day)
);

-- Wallet balances (client and player wallets) per currency, and the position
-- of the last event that changed each.
CREATE TABLE readmodels.balances (
    account_id text     PRIMARY KEY,
    kind       text     NOT NULL CHECK (kind IN ('client', 'player')),
    client_id  text     NOT NULL,
    player_id  text,
    currency   text     NOT NULL,
    scale      smallint NOT NULL,
    balance    bigint   NOT NULL,
    position   bigint   NOT NULL
);
CREATE INDEX balances_client_idx ON readmodels.balances (client_id, player_id);

-- GGR per UTC day, client, provider, game and currency. Gross bets and wins,
-- and the rollback adjustments booked on the day of the rollback (a refunded
-- bet reduces bets, a reversed win reduces wins). Promo (free-spin) money is
-- kept apart. game is '' when the events named none.
CREATE TABLE readmodels.ggr_daily (
    client_id           text     NOT NULL,
    day                 date     NOT NULL,
    provider            text     NOT NULL,
    game                text     NOT NULL,
    currency            text     NOT NULL,
    scale               smallint NOT NULL,
    bets                bigint   NOT NULL DEFAULT 0,
    bet_refunds         bigint   NOT NULL DEFAULT 0,
    wins                bigint   NOT NULL DEFAULT 0,
    win_reversals       bigint   NOT NULL DEFAULT 0,
    promo_bets          bigint   NOT NULL DEFAULT 0,
    promo_bet_refunds   bigint   NOT NULL DEFAULT 0,
    promo_wins          bigint   NOT NULL DEFAULT 0,
    promo_win_reversals bigint   NOT NULL DEFAULT 0,
    PRIMARY KEY (client_id, day, provider, game, currency)
);

-- The sets behind the distinct counts: players who bet, and rounds with a
-- bet, per day and group. Counted at query time, so a report grouped by
-- month or provider counts a player once however many days they played.
CREATE TABLE readmodels.ggr_players (
    client_id text NOT NULL,
    day       date NOT NULL,
    provider  text NOT NULL,
    game      text NOT NULL,
    currency  text NOT NULL,
    player_id text NOT NULL,
    PRIMARY KEY (client_id, day, provider, game, currency, player_id)
);
CREATE TABLE readmodels.ggr_rounds (
    client_id text NOT NULL,
    day       date NOT NULL,
    provider  text NOT NULL,
    game      text NOT NULL,
    currency  text NOT NULL,
    round_key text NOT NULL,
    PRIMARY KEY (client_id, day, provider, game, currency, round_key)
);

-- Commission deals: a rate on positive GGR per provider, optionally for one
-- client (client_id NULL is the provider's default). A deal applies from
-- valid_from (a UTC day) until the next one; a client's own deal wins over
-- the default.
CREATE TABLE commission_rates (
    id         bigserial    PRIMARY KEY,
    provider   text         NOT NULL,
    client_id  text,
    rate       numeric(9,6) NOT NULL CHECK (rate >= 0 AND rate <= 1),
    valid_from date         NOT NULL,
    created_at timestamptz  NOT NULL DEFAULT now(),
    CONSTRAINT commission_rates_deal_key UNIQUE NULLS NOT DISTINCT (provider, client_id, valid_from)
);

-- Events a projection could not apply and sent to the dead-letter topic
-- (its checkpoint moved past them, so the stream goes on).
CREATE TABLE projection_dead_letters (
    id             bigserial   PRIMARY KEY,
    projection     text        NOT NULL,
    event_id       text        NOT NULL DEFAULT '',
    stream_id      text        NOT NULL DEFAULT '',
    stream_version bigint      NOT NULL DEFAULT 0,
    position       bigint      NOT NULL DEFAULT 0,
    reason         text        NOT NULL,
    topic          text        NOT NULL DEFAULT '',
    kafka_partition integer    NOT NULL DEFAULT -1,
    kafka_offset   bigint      NOT NULL DEFAULT -1,
    created_at     timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE projection_dead_letters;
DROP TABLE commission_rates;
DROP SCHEMA readmodels CASCADE;
