package chaos_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/pitboss/pitboss/adapters/relay"
	"github.com/pitboss/pitboss/chaos/stack"
)

// env is one installation under test: a private PostgreSQL cluster and
// Kafka broker, and Pitboss as three processes, the way a deployment
// scales its roles: api+relay (what providers call), the forwarder
// (callbacks) and the projector (read models).
type env struct {
	t       *testing.T
	full    bool
	pg      *stack.Postgres
	kafka   *stack.Kafka
	cluster *stack.Cluster // the cluster form (TestChaosCluster), instead of pg and kafka
	brokers []string
	svc     *stack.Service
	sandbox stack.Sandbox
	main    *stack.Proc // api, relay
	fwd     *stack.Proc // forwarder
	proj    *stack.Proc // projector
	main2   *stack.Proc // the cluster form's second api, relay
	proj2   *stack.Proc // the cluster form's second projector
	db      *pgxpool.Pool
	api     *stack.API
	rcv     *stack.Receiver
	players []*stack.Player
	load    *stack.Load
	topic   string
}

// envInt reads an integer setting with a default.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func newEnv(t *testing.T, full bool) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	e := &env{t: t, full: full, topic: "pitboss.ledger.events.v1"}
	dir := t.TempDir()
	if os.Getenv("CHAOS_KEEP") != "" {
		dir, _ = os.MkdirTemp("", "pitboss-chaos-")
		t.Logf("keeping logs in %s", dir)
	}
	kdir := filepath.Join(dir, "kafka")
	var bin string
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { bin, err = pitbossBin(); return })
	g.Go(func() (err error) { e.pg, err = stack.StartPostgres(gctx); return })
	g.Go(func() (err error) { e.kafka, err = stack.StartKafka(gctx, kdir); return })
	err := g.Wait()
	t.Cleanup(func() {
		if e.kafka != nil {
			e.kafka.Close()
		}
		if e.pg != nil {
			e.pg.Close()
		}
	})
	if err != nil {
		t.Fatalf("start the stack: %v", err)
	}
	t.Logf("binary, PostgreSQL (port %d) and Kafka (port %d) ready in %v", e.pg.Port, e.kafka.Port, time.Since(start).Round(time.Millisecond))
	url, err := e.pg.CreateDatabase(ctx, "pitboss")
	if err != nil {
		t.Fatal(err)
	}
	e.brokers = e.kafka.Brokers()
	e.setup(ctx, bin, dir, url, start, func() {
		e.main = e.svc.Role("main", "api,relay")
		e.fwd = e.svc.Role("forwarder", "forwarder")
		e.proj = e.svc.Role("projector", "projector")
		e.startRoles(ctx, e.main, e.fwd, e.proj)
	})
	return e
}

// startRoles starts role processes in order, each stopped when the test ends.
func (e *env) startRoles(ctx context.Context, procs ...*stack.Proc) {
	for _, p := range procs {
		e.t.Cleanup(func() { _ = p.Stop(10 * time.Second) })
		if err := e.svc.StartRole(ctx, p); err != nil {
			e.t.Fatal(err)
		}
	}
}

// setup installs Pitboss on running infrastructure (e.brokers and the
// database at url): the sandbox, the callback receiver, the role processes
// (roles starts them), the players and the load.
func (e *env) setup(ctx context.Context, bin, dir, url string, start time.Time, roles func()) {
	t := e.t
	var err error
	if e.svc, err = stack.NewService(bin, dir, url, e.brokers, e.topic); err != nil {
		t.Fatal(err)
	}
	if e.sandbox, err = e.svc.SetupSandbox(ctx); err != nil {
		t.Fatal(err)
	}
	e.rcv = stack.NewReceiver()
	t.Cleanup(e.rcv.Close)
	if _, err := e.svc.CLI(ctx, "client", "set", "--id", e.sandbox.Client, "--forward-callback-url", e.rcv.URL()); err != nil {
		t.Fatal(err)
	}
	roles()
	if e.db, err = pgxpool.New(ctx, url); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.db.Close)
	e.api = &stack.API{Base: e.svc.BaseURL(), Key: e.sandbox.Key, HTTP: stack.NewHTTPClient(8, 30*time.Second)}
	secret, err := e.api.RotateCallbackSecret(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.rcv.SetSecret(secret)
	if e.players, err = stack.SetupPlayers(ctx, e.api, e.sandbox, "chaos", envInt("CHAOS_PLAYERS", 24), stack.Currencies); err != nil {
		t.Fatal(err)
	}
	workers := envInt("CHAOS_WORKERS", 8)
	rate := float64(envInt("CHAOS_RATE", 60))
	e.load = &stack.Load{
		Provider: &stack.Provider{Base: e.svc.BaseURL(), ID: e.sandbox.Provider, Secret: e.sandbox.ProviderSecret,
			HTTP: stack.NewHTTPClient(workers, 15*time.Second)},
		Players: e.players, Workers: workers, Rate: rate, Prefix: "tx",
		Retry: stack.Retry{First: 50 * time.Millisecond, Max: time.Second, GiveUp: 3 * time.Minute},
	}
	if e.main2 != nil {
		e.load.Provider.Alt = stack.RoleBaseURL(e.main2)
	}
	t.Logf("stack up in %v: %d players (EUR, JPY, BTC), %d workers at %v calls/s", time.Since(start).Round(time.Millisecond),
		len(e.players), workers, rate)
}

// sample is one look at how far each consumer of the event store got.
type sample struct {
	at                  time.Time
	head, relay, models int64
}

// sampler polls the head, the relay's checkpoint and the read models'
// watermark every 200 ms until stopped.
type sampler struct {
	mu      sync.Mutex
	samples []sample
	stop    chan struct{}
	done    chan struct{}
	failed  int
}

func (s *sampler) errors() int { s.mu.Lock(); defer s.mu.Unlock(); return s.failed }

func (e *env) startSampler() *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			var sm sample
			err := e.db.QueryRow(ctx, `SELECT (SELECT coalesce(max(position), 0) FROM events),
			        (SELECT coalesce(max(position), 0) FROM relay_checkpoints),
			        (SELECT coalesce(min(position), 0) FROM readmodels.positions)`).Scan(&sm.head, &sm.relay, &sm.models)
			cancel()
			s.mu.Lock()
			if err == nil {
				sm.at = time.Now()
				s.samples = append(s.samples, sm)
			} else {
				s.failed++
			}
			s.mu.Unlock()
			select {
			case <-s.stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return s
}

func (s *sampler) finish() []sample {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples
}

// caughtUp is how long after t the consumer (pick) first reached the head
// as it was at t; -1 if it never did in the samples.
func caughtUp(samples []sample, t time.Time, pick func(sample) int64) time.Duration {
	var target int64 = -1
	for _, s := range samples {
		if !s.at.Before(t) {
			if target < 0 {
				target = s.head
			}
			if pick(s) >= target {
				return s.at.Sub(t)
			}
		}
	}
	return -1
}

// lagAt is head − pick at the sample nearest to t.
func lagAt(samples []sample, t time.Time, pick func(sample) int64) int64 {
	var best sample
	for _, s := range samples {
		if best.at.IsZero() || s.at.Sub(t).Abs() < best.at.Sub(t).Abs() {
			best = s
		}
	}
	return best.head - pick(best)
}

// relayLeader is the backend pid holding the relay's session lock.
func (e *env) relayLeader(ctx context.Context) (int, error) {
	key := relay.LockKeyFor(relay.DefaultName)
	var pid int
	err := e.db.QueryRow(ctx, `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
	    AND classid = $1::bigint::oid AND objid = $2::bigint::oid AND objsubid = 1`,
		int64(uint32(uint64(key)>>32)), int64(uint32(uint64(key)))).Scan(&pid)
	return pid, err
}

// dump logs the tails of every process log (on failure).
func (e *env) dump() {
	for _, p := range []*stack.Proc{e.main, e.main2, e.fwd, e.proj, e.proj2} {
		if p != nil {
			e.t.Logf("---- %s log:\n%s", p.Name, p.LogTail(25))
		}
	}
	if e.cluster != nil {
		for _, l := range []string{"pg-a.log", "pg-b.log", "kafka-1.log", "kafka-2.log", "kafka-3.log", "cluster.sh.log"} {
			e.t.Logf("---- %s:\n%s", l, e.cluster.Log(l, 15))
		}
		return
	}
	e.t.Logf("---- postgres log:\n%s", e.pg.Log(15))
	e.t.Logf("---- kafka log:\n%s", e.kafka.Log(15))
}

func secs(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return fmt.Sprintf("%.1f", d.Seconds())
}

func check(ok bool, what string, items []string, errs *[]string) {
	if !ok || len(items) > 0 {
		shown := items
		if len(shown) > 5 {
			shown = append(shown[:5:5], fmt.Sprintf("... %d more", len(items)-5))
		}
		*errs = append(*errs, what+": "+strings.Join(shown, "; "))
	}
}
