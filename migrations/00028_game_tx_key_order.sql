-- +goose NO TRANSACTION
-- +goose Up

-- The single-use rule of a provider's bet and win ids (00003's
-- transactions_game_tx_idx), with the same columns in another order: the
-- provider's transaction id first. Every query that reads it gives all
-- three columns (a rollback finding the bet or win it undoes, the round
-- export's join), so any order serves them. With client_id first, whose
-- few values every row shares with millions of others, each comparison of
-- a build or an insert went through two equal texts before the one that
-- tells rows apart: at 2M events the index took 5.9 s to build (the swap
-- of `pitboss replay` builds it), 2.3 s in this order
-- (docs/benchmarks.md). CONCURRENTLY (hence NO TRANSACTION): the live
-- projector keeps writing meanwhile.
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS transactions_game_tx_key_idx
    ON readmodels.transactions (external_id, client_id, provider) WHERE type IN ('bet', 'win');
DROP INDEX CONCURRENTLY IF EXISTS readmodels.transactions_game_tx_idx;

-- +goose Down
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS transactions_game_tx_idx
    ON readmodels.transactions (client_id, provider, external_id) WHERE type IN ('bet', 'win');
DROP INDEX CONCURRENTLY IF EXISTS readmodels.transactions_game_tx_key_idx;
