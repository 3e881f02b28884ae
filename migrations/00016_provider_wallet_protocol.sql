-- +goose Up

-- Which wallet protocol a provider's game servers call us in
-- (docs/providers-and-games.md#wallet-protocols):
--   pitboss  our own /provider/v1/wallet (docs/provider-wallet.md), signed
--            by signature_scheme with the provider secret
--   caleta   the Caleta Gaming System API 1.5 wallet under
--            /provider/caleta/{provider}/wallet (docs/protocols/caleta.md),
--            each request signed RSA-SHA256 with the provider's private key
-- A provider speaks one: the routes of the other protocol refuse it.
-- wallet_public_key is the provider's RSA public key (PEM) that verifies
-- its requests: public, so stored in the clear. Every provider that exists
-- now stays on pitboss; a provider is moved with
-- `pitboss provider set --id ID --wallet-protocol caleta --wallet-public-key-file key.pem`.
ALTER TABLE providers
    ADD COLUMN wallet_protocol text NOT NULL DEFAULT 'pitboss'
        CHECK (wallet_protocol IN ('pitboss', 'caleta')),
    ADD COLUMN wallet_public_key text NOT NULL DEFAULT '';
-- A caleta provider without a key could not be verified: refuse it here too.
ALTER TABLE providers
    ADD CONSTRAINT providers_caleta_key CHECK (wallet_protocol <> 'caleta' OR wallet_public_key <> '');

-- +goose Down
ALTER TABLE providers
    DROP CONSTRAINT providers_caleta_key;
ALTER TABLE providers
    DROP COLUMN wallet_public_key,
    DROP COLUMN wallet_protocol;
