-- +goose Up

-- The ledger writer sends a batch's statements in one round trip, ending
-- in COMMIT, so a statement that changed fewer rows than it should must
-- fail the transaction by itself: the writer reads the row counts only
-- after the commit. It raises SQLSTATE PB002; the writer then decides the
-- batch again from the store (adapters/postgres/eventstore). Used by the
-- update of idempotency records the writer's cache holds: a record gone
-- from the table (deleted outside the ledger) must not be skipped.
-- +goose StatementBegin
CREATE FUNCTION ledger_expect_rows(what text, actual bigint, expected bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF actual <> expected THEN
        RAISE EXCEPTION 'ledger %: % rows, expected %', what, actual, expected
            USING ERRCODE = 'PB002';
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION ledger_expect_rows(text, bigint, bigint);
