// Package delivery sends outbound deliveries — forwarded callbacks and
// webhooks — over HTTP: signed (SignatureHeader), one attempt at a time per
// queue, retried on a published schedule with full jitter, and logged.
//
// The Kafka consumer (package forwarder) only enqueues deliveries in
// Postgres; the Worker here claims the ones that are due and sends them.
// Deliveries of one endpoint and one ledger stream form a queue that is sent
// in order: only its head is ever due, and the next one becomes the head
// when the head succeeds or is parked. So a receiver that fails for one
// player holds back that player's later deliveries to it, and nothing else.
package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pitboss/pitboss/gateway"
)

// Defaults of WorkerConfig.
const (
	DefaultConcurrency  = 32
	DefaultPollInterval = 250 * time.Millisecond
	DefaultBatch        = 64
	// leaseMargin is added to the attempt timeout for the lease, so a
	// delivery is taken over only when its worker is surely gone.
	leaseMargin   = 30 * time.Second
	finishTimeout = 10 * time.Second
)

// WorkerConfig configures a Worker.
type WorkerConfig struct {
	// Concurrency bounds the attempts in flight.
	Concurrency int
	// PollInterval is how often due deliveries are looked for when the
	// worker is idle.
	PollInterval time.Duration
	Schedule     Schedule
	Logger       *slog.Logger
}

// Worker sends due deliveries until its context ends.
type Worker struct {
	cfg    WorkerConfig
	queue  gateway.DeliveryQueue
	sender *Sender
	log    *slog.Logger
	wake   chan struct{}

	running atomic.Bool
	stats   Stats
}

// Stats counts a worker's attempts.
type Stats struct {
	Attempts, Succeeded, Failed, Parked atomic.Int64
}

// NewWorker checks cfg (after defaults) and returns a worker.
func NewWorker(queue gateway.DeliveryQueue, sender *Sender, cfg WorkerConfig) (*Worker, error) {
	if cfg.Concurrency == 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	cfg.Schedule.setDefaults()
	var errs []error
	if cfg.Concurrency < 1 {
		errs = append(errs, fmt.Errorf("concurrency %d < 1", cfg.Concurrency))
	}
	if cfg.PollInterval <= 0 {
		errs = append(errs, fmt.Errorf("poll interval %v <= 0", cfg.PollInterval))
	}
	if queue == nil || sender == nil {
		errs = append(errs, errors.New("queue and sender are required"))
	}
	if err := errors.Join(append(errs, cfg.Schedule.Validate())...); err != nil {
		return nil, fmt.Errorf("delivery worker config: %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Worker{cfg: cfg, queue: queue, sender: sender, log: cfg.Logger.With("component", "delivery-worker"),
		wake: make(chan struct{}, 1)}, nil
}

// Stats returns the worker's counters.
func (w *Worker) Stats() *Stats { return &w.stats }

// Run claims and sends deliveries until ctx ends; attempts in flight then
// finish (each within the sender's timeout) and are recorded. It returns
// nil on a normal stop.
func (w *Worker) Run(ctx context.Context) error {
	if !w.running.CompareAndSwap(false, true) {
		return errors.New("delivery worker: Run is already running")
	}
	defer w.running.Store(false)
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, w.cfg.Concurrency)
	lease := w.sender.Timeout() + leaseMargin
	for {
		free := cap(slots) - len(slots)
		claimed := 0
		if free > 0 {
			jobs, err := w.queue.Claim(ctx, min(free, DefaultBatch), lease)
			if err != nil && ctx.Err() == nil {
				w.log.WarnContext(ctx, "claim deliveries", "err", err)
			}
			claimed = len(jobs)
			for _, j := range jobs {
				slots <- struct{}{}
				wg.Add(1)
				go func() {
					defer wg.Done()
					w.process(ctx, j)
					<-slots
					w.poke()
				}()
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		if claimed > 0 && claimed == min(free, DefaultBatch) {
			continue // more may be due
		}
		t := time.NewTimer(w.cfg.PollInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-w.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// poke wakes the loop: a finished head may have made the next one due.
func (w *Worker) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// process makes one attempt of j and records it. The attempt is not cut
// short by ctx: a stopping worker lets it end within the timeout, so its
// outcome is known and logged.
func (w *Worker) process(ctx context.Context, j gateway.DeliveryJob) {
	actx := context.WithoutCancel(ctx)
	o := gateway.DeliveryOutcome{URL: j.URL}
	switch {
	case j.Gone != "":
		o.Result = gateway.AttemptResult{StartedAt: time.Now(), Error: j.Gone}
		o.Park = true
	case j.Fault != "":
		o.Result = gateway.AttemptResult{StartedAt: time.Now(), Error: j.Fault}
		o.RetryAfter, o.Park = w.cfg.Schedule.Next(j.RoundAttempt, j.RoundStartedAt, time.Now())
	default:
		o.Result = w.sender.Send(actx, Request{URL: j.URL, Environment: j.Environment, Body: j.Payload, Secret: j.Secret, DeliveryID: j.ID,
			IdempotencyKey: j.IdempotencyKey(), EventID: j.EventID, EventType: j.EventType, Kind: j.Kind,
			Attempt: j.Attempt})
		if o.Result.Succeeded() {
			o.Succeeded = true
		} else {
			o.RetryAfter, o.Park = w.cfg.Schedule.Next(j.RoundAttempt, j.RoundStartedAt, time.Now())
		}
	}
	w.stats.Attempts.Add(1)
	switch {
	case o.Succeeded:
		w.stats.Succeeded.Add(1)
	case o.Park:
		w.stats.Failed.Add(1)
		w.stats.Parked.Add(1)
	default:
		w.stats.Failed.Add(1)
	}
	fctx, cancel := context.WithTimeout(actx, finishTimeout)
	defer cancel()
	if err := w.queue.Finish(fctx, j, o); err != nil {
		// The lease runs out and the delivery is tried again: at least once.
		w.log.ErrorContext(ctx, "record delivery attempt", "delivery_id", j.ID, "attempt", j.Attempt, "err", err)
		return
	}
	lvl := slog.LevelDebug
	if !o.Succeeded {
		lvl = slog.LevelInfo
	}
	w.log.Log(ctx, lvl, "delivery attempt", "delivery_id", j.ID, "client_id", j.ClientID, "target", j.Target,
		"endpoint_id", j.EndpointID, "event_id", j.EventID, "attempt", j.Attempt, "status", o.Result.StatusCode,
		"latency_ms", o.Result.Latency.Milliseconds(), "error", o.Result.Error, "succeeded", o.Succeeded, "parked", o.Park,
		"retry_after", o.RetryAfter)
}
