-- +goose Up

-- A wallet protocol is data (issue 33): providers.wallet_protocol names
-- one of gateway's registered protocols and Go validates it
-- (gateway.CheckWalletProtocol, CheckWalletCredentials) on every write, so
-- adding a protocol touches no migration. The two CHECKs that listed
-- protocol names go.
ALTER TABLE providers DROP CONSTRAINT IF EXISTS providers_wallet_protocol_check;
ALTER TABLE providers DROP CONSTRAINT IF EXISTS providers_caleta_key;
ALTER TABLE providers ADD CONSTRAINT providers_wallet_protocol_named
    CHECK (wallet_protocol <> '' AND length(wallet_protocol) <= 32);

-- A wallet call may name another game of its session's provider by the
-- provider's own code (wallet.Core.Game).
CREATE INDEX IF NOT EXISTS games_provider_code_idx ON games (provider_id, provider_game_code);

-- A bet asks whether a newer session of the same client, player, provider
-- and currency exists (a superseded token takes no new bet:
-- wallet.Core.Bet).
CREATE INDEX IF NOT EXISTS game_sessions_player_provider_idx
    ON game_sessions (client_id, player_id, provider_id, currency, created_at);

-- +goose Down
DROP INDEX IF EXISTS game_sessions_player_provider_idx;
DROP INDEX IF EXISTS games_provider_code_idx;
ALTER TABLE providers DROP CONSTRAINT IF EXISTS providers_wallet_protocol_named;
UPDATE providers SET wallet_protocol = 'pitboss'
    WHERE wallet_protocol NOT IN ('pitboss', 'caleta', 'redtiger', 'evolution');
ALTER TABLE providers ADD CONSTRAINT providers_wallet_protocol_check
    CHECK (wallet_protocol IN ('pitboss', 'caleta', 'redtiger', 'evolution'));
ALTER TABLE providers ADD CONSTRAINT providers_caleta_key
    CHECK (wallet_protocol <> 'caleta' OR wallet_public_key <> '');
