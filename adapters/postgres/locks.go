package postgres

// KeyedLockSQL takes a transaction-scoped two-key advisory lock: a class
// ($1, such as deliverystore's queueLockClass or readstore's
// roundLockClass) and the hash of a text key ($2).
const KeyedLockSQL = `SELECT pg_advisory_xact_lock($1, hashtext($2))`
