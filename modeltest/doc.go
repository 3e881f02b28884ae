// Package modeltest is the model-based test of the wallet: seeded random
// sequences of deposits, bets, wins, rollbacks, retries and reused ids over
// many players and currencies (EUR, JPY, BTC), sent over HTTP to a real
// `pitboss serve` and applied to a small reference model written
// independently of package domain. Every answer, every balance, the
// transaction history and the GGR report must agree. See
// docs/reliability.md; MODEL_SEED=n replays one sequence.
package modeltest
