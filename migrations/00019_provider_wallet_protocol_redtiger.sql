-- +goose Up

-- The Red Tiger wallet protocol (docs/protocols/redtiger.md): a provider on
-- `redtiger` is called under /provider/redtiger/{provider}/wallet and
-- authenticated by its API key, which is the provider's existing secret
-- (sealed at rest like every provider secret): no new column.
-- Only the list of protocols the column accepts grows.
-- NOTE for merging: any other migration that widens this list must name
-- every protocol, this one's included.
ALTER TABLE providers DROP CONSTRAINT providers_wallet_protocol_check;
ALTER TABLE providers ADD CONSTRAINT providers_wallet_protocol_check
    CHECK (wallet_protocol IN ('pitboss', 'caleta', 'redtiger'));

-- +goose Down
-- A provider on redtiger goes back to our own protocol (its secret still
-- signs it) before the list shrinks.
UPDATE providers SET wallet_protocol = 'pitboss' WHERE wallet_protocol = 'redtiger';
ALTER TABLE providers DROP CONSTRAINT providers_wallet_protocol_check;
ALTER TABLE providers ADD CONSTRAINT providers_wallet_protocol_check
    CHECK (wallet_protocol IN ('pitboss', 'caleta'));
