package gateway

import (
	"context"
	"time"
)

// Usage: the requests of every API key, counted per minute and status
// class and read back in buckets. See docs/keys-and-admin.md.

// UsageCount is the requests of one key in one minute with one status
// class (2 for 2xx ... 5 for 5xx).
type UsageCount struct {
	ClientID    string
	KeyID       string
	Minute      time.Time
	StatusClass int
	Requests    int64
}

// Usage granularities.
const (
	GranularityMinute = "minute"
	GranularityHour   = "hour"
	GranularityDay    = "day"
)

var granularities = map[string]time.Duration{
	GranularityMinute: time.Minute, GranularityHour: time.Hour, GranularityDay: 24 * time.Hour,
}

// GranularityStep is the length of one bucket of granularity g; false for
// a granularity that is not minute, hour or day.
func GranularityStep(g string) (time.Duration, bool) {
	d, ok := granularities[g]
	return d, ok
}

// MaxUsageBuckets bounds the buckets one usage query may span.
const MaxUsageBuckets = 1500

// UsageQuery selects a client's usage in [From, To), both on a bucket
// boundary (UTC), optionally of one key.
type UsageQuery struct {
	ClientID    string
	KeyID       string // empty: every key of the client
	From, To    time.Time
	Granularity string
}

// UsageBucket is the requests of one period. ByClass[2] counts 2xx and so
// on; Requests is their sum.
type UsageBucket struct {
	Start    time.Time
	Requests int64
	ByClass  [6]int64
}

// UsageStore keeps usage counts and the keys' last use.
type UsageStore interface {
	// AddUsage adds counts to the stored ones and moves each key's
	// last-used time forward to lastUsed (never back).
	AddUsage(ctx context.Context, counts []UsageCount, lastUsed map[string]time.Time) error
	// Usage returns the buckets of q that saw requests, oldest first.
	Usage(ctx context.Context, q UsageQuery) ([]UsageBucket, error)
}
