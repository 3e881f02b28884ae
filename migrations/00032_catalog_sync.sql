-- +goose Up

-- Catalog sync (docs/providers-and-games.md#catalog-sync): `pitboss
-- catalog sync` and the periodic job read a provider's game list (Caleta's
-- /api/game/list) and add, update and disable our games from it.
--   blocked_countries  ISO 3166-1 alpha-2 codes, upper case, sorted, no
--                      duplicates: a launch that names one of them as the
--                      player's country is refused (403
--                      GAME_BLOCKED_IN_COUNTRY). Empty: blocked nowhere.
--   sync_disabled      the sync disabled the game (it left the provider's
--                      list, or the list marks it disabled). Only such a
--                      game is enabled again by a later sync; a game an
--                      operator disabled (`pitboss game set --disabled`)
--                      stays disabled whatever the list says.
--   synced_at          when a sync last wrote the game; NULL for a game
--                      no sync has touched.
-- A sync never deletes a game.
ALTER TABLE games
    ADD COLUMN blocked_countries text[]      NOT NULL DEFAULT '{}',
    ADD COLUMN sync_disabled     boolean     NOT NULL DEFAULT false,
    ADD COLUMN synced_at         timestamptz,
    ADD CONSTRAINT games_blocked_countries_codes CHECK (
        cardinality(blocked_countries) <= 300
        AND array_position(blocked_countries, NULL) IS NULL
        AND array_to_string(blocked_countries, ',') ~ '^([A-Z]{2}(,[A-Z]{2})*)?$');

-- +goose Down
ALTER TABLE games
    DROP CONSTRAINT games_blocked_countries_codes,
    DROP COLUMN synced_at,
    DROP COLUMN sync_disabled,
    DROP COLUMN blocked_countries;
