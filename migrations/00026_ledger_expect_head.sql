-- +goose Up

-- The ledger writer decides a batch from what it knows the ledger holds
-- (the accounts and idempotency records it read under the lock or wrote
-- itself), valid while the chain head is where it last saw it. It sends the
-- batch in one round trip — lock, this check, the events, the state,
-- commit — so the check must fail the transaction by itself: if another
-- writer appended meanwhile, it raises SQLSTATE PB001 and the writer
-- decides the batch again from the store (adapters/postgres/eventstore).
-- +goose StatementBegin
CREATE FUNCTION ledger_expect_head(expected_position bigint, expected_hash bytea) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    p bigint;
    h bytea;
BEGIN
    SELECT position, hash INTO p, h FROM events ORDER BY position DESC LIMIT 1;
    IF NOT FOUND THEN
        p := 0;
        h := expected_hash; -- an empty ledger: only the position says anything
    END IF;
    IF p <> expected_position OR h <> expected_hash THEN
        RAISE EXCEPTION 'ledger head is at position %, the writer expected %', p, expected_position
            USING ERRCODE = 'PB001';
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION ledger_expect_head(bigint, bytea);
