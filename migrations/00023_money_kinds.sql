-- +goose Up

-- Money kinds (docs/finance.md): a win's jackpot part is jackpot money,
-- booked apart from game and promo wins, and a free bet's campaign and
-- reward ids are kept with its history rows. The columns start empty:
-- no event before this migration carries a jackpot part or free-bet ids,
-- so the read models need no backfill (a `pitboss replay` fills them the
-- same way).
--
-- transactions.jackpot: the jackpot part of a win (minor units, within
-- amount), and on a reversal's rollback row the part it took back.
ALTER TABLE readmodels.transactions
    ADD COLUMN jackpot     bigint NOT NULL DEFAULT 0,
    ADD COLUMN campaign_id text,
    ADD COLUMN reward_id   text;

-- ggr_daily: the jackpot parts of the day's wins, and of the wins
-- reversed on the day (against the day and game of the reversal's rules,
-- as for every other reversal). wins and promo_wins hold the rest.
ALTER TABLE readmodels.ggr_daily
    ADD COLUMN jackpot_wins          bigint NOT NULL DEFAULT 0,
    ADD COLUMN jackpot_win_reversals bigint NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE readmodels.ggr_daily
    DROP COLUMN jackpot_win_reversals,
    DROP COLUMN jackpot_wins;
ALTER TABLE readmodels.transactions
    DROP COLUMN reward_id,
    DROP COLUMN campaign_id,
    DROP COLUMN jackpot;
