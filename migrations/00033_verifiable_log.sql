-- +goose Up

-- The verifiable log (docs/audit.md, "The verifiable log"): a Merkle tree
-- over the events beside the hash chain, one for the platform ('platform')
-- and one per client ('client/<id>'), grown by the relay role from
-- committed events (ledgerlog, adapters/postgres/logstore).

-- Each log's tree: its size, root, and the position of the last event in it.
-- The platform row's position is where the builder resumes.
CREATE TABLE log_trees (
    log        text        PRIMARY KEY,
    size       bigint      NOT NULL CHECK (size >= 0),
    root       bytea       NOT NULL,
    position   bigint      NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- The tree as C2SP tiles of height 8: the hashes at tree level 8*level,
-- 256 to a full tile; a partial tile is replaced as it grows.
CREATE TABLE log_tiles (
    log   text   NOT NULL,
    level int    NOT NULL,
    n     bigint NOT NULL,
    data  bytea  NOT NULL,
    PRIMARY KEY (log, level, n)
);

-- Which event each leaf is: the positions of the events of leaves
-- 256*n .. 256*n+255 of a log, in leaf order.
CREATE TABLE log_leaves (
    log            text     NOT NULL,
    n              bigint   NOT NULL,
    first_position bigint   NOT NULL,
    positions      bigint[] NOT NULL,
    PRIMARY KEY (log, n)
);
CREATE INDEX log_leaves_position_idx ON log_leaves (log, first_position);

-- The signed checkpoints of each log (C2SP signed notes), with the
-- witnesses' cosignatures as they arrive.
CREATE TABLE log_checkpoints (
    id         bigserial   PRIMARY KEY,
    log        text        NOT NULL,
    size       bigint      NOT NULL,
    root       bytea       NOT NULL,
    note       text        NOT NULL,
    key_id     text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX log_checkpoints_log_idx ON log_checkpoints (log, size);

-- +goose Down
DROP TABLE log_checkpoints;
DROP TABLE log_leaves;
DROP TABLE log_tiles;
DROP TABLE log_trees;
