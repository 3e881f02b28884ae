// Package operatorwallet speaks to a seamless client's own wallet (its
// player account management system, PAM): the far side of
// wallet.OperatorWallet, which decides every bet, win and rollback of that
// client's players. New picks the client of the operator's protocol:
//
//   - "valkyrie-pam": the Valkyrie PAM API 0.6.0 (pam.go). GET
//     /players/session, GET /players/{id}/balance, GET and POST
//     /players/{id}/transactions, authenticated with the operator's bearer
//     API token, the player's session token in X-Player-Token and a
//     correlation id in X-Correlation-ID. Amounts are JSON numbers written
//     from the amount's exact decimal text (never a float) and read back
//     into the currency's minor units; the document carries at most six
//     decimals and three-letter currency codes, so a more precise amount or
//     another code is refused before anything is sent. Our own description
//     of the part we call is testdata/valkyrie-pam-0.6.0.yaml; the tests
//     validate every request against it.
//   - "tbb": The Bet Brothers' operator Wallet API (tbb.go). One POST
//     endpoint, the operator's WALLET_ENDPOINT, whose body's "action" says
//     the call (balance, bet, win, refund, rollback-win), signed in
//     X-REQUEST-SIGN (hex HMAC-SHA256 of the raw body keyed with the shared
//     secret); amounts are integers in minor units. It has no session call
//     (wallet.ErrNoSessionCall) and no transaction lookup
//     (wallet.ErrNoLookup).
//
// The movements map as follows:
//
//	wallet       valkyrie-pam                       tbb
//	Debit        WITHDRAW (PROMOWITHDRAW)           bet (promo: refused)
//	Credit       DEPOSIT (PROMODEPOSIT)             win
//	Cancel       CANCEL (PROMOCANCEL)               refund (promo: refused)
//	Reverse      refused: NotRollbackable           rollback-win
//
// Every answer is one of the port's three: the operator's yes (its
// transaction id and the balance after), its no (a *wallet.OperatorRefusal:
// the protocol's error code mapped to a verdict by one table per protocol,
// pamCodes and tbbCodes), or an error wrapping wallet.ErrOutcomeUnknown:
// a timeout, a reset, a refused connection, a 5xx, an answer that cannot
// be read, or an error code by which the operator did not say no for good
// (PAM_ERR_TIMEOUT, PAM_ERR_UNDEFINED, tbb's 500/503/504, any code the
// documents do not list). A read (Session, Balance) whose answer cannot be
// read fails with ErrUnreadableAnswer alone: nothing can have moved, so
// its outcome is not in doubt.
package operatorwallet
