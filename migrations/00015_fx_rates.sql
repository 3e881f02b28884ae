-- +goose Up

-- Exchange rates as data (docs/reporting-currency.md): on the UTC day
-- `day`, 1 `base` is `rate` `quote`. Set through the admin API
-- (PUT /admin/v1/fx-rates, JSON or CSV); a rate set again for the same pair
-- and day replaces the old one (a correction), and updated_at says when.
-- A GGR report in a reporting currency converts each day at that day's
-- rate; a day without one is a gap in the report, never a zero.
CREATE TABLE fx_rates (
    base       text        NOT NULL,
    quote      text        NOT NULL,
    day        date        NOT NULL,
    rate       numeric     NOT NULL CHECK (rate > 0),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (base, quote, day),
    CHECK (base <> quote)
);
-- The report's question: every rate to (or from) one currency over days.
CREATE INDEX fx_rates_quote_idx ON fx_rates (quote, day);

-- +goose Down
DROP TABLE fx_rates;
