package delivery

import "time"

// Outgoing is one ledger event ready to be enqueued for every endpoint of
// its client that takes it: the forwarded callback (when Callback is not
// nil and the client has a callback URL) and each webhook endpoint
// subscribed to Kind that existed when the event occurred.
type Outgoing struct {
	EventID       string
	EventType     string
	Kind          string
	ClientID      string
	StreamID      string
	StreamVersion int64
	Position      int64
	OccurredAt    time.Time
	// Callback is the forwarded callback's body; nil: not forwarded.
	Callback []byte
	// Webhook is the webhook body (the event in its envelope).
	Webhook []byte
}
