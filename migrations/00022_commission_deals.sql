-- +goose Up

-- Commission deals as data (docs/read-models.md "Commission", docs/finance.md).
-- Each row is one version of a deal, and the table is the deals' history:
-- a deal is never changed in place. A deal is (provider, client_id,
-- currency): client_id '' is the provider's default for every client,
-- currency '' every currency. A version applies from valid_from (a UTC day)
-- until a later version of the same deal; of two versions with the same
-- valid_from the later created (the higher id) wins.
--
-- kind 'flat' has rate; kind 'tiered' has mode ('marginal' or 'whole') and
-- bands, a JSON array of {"from", "to", "rate"} (amounts in major units of
-- the deal's currency as decimal text, the last band without "to"), checked
-- by the application (domain.NewDeal). carry_forward carries a month's
-- negative GGR into the next months' commission base.
--
-- actor names who created the version (the admin token's fingerprint, as
-- the reveal trail of 00013 does; "migration:00022" for rates moved from
-- commission_rates); backdated says the version was allowed to start
-- before the day it was created (a request must say so); note is the
-- admin's free text.
CREATE TABLE commission_deals (
    id            bigserial    PRIMARY KEY,
    provider      text         NOT NULL,
    client_id     text         NOT NULL DEFAULT '',
    currency      text         NOT NULL DEFAULT '',
    valid_from    date         NOT NULL,
    kind          text         NOT NULL CHECK (kind IN ('flat', 'tiered')),
    rate          numeric(9,6) CHECK (rate >= 0 AND rate <= 1),
    mode          text         NOT NULL DEFAULT '' CHECK (mode IN ('', 'marginal', 'whole')),
    bands         jsonb        NOT NULL DEFAULT '[]',
    carry_forward boolean      NOT NULL DEFAULT false,
    created_at    timestamptz  NOT NULL DEFAULT now(),
    actor         text         NOT NULL,
    backdated     boolean      NOT NULL DEFAULT false,
    note          text         NOT NULL DEFAULT '',
    CHECK ((kind = 'flat') = (rate IS NOT NULL)),
    CHECK ((kind = 'tiered') = (mode <> '' AND currency <> ''))
);
-- The report's question: the deals of a client and the defaults.
CREATE INDEX commission_deals_client_idx ON commission_deals (client_id, provider, valid_from);

-- Append-only for the application, as client_secret_reveals (00013).
-- +goose StatementBegin
CREATE FUNCTION commission_deals_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'commission_deals is append-only: % refused (add a version instead)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER commission_deals_no_update_or_delete
    BEFORE UPDATE OR DELETE ON commission_deals
    FOR EACH ROW EXECUTE FUNCTION commission_deals_append_only();
CREATE TRIGGER commission_deals_no_truncate
    BEFORE TRUNCATE ON commission_deals
    FOR EACH STATEMENT EXECUTE FUNCTION commission_deals_append_only();

-- The flat rates set so far become flat deals, in the order they were
-- made; each keeps its day and its creation time.
INSERT INTO commission_deals (provider, client_id, valid_from, kind, rate, created_at, actor, backdated, note)
SELECT provider, coalesce(client_id, ''), valid_from, 'flat', rate, created_at, 'migration:00022', false,
       'moved from commission_rates'
FROM commission_rates ORDER BY id;
DROP TABLE commission_rates;

-- +goose Down
CREATE TABLE commission_rates (
    id         bigserial    PRIMARY KEY,
    provider   text         NOT NULL,
    client_id  text,
    rate       numeric(9,6) NOT NULL CHECK (rate >= 0 AND rate <= 1),
    valid_from date         NOT NULL,
    created_at timestamptz  NOT NULL DEFAULT now(),
    CONSTRAINT commission_rates_deal_key UNIQUE NULLS NOT DISTINCT (provider, client_id, valid_from)
);
-- Only flat deals for every currency without carry-forward fit the old
-- table; of one day's versions the last one.
INSERT INTO commission_rates (provider, client_id, rate, valid_from, created_at)
SELECT DISTINCT ON (provider, client_id, valid_from) provider, nullif(client_id, ''), rate, valid_from, created_at
FROM commission_deals WHERE kind = 'flat' AND currency = '' AND NOT carry_forward
ORDER BY provider, client_id, valid_from, id DESC;
DROP TABLE commission_deals;
DROP FUNCTION commission_deals_append_only();
