package postgres

// KeyedLockSQL takes a transaction-scoped two-key advisory lock: a class
// ($1, such as the delivery queues' queueLockClass or the read store's
// round lock class) and the hash of a text key ($2).
const KeyedLockSQL = `SELECT pg_advisory_xact_lock($1, hashtext($2))`
