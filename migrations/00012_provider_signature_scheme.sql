-- +goose Up

-- How a provider signs its wallet calls (docs/provider-wallet.md#authentication):
--   v1  X-Signature = hex HMAC-SHA256 of the raw body alone (legacy: it
--       binds neither the endpoint nor a time)
--   v2  X-Signature = t=<unix seconds>,v2=<hex HMAC-SHA256 of
--       "<t>.<METHOD>.<path>.<raw body>">, t within ±120 s
-- Every provider that exists now stays on v1, so no provider's calls start
-- failing with the upgrade; a provider is moved with
-- `pitboss provider set --id ID --signature-scheme v2`. A provider created
-- from now on is on v2 unless created with v1.
ALTER TABLE providers
    ADD COLUMN signature_scheme text NOT NULL DEFAULT 'v1'
        CHECK (signature_scheme IN ('v1', 'v2'));
ALTER TABLE providers
    ALTER COLUMN signature_scheme SET DEFAULT 'v2';

-- +goose Down
ALTER TABLE providers
    DROP COLUMN signature_scheme;
