// Package promo holds free-bet campaigns that operators grant through
// Pitboss: a campaign (provider, games, currency, bet value, free bets per
// reward, validity window) is data; each reward's grant, use, expiry and
// cancellation is a ledger event, decided by domain rules through
// commands. A provider's own promotion API (ProviderPromotions) is asked
// first where its protocol has one. See docs/promotions.md.
package promo
