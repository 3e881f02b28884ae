-- +goose Up

-- Deep pages of one type, or of one player, in O(1), with exact totals.
--
-- A filtered history page walks the filter's index with OFFSET and counts
-- its total up to 10,000: at 10 million events page 2,000 of type=bet
-- (100,000 rows deep) took 17–32 ms, and a player's first page spent most
-- of its time counting the player's rows. For a filter of one type alone
-- or one player alone, the numbered rows (those at or below the history
-- watermark, the ones tx_order numbers) are now also counted per client,
-- filter and value (tx_filter_counts), and every 1,024th of them, counted
-- from the oldest in (seq, sub) order, is marked with where it is
-- (tx_filter_marks). A page starts its walk at the nearest mark: at most
-- 1,024 rows plus the page, at any depth, and its total is exact.
CREATE TABLE readmodels.tx_filter_counts (
    client_id text   NOT NULL,
    filter    text   NOT NULL CHECK (filter IN ('type', 'player')),
    value     text   NOT NULL,
    rows      bigint NOT NULL,
    PRIMARY KEY (client_id, filter, value)
);
CREATE TABLE readmodels.tx_filter_marks (
    client_id text     NOT NULL,
    filter    text     NOT NULL CHECK (filter IN ('type', 'player')),
    value     text     NOT NULL,
    rn        bigint   NOT NULL CHECK (rn > 0 AND rn % 1024 = 0),
    seq       bigint   NOT NULL,
    sub       smallint NOT NULL,
    PRIMARY KEY (client_id, filter, value, rn)
);
CREATE TEMPORARY TABLE numbered ON COMMIT DROP AS
SELECT client_id, 'type' AS filter, type AS value, seq, sub FROM readmodels.transactions
WHERE seq <= coalesce((SELECT position FROM readmodels.positions WHERE projection = 'history'), 0)
UNION ALL
SELECT client_id, 'player', player_id, seq, sub FROM readmodels.transactions
WHERE player_id IS NOT NULL
  AND seq <= coalesce((SELECT position FROM readmodels.positions WHERE projection = 'history'), 0);
INSERT INTO readmodels.tx_filter_counts (client_id, filter, value, rows)
SELECT client_id, filter, value, count(*) FROM numbered GROUP BY 1, 2, 3;
INSERT INTO readmodels.tx_filter_marks (client_id, filter, value, rn, seq, sub)
SELECT client_id, filter, value, rn, seq, sub FROM (
    SELECT client_id, filter, value, seq, sub,
           row_number() OVER (PARTITION BY client_id, filter, value ORDER BY seq, sub) AS rn
    FROM numbered) x
WHERE rn % 1024 = 0;
DROP TABLE numbered;

-- +goose Down
DROP TABLE readmodels.tx_filter_marks;
DROP TABLE readmodels.tx_filter_counts;
