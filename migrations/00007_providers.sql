-- +goose Up

-- How launches reach a provider (docs/providers-and-games.md).
--
-- kind names the adapter that speaks the provider's launch protocol:
--   demo      the built-in demo game; no outbound call, the game page is ours
--   json      POST {endpoint}/session with a JSON body, answers {"launchUrl"}
--   form-xml  POST {endpoint}/launch form-encoded, answers an XML document
-- endpoints are the provider's base URLs in order of preference; a launch
-- tries the next one when a call fails or times out, and each endpoint has
-- its own circuit breaker (per API process, in memory). balancing
-- 'priority' always starts at the first endpoint, 'round_robin' spreads
-- launches over all of them. timeout_ms bounds one call to one endpoint.
-- breaker_failures consecutive failures open an endpoint's breaker for
-- breaker_open_ms; then one probe call is let through (half-open).
-- The existing columns (id, name, secret, secret_sealed, enabled) are not
-- touched; every existing provider becomes a demo provider, which is what
-- launches did before this migration.
ALTER TABLE providers
    ADD COLUMN kind             text    NOT NULL DEFAULT 'demo'
        CHECK (kind IN ('demo', 'json', 'form-xml')),
    ADD COLUMN endpoints        text[]  NOT NULL DEFAULT '{}'
        CHECK (cardinality(endpoints) <= 8),
    ADD COLUMN balancing        text    NOT NULL DEFAULT 'priority'
        CHECK (balancing IN ('priority', 'round_robin')),
    ADD COLUMN timeout_ms       integer NOT NULL DEFAULT 3000
        CHECK (timeout_ms BETWEEN 50 AND 30000),
    ADD COLUMN breaker_failures integer NOT NULL DEFAULT 3
        CHECK (breaker_failures BETWEEN 1 AND 100),
    ADD COLUMN breaker_open_ms  integer NOT NULL DEFAULT 30000
        CHECK (breaker_open_ms BETWEEN 100 AND 3600000);

-- The provider's own code of a game, sent in its launch request; empty
-- means the provider knows the game by our id.
ALTER TABLE games
    ADD COLUMN provider_game_code text NOT NULL DEFAULT '';

-- GET /api/v1/games lists enabled games by name, optionally of one
-- provider or category.
CREATE INDEX games_listing_idx ON games (lower(name), id) WHERE enabled;
CREATE INDEX games_category_idx ON games (lower(category)) WHERE enabled;

-- +goose Down
DROP INDEX games_category_idx;
DROP INDEX games_listing_idx;
ALTER TABLE games
    DROP COLUMN provider_game_code;
ALTER TABLE providers
    DROP COLUMN breaker_open_ms,
    DROP COLUMN breaker_failures,
    DROP COLUMN timeout_ms,
    DROP COLUMN balancing,
    DROP COLUMN endpoints,
    DROP COLUMN kind;
