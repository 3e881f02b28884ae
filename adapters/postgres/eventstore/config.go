package eventstore

import (
	"errors"
	"fmt"
	"time"
)

// DefaultLedgerLockKey is the advisory lock every ledger writer takes for the
// length of its batch transaction ("pitbossL" in ASCII). All processes
// writing one database must use the same key; other advisory locks (the
// relay's leader lock) must use a different one.
const DefaultLedgerLockKey int64 = 0x706974626f73734c

// Ledger configuration defaults.
const (
	DefaultLedgerMaxBatch      = 256
	DefaultLedgerNotifyChannel = "pitboss_events"
	DefaultLedgerBatchTimeout  = 10 * time.Second
	DefaultLedgerCacheSize     = 50_000
	DefaultLedgerInFlight      = 2
)

// ErrLedgerClosed is returned by Execute once the writer has stopped.
var ErrLedgerClosed = errors.New("ledger writer stopped")

// LedgerConfig configures the group-commit writer.
type LedgerConfig struct {
	// MaxBatch bounds the operations decided and committed in one
	// transaction. Default 256.
	MaxBatch int
	// Linger is how long the writer waits for more operations after taking
	// the first one. Zero (the default) takes whatever is already waiting:
	// under load the queue fills while the previous batch commits, so
	// batches grow by themselves without adding latency when idle.
	Linger time.Duration
	// LockKey is the transaction-scoped advisory lock that serialises
	// batches of every writer on the database. Default DefaultLedgerLockKey.
	LockKey int64
	// NotifyChannel is the channel notified on every commit that appended
	// events, so the relay wakes up. Default "pitboss_events".
	NotifyChannel string
	// BatchTimeout bounds one batch transaction, lock wait included. The
	// batch in flight when Run's context ends still completes within it.
	// Default 10s.
	BatchTimeout time.Duration
	// CacheSize bounds the accounts, and separately the idempotency
	// records, the writer keeps from batch to batch to decide the next one
	// without reading them first (about 0.5 KB a record). Default 50,000.
	CacheSize int
	// InFlight is how many batches may be in flight at once: 2 (the
	// default) sends the next batch, decided from the cache, while the one
	// before it commits; 1 sends a batch only after the one before it has
	// landed.
	InFlight int
	// Observer, when set, is told about every batch (metrics).
	Observer LedgerObserver
}

// LedgerObserver is told about every batch the writer ran: how many
// operations it held, how many events it committed, how long it took and
// whether it failed. It is called on the writer goroutine: keep it fast.
type LedgerObserver interface {
	ObserveLedgerBatch(operations, events int, took time.Duration, err error)
}

func (c *LedgerConfig) setDefaults() {
	if c.MaxBatch == 0 {
		c.MaxBatch = DefaultLedgerMaxBatch
	}
	if c.LockKey == 0 {
		c.LockKey = DefaultLedgerLockKey
	}
	if c.NotifyChannel == "" {
		c.NotifyChannel = DefaultLedgerNotifyChannel
	}
	if c.BatchTimeout == 0 {
		c.BatchTimeout = DefaultLedgerBatchTimeout
	}
	if c.CacheSize == 0 {
		c.CacheSize = DefaultLedgerCacheSize
	}
	if c.InFlight == 0 {
		c.InFlight = DefaultLedgerInFlight
	}
}

// Validate reports every invalid field.
func (c LedgerConfig) Validate() error {
	var errs []error
	if c.MaxBatch < 1 || c.MaxBatch > 10_000 {
		errs = append(errs, fmt.Errorf("ledger MaxBatch %d outside 1..10000", c.MaxBatch))
	}
	if c.Linger < 0 {
		errs = append(errs, fmt.Errorf("ledger Linger %s is negative", c.Linger))
	}
	if c.NotifyChannel == "" || len(c.NotifyChannel) > 63 {
		errs = append(errs, fmt.Errorf("ledger NotifyChannel %q must be 1 to 63 bytes", c.NotifyChannel))
	}
	if c.CacheSize < 2 || c.CacheSize > 10_000_000 {
		errs = append(errs, fmt.Errorf("ledger CacheSize %d outside 2..10000000", c.CacheSize))
	}
	if c.InFlight < 1 || c.InFlight > 2 {
		errs = append(errs, fmt.Errorf("ledger InFlight %d outside 1..2", c.InFlight))
	}
	if c.BatchTimeout <= 0 {
		errs = append(errs, fmt.Errorf("ledger BatchTimeout %s must be positive", c.BatchTimeout))
	}
	return errors.Join(errs...)
}
