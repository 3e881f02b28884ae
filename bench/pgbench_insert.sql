-- One transaction of the baseline: insert one event-shaped row (a bet, with
-- a real body of the usual size, about 640 bytes) and commit. pgbench runs it
-- in autocommit, so each row is its own transaction and its own WAL flush
-- (synchronous_commit is on, as for the ledger). Table: pgbench_schema.sql.
\set player random(1, 3000)
INSERT INTO pgbench_events (position, event_id, stream_id, stream_version, event_type, occurred_at, body, prev_hash, hash)
VALUES (nextval('pgbench_events_position'), gen_random_uuid(),
        'player:sandbox:bench-player-' || :player || ':EUR', nextval('pgbench_events_version'),
        'wallet.bet_placed.v1', now(),
        ('{"position":82,"id":"a73a554d-e9c4-42cb-9c4c-08658ec5dbc6","type":"wallet.bet_placed.v1","stream_id":"player:sandbox:bench-player-' || :player || ':EUR","version":3,"occurred_at":"2026-09-22T22:44:16.151669925Z","data":{"client_id":"sandbox","player_id":"bench-player-' || :player || '","provider":"demo","game_id":"demo-slot","round_id":"bench-r-82","session_id":"sess-44","external_tx_id":"bench-b-82","currency":"EUR","amount":"1.00","balance_after":"99.00","postings":[{"account":"player:sandbox:bench-player-' || :player || ':EUR","amount":"-1.00"},{"account":"house:sandbox:demo:EUR","amount":"1.00"}]},"meta":{"request_id":"bench-82","correlation_id":"bench-82"}}')::json,
        sha256(convert_to(random()::text, 'UTF8')), sha256(convert_to(random()::text, 'UTF8')));
