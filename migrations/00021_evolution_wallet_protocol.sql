-- +goose Up

-- The evolution wallet protocol (docs/protocols/evolution.md): Evolution's
-- One Wallet under /provider/evolution/{provider}/wallet. Its calls carry
-- the provider's shared secret (providers.secret, sealed at rest like every
-- provider secret) as the authToken query parameter, so it needs no column
-- of its own: only the list of protocols grows. A provider is moved with
-- `pitboss provider set --id ID --wallet-protocol evolution`.
-- NOTE for merging: any other migration that widens this list must name
-- every protocol, this one's included.
ALTER TABLE providers
    DROP CONSTRAINT providers_wallet_protocol_check;
ALTER TABLE providers
    ADD CONSTRAINT providers_wallet_protocol_check
        CHECK (wallet_protocol IN ('pitboss', 'caleta', 'redtiger', 'evolution'));

-- +goose Down
-- An evolution provider cannot stay on a protocol the older schema does
-- not know: it goes back to ours.
UPDATE providers SET wallet_protocol = 'pitboss' WHERE wallet_protocol = 'evolution';
ALTER TABLE providers
    DROP CONSTRAINT providers_wallet_protocol_check;
ALTER TABLE providers
    ADD CONSTRAINT providers_wallet_protocol_check
        CHECK (wallet_protocol IN ('pitboss', 'caleta', 'redtiger'));
