-- +goose Up

-- A client's wallet mode (docs/seamless-wallet.md): 'ledger' (Pitboss
-- holds the players' money, the default) or 'seamless' (the client's own
-- wallet decides every bet and win; the ledger records what it decided).
-- A seamless client names its wallet's address, protocol (validated in Go:
-- gateway.CheckClientWallet) and credential, sealed under the master key.
ALTER TABLE clients
    ADD COLUMN wallet_mode text NOT NULL DEFAULT 'ledger',
    ADD COLUMN operator_wallet_url text NOT NULL DEFAULT '',
    ADD COLUMN operator_wallet_protocol text NOT NULL DEFAULT '',
    ADD COLUMN operator_wallet_operator_id text NOT NULL DEFAULT '',
    ADD COLUMN operator_wallet_credential_sealed bytea,
    ADD CONSTRAINT clients_wallet_mode_check CHECK (wallet_mode IN ('ledger', 'seamless')),
    ADD CONSTRAINT clients_seamless_wallet_named CHECK (
        wallet_mode = 'ledger' OR (operator_wallet_url <> '' AND operator_wallet_protocol <> ''));

-- The operator's own player token a seamless launch carried
-- (session_token): every call to the operator's wallet in the session
-- sends it.
ALTER TABLE game_sessions ADD COLUMN operator_token text NOT NULL DEFAULT '';

-- The follow-ups of unknown outcomes (wallet.FollowUp): a movement sent
-- to a seamless client's wallet whose answer was lost, to be settled there
-- — a bet cancelled, a win or refund re-sent under the same id — until the
-- operator acknowledges it. Rows stay, done, as the record of what was
-- sent.
CREATE TABLE seamless_followups (
    id             bigserial PRIMARY KEY,
    client_id      text NOT NULL,
    -- The movement's own id at the operator (the provider's transaction
    -- id): one follow-up per movement, whatever retries enqueue it.
    move_id        text NOT NULL,
    kind           text NOT NULL,
    payload        jsonb NOT NULL,
    attempts       integer NOT NULL DEFAULT 0,
    next_at        timestamptz NOT NULL,
    last_error     text NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL DEFAULT now(),
    done_at        timestamptz,
    outcome        text NOT NULL DEFAULT '',
    UNIQUE (client_id, kind, move_id)
);
CREATE INDEX seamless_followups_due_idx ON seamless_followups (next_at) WHERE done_at IS NULL;

-- +goose Down
DROP TABLE IF EXISTS seamless_followups;
ALTER TABLE game_sessions DROP COLUMN IF EXISTS operator_token;
ALTER TABLE clients
    DROP CONSTRAINT IF EXISTS clients_seamless_wallet_named,
    DROP CONSTRAINT IF EXISTS clients_wallet_mode_check,
    DROP COLUMN IF EXISTS operator_wallet_credential_sealed,
    DROP COLUMN IF EXISTS operator_wallet_operator_id,
    DROP COLUMN IF EXISTS operator_wallet_protocol,
    DROP COLUMN IF EXISTS operator_wallet_url,
    DROP COLUMN IF EXISTS wallet_mode;
