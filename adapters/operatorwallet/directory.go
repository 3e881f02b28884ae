package operatorwallet

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/wallet"
)

// Directory is wallet.Operators over the clients' wallet settings: a
// seamless client's wallet client, built once per settings, and the
// answer for every client kept for TTL, so a wallet call of a ledger
// client costs a map lookup. It is also the settings' store for the
// admin API (gateway.ClientWallets): a change made through it is seen by
// this process at once, by the others within TTL.
type Directory struct {
	store   gateway.ClientWallets
	ttl     time.Duration
	timeout time.Duration
	client  *http.Client
	now     func() time.Time

	mu      sync.Mutex
	entries map[string]dirEntry
}

type dirEntry struct {
	w  gateway.ClientWallet
	op wallet.OperatorWallet
	at time.Time
}

// DirectoryConfig configures a Directory.
type DirectoryConfig struct {
	// TTL is how long a client's settings are kept (0: read every call).
	TTL time.Duration
	// Timeout bounds each call to an operator's wallet (0:
	// DefaultTimeout).
	Timeout time.Duration
	// Client sends the calls (nil: New's default, shared by every
	// client's wallet).
	Client *http.Client
	// Now is the clock of the TTL (nil: time.Now).
	Now func() time.Time
}

// NewDirectory returns a Directory over store.
func NewDirectory(store gateway.ClientWallets, cfg DirectoryConfig) *Directory {
	d := &Directory{store: store, ttl: cfg.TTL, timeout: cfg.Timeout, client: cfg.Client, now: cfg.Now,
		entries: map[string]dirEntry{}}
	if d.now == nil {
		d.now = time.Now
	}
	if d.client == nil {
		c := Config{}
		c.setDefaults()
		d.client = c.Client
	}
	return d
}

var (
	_ wallet.Operators      = (*Directory)(nil)
	_ gateway.ClientWallets = (*Directory)(nil)
)

// Operator is the client's own wallet, nil for a ledger client.
func (d *Directory) Operator(ctx context.Context, clientID string) (wallet.OperatorWallet, error) {
	now := d.now()
	d.mu.Lock()
	e, ok := d.entries[clientID]
	d.mu.Unlock()
	if ok && now.Sub(e.at) < d.ttl {
		return e.op, nil
	}
	w, err := d.store.ClientWallet(ctx, clientID)
	if err != nil {
		return nil, err
	}
	var op wallet.OperatorWallet
	if ok && sameWallet(e.w, w) {
		op = e.op
	} else if w.Seamless() {
		if op, err = New(Config{Protocol: w.Protocol, BaseURL: w.URL, Credential: w.Credential, Operator: w.OperatorID,
			Timeout: d.timeout, Client: d.client}); err != nil {
			return nil, fmt.Errorf("wallet of client %s: %w", clientID, err)
		}
	}
	d.mu.Lock()
	d.entries[clientID] = dirEntry{w: w, op: op, at: now}
	d.mu.Unlock()
	return op, nil
}

func sameWallet(a, b gateway.ClientWallet) bool {
	return a.Mode == b.Mode && a.URL == b.URL && a.Protocol == b.Protocol && a.OperatorID == b.OperatorID &&
		a.Credential == b.Credential
}

// ClientWallet is the store's.
func (d *Directory) ClientWallet(ctx context.Context, clientID string) (gateway.ClientWallet, error) {
	return d.store.ClientWallet(ctx, clientID)
}

// SetClientWallet stores w and forgets what this process kept of the
// client's wallet.
func (d *Directory) SetClientWallet(ctx context.Context, clientID string, w gateway.ClientWallet) error {
	err := d.store.SetClientWallet(ctx, clientID, w)
	d.mu.Lock()
	delete(d.entries, clientID)
	d.mu.Unlock()
	return err
}
