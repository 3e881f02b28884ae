-- +goose Up

-- The launch side of the caleta, evolution and redtiger protocols
-- (docs/providers-and-games.md, docs/protocols/*.md#launch).
--   kind                  gains 'caleta' (Caleta's Games API /api/game/url,
--                         signed by us), 'evolution' (Evolution's user
--                         authentication /ua/v1/...) and 'redtiger' (Red
--                         Tiger's game address, built without a call)
--   launch_operator_id    who we are at the provider: Caleta's operator_id,
--                         Evolution's casino key, Red Tiger's casino
--   launch_country        ISO 3166-1 alpha-2, the country the launch names
--                         (Caleta and Evolution require one)
--   launch_secret_sealed  our own credential at the provider, sealed with the
--                         master key like every secret (AES-256-GCM, bound
--                         to the provider id): our RSA private key (PEM) that
--                         signs Caleta launches, or Evolution's casino token.
--                         Never stored in the clear; NULL when none is set.
--   launch_key_fingerprint what lists show instead: the hex SHA-256 of the
--                         DER of the private key's public half, 'set' for a
--                         token, '' for none
-- Existing providers keep their kind and get no credentials.
ALTER TABLE providers
    DROP CONSTRAINT providers_kind_check;
ALTER TABLE providers
    ADD CONSTRAINT providers_kind_check
        CHECK (kind IN ('demo', 'json', 'form-xml', 'caleta', 'evolution', 'redtiger')),
    ADD COLUMN launch_operator_id     text  NOT NULL DEFAULT ''
        CHECK (length(launch_operator_id) <= 128),
    ADD COLUMN launch_country         text  NOT NULL DEFAULT ''
        CHECK (launch_country = '' OR launch_country ~ '^[A-Z]{2}$'),
    ADD COLUMN launch_secret_sealed   bytea,
    ADD COLUMN launch_key_fingerprint text  NOT NULL DEFAULT '';

-- +goose Down
-- Providers of the new kinds cannot stay on kinds the older schema does not
-- know: they go back to demo, the kind every provider had before 00007.
UPDATE providers SET kind = 'demo' WHERE kind IN ('caleta', 'evolution', 'redtiger');
ALTER TABLE providers
    DROP COLUMN launch_key_fingerprint,
    DROP COLUMN launch_secret_sealed,
    DROP COLUMN launch_country,
    DROP COLUMN launch_operator_id;
ALTER TABLE providers
    DROP CONSTRAINT providers_kind_check;
ALTER TABLE providers
    ADD CONSTRAINT providers_kind_check CHECK (kind IN ('demo', 'json', 'form-xml'));
