-- +goose Up

-- Round closing and bet outcomes (issue 16; docs/read-models.md,
-- docs/protocols/caleta.md).
--
-- The stale-round job finds the rounds still open (a bet standing, no call
-- closed it) of the providers whose wallet protocol closes them after a
-- limit. Open rounds are few beside closed ones for a protocol that closes
-- its rounds, so a partial index of them by provider (the key's third part,
-- domain.RoundKey) keeps that search small. The predicate is the job's
-- (adapters/postgres/eventstore/rounds.go): keep them the same.
CREATE INDEX tx_records_open_rounds_idx ON tx_records (split_part(key, '|', 3))
    WHERE kind = 'round' AND NOT coalesce((record->>'closed')::boolean, false)
      AND coalesce((record->>'open_bets')::bigint, 0) > 0;

-- The history gains the ledger's close of a stale round (type round_close,
-- wallet.round_closed.v1) and the status discarded: a rollback that found
-- nothing to undo (wallet.rollback_recorded.v1) says the transaction it
-- names was discarded, never booked. Those rows said "failed" before;
-- "failed" stays allowed so a read model not yet rebuilt keeps working.
ALTER TABLE readmodels.transactions DROP CONSTRAINT transactions_type_check;
ALTER TABLE readmodels.transactions ADD CONSTRAINT transactions_type_check
    CHECK (type IN ('bet', 'win', 'rollback', 'deposit', 'withdrawal', 'transfer', 'adjustment',
                    'balance_sync', 'launch', 'game_result', 'round_close'));
ALTER TABLE readmodels.transactions DROP CONSTRAINT transactions_base_status_check;
ALTER TABLE readmodels.transactions ADD CONSTRAINT transactions_base_status_check
    CHECK (base_status IN ('pending', 'settled', 'rolled_back', 'failed', 'discarded'));
UPDATE readmodels.transactions SET base_status = 'discarded' WHERE type = 'rollback' AND base_status = 'failed';

-- +goose Down
UPDATE readmodels.transactions SET base_status = 'failed' WHERE type = 'rollback' AND base_status = 'discarded';
-- The history then lacks the round_close rows: run `pitboss replay --swap`.
DELETE FROM readmodels.transactions WHERE type = 'round_close';
ALTER TABLE readmodels.transactions DROP CONSTRAINT transactions_base_status_check;
ALTER TABLE readmodels.transactions ADD CONSTRAINT transactions_base_status_check
    CHECK (base_status IN ('pending', 'settled', 'rolled_back', 'failed'));
ALTER TABLE readmodels.transactions DROP CONSTRAINT transactions_type_check;
ALTER TABLE readmodels.transactions ADD CONSTRAINT transactions_type_check
    CHECK (type IN ('bet', 'win', 'rollback', 'deposit', 'withdrawal', 'transfer', 'adjustment',
                    'balance_sync', 'launch', 'game_result'));
DROP INDEX tx_records_open_rounds_idx;
