-- +goose Up

-- Free-bet campaigns an operator creates (docs/promotions.md): the terms
-- every reward of the campaign grants. Created once under the operator's
-- id (request is the creation's fingerprint: a retry with other terms is a
-- conflict). provider_refs maps each game to the provider's own id of the
-- campaign where its promotion API made one (Caleta's campaign_uuid).
CREATE TABLE campaigns (
    client_id     text        NOT NULL REFERENCES clients (id),
    id            text        NOT NULL,
    name          text        NOT NULL,
    provider_id   text        NOT NULL REFERENCES providers (id),
    game_ids      text[]      NOT NULL CHECK (cardinality(game_ids) BETWEEN 1 AND 50),
    currency      text        NOT NULL,
    bet_value     numeric     NOT NULL CHECK (bet_value > 0),
    free_bets     integer     NOT NULL CHECK (free_bets BETWEEN 1 AND 10000),
    valid_from    timestamptz NOT NULL,
    valid_until   timestamptz NOT NULL,
    provider_refs jsonb       NOT NULL DEFAULT '{}',
    request       jsonb       NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, id),
    CHECK (valid_until > valid_from)
);

-- A reward the provider's own promotion API granted, before (and after)
-- the ledger books it: a retry after a crash between the two books the
-- grant without asking the provider again, and a cancellation names the
-- provider's id of the reward (The Bet Brothers' bonus_id).
CREATE TABLE promo_grants (
    client_id    text        NOT NULL REFERENCES clients (id),
    reward_id    text        NOT NULL,
    campaign_id  text        NOT NULL,
    request      jsonb       NOT NULL,
    provider_ref text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, reward_id),
    FOREIGN KEY (client_id, campaign_id) REFERENCES campaigns (client_id, id)
);

-- The ledger's reward records (tx_records of kind 'reward', key
-- reward|{client}|{reward}): by client and campaign for the listings and
-- the report, by end for the expiry job.
CREATE INDEX tx_records_rewards_idx ON tx_records (split_part(key, '|', 2), (record ->> 'campaign'))
    WHERE kind = 'reward';
CREATE INDEX tx_records_rewards_due_idx ON tx_records ((record ->> 'valid_until'))
    WHERE kind = 'reward' AND record ->> 'state' = 'active';

-- +goose Down
DROP INDEX tx_records_rewards_due_idx;
DROP INDEX tx_records_rewards_idx;
DROP TABLE promo_grants;
DROP TABLE campaigns;
