package chaos_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/chaos/stack"
	"github.com/pitboss/pitboss/internal/eventually"
	"github.com/pitboss/pitboss/internal/freeport"
)

// newClusterEnv is env on the local cluster of scripts/cluster.sh (three
// KRaft brokers, a PostgreSQL primary with a synchronous standby, reached
// through a multi-host target_session_attrs=read-write URL) with the roles
// of the cluster: two api,relay processes (one relay active, the provider
// fails over between both APIs), two projectors and a forwarder.
func newClusterEnv(t *testing.T, full bool) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	e := &env{t: t, full: full, topic: "pitboss.ledger.events.v1"}
	dir := t.TempDir()
	if os.Getenv("CHAOS_KEEP") != "" {
		dir, _ = os.MkdirTemp("", "pitboss-chaos-cluster-")
		t.Logf("keeping logs in %s", dir)
	}
	var bin string
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { bin, err = pitbossBin(); return })
	g.Go(func() (err error) { e.cluster, err = stack.StartCluster(gctx); return })
	err := g.Wait()
	t.Cleanup(func() {
		if e.cluster != nil {
			e.cluster.Close()
		}
	})
	if err != nil {
		t.Fatalf("start the cluster: %v", err)
	}
	t.Logf("binary and cluster (brokers %v, PostgreSQL %v, folder %s) ready in %v", e.cluster.KafkaPorts,
		e.cluster.PGPorts, e.cluster.Dir, time.Since(start).Round(time.Millisecond))
	url := e.cluster.URL("pitboss") // the script made the database
	e.brokers = e.cluster.Brokers()
	e.setup(ctx, bin, dir, url, start, func() {
		port2, err := freeport.Port()
		if err != nil {
			t.Fatal(err)
		}
		e.main = e.svc.Role("main", "api,relay")
		// main2 reads the read models from the standby
		// (PITBOSS_READ_DATABASE_URL, prefer-standby).
		e.main2 = e.svc.Role("main2", "api,relay", fmt.Sprintf("PITBOSS_HTTP_ADDR=127.0.0.1:%d", port2),
			"PITBOSS_READ_DATABASE_URL="+e.cluster.ReadURL("pitboss"))
		e.proj = e.svc.Role("projector", "projector")
		e.proj2 = e.svc.Role("projector2", "projector")
		e.fwd = e.svc.Role("forwarder", "forwarder")
		e.startRoles(ctx, e.main, e.main2, e.proj, e.proj2, e.fwd)
	})
	return e
}

// relayHolder is the role process whose relay holds the lock: the one
// at the other end of the lock's backend connection.
func (e *env) relayHolder(ctx context.Context) (*stack.Proc, error) {
	pid, err := e.relayLeader(ctx)
	if err != nil {
		return nil, err
	}
	var port int
	if err := e.db.QueryRow(ctx, `SELECT client_port FROM pg_stat_activity WHERE pid = $1`, pid).Scan(&port); err != nil {
		return nil, err
	}
	for _, p := range []*stack.Proc{e.main, e.main2} {
		if p.HoldsLocalPort(port) {
			return p, nil
		}
	}
	return nil, fmt.Errorf("no relay of ours has the lock's connection (client port %d)", port)
}

// waitRelayHolder waits until the relay lock is held by p.
func (e *env) waitRelayHolder(ctx context.Context, p *stack.Proc, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		h, err := e.relayHolder(ctx)
		if err == nil && h == p {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the relay of %s did not take over within %v (last: %v, %v)", p.Name, within, h, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// clusterTopics are the topics whose replicas must be in sync before the
// next fault.
var clusterTopics = []string{"pitboss.ledger.events.v1", "__consumer_offsets", "__transaction_state"}

func clusterFaults() []fault {
	return []fault{
		{name: "none (baseline)", inject: func(ctx context.Context, t *testing.T, e *env) error {
			time.Sleep(e.dur(3*time.Second, 10*time.Second))
			return nil
		}},
		{name: "Kafka: kill -9 the busiest leader, down 10 s / 30 s", inject: func(ctx context.Context, t *testing.T, e *env) error {
			n, err := e.cluster.BusiestLeader(e.topic)
			if err != nil {
				return err
			}
			t.Logf("broker %d leads the busiest partitions: kill -9", n)
			if err := e.cluster.KillBroker(ctx, n); err != nil {
				return err
			}
			time.Sleep(e.dur(10*time.Second, 30*time.Second))
			if err := e.cluster.StartBroker(ctx, n); err != nil {
				return err
			}
			back := time.Now()
			if err := e.cluster.WaitInSync(ctx, 3*time.Minute, clusterTopics...); err != nil {
				return err
			}
			t.Logf("broker %d back in every ISR %.1f s after its restart", n, time.Since(back).Seconds())
			return nil
		}},
		{name: "PostgreSQL: kill -9 the primary, promote the standby", inject: func(ctx context.Context, t *testing.T, e *env) error {
			p, err := e.cluster.Primary(ctx)
			if err != nil {
				return err
			}
			t.Logf("kill -9 the primary pg-%s", p)
			killed := time.Now()
			if err := e.cluster.KillPostgres(ctx, p); err != nil {
				return err
			}
			// The operator's reaction time, kept short.
			time.Sleep(2 * time.Second)
			if _, err := e.cluster.Script(ctx, "pg-promote"); err != nil {
				return err
			}
			t.Logf("standby promoted %.1f s after the kill", time.Since(killed).Seconds())
			// The runbook's last step: the old primary comes back as the
			// new primary's synchronous standby.
			rb := time.Now()
			if _, err := e.cluster.Script(ctx, "pg-rebuild"); err != nil {
				return err
			}
			t.Logf("old primary pg-%s rebuilt as a streaming synchronous standby in %.1f s", p, time.Since(rb).Seconds())
			return nil
		}},
		{name: "Kafka: SIGSTOP a broker 15 s (> 9 s session timeout), SIGCONT", full: true, inject: func(ctx context.Context, t *testing.T, e *env) error {
			n, err := e.cluster.BusiestLeader(e.topic)
			if err != nil {
				return err
			}
			t.Logf("SIGSTOP broker %d (leads the busiest partitions)", n)
			if err := e.cluster.SignalBroker(n, syscall.SIGSTOP); err != nil {
				return err
			}
			time.Sleep(15 * time.Second)
			if err := e.cluster.SignalBroker(n, syscall.SIGCONT); err != nil {
				return err
			}
			back := time.Now()
			if err := e.cluster.WaitInSync(ctx, 3*time.Minute, clusterTopics...); err != nil {
				return err
			}
			t.Logf("broker %d back in every ISR %.1f s after SIGCONT", n, time.Since(back).Seconds())
			return nil
		}},
		{name: "relay: kill -9 the active relay, the standby takes over", full: true, inject: func(ctx context.Context, t *testing.T, e *env) error {
			active, err := e.relayHolder(ctx)
			if err != nil {
				return err
			}
			standby := e.main
			if active == e.main {
				standby = e.main2
			}
			killed := time.Now()
			if err := active.Kill(); err != nil {
				return err
			}
			if err := e.waitRelayHolder(ctx, standby, time.Minute); err != nil {
				return err
			}
			t.Logf("relay of %s killed; %s's relay holds the lock %.1f s later", active.Name, standby.Name, time.Since(killed).Seconds())
			return e.svc.StartRole(ctx, active)
		}},
	}
}

// TestChaosCluster is the cluster form of TestChaos (docs/reliability.md):
// the same load and the same proof after each fault, on three Kafka
// brokers and a PostgreSQL primary with a synchronous standby. It needs
// the jars and packages `make infra` or `make cluster` install, starts its
// own cluster on free ports through scripts/cluster.sh, and runs only when
// asked: PITBOSS_CLUSTER_TEST=1 runs the short form (a broker kill, a
// promotion), CHAOS_CLUSTER=1 (make chaos-cluster) every cluster fault.
func TestChaosCluster(t *testing.T) {
	full := os.Getenv("CHAOS_CLUSTER") == "1"
	if !full && os.Getenv("PITBOSS_CLUSTER_TEST") != "1" {
		t.Skip("the cluster form runs with PITBOSS_CLUSTER_TEST=1 (short) or CHAOS_CLUSTER=1 (make chaos-cluster)")
	}
	shortParallel(t, full)
	e := newClusterEnv(t, full)
	var rows []row
	for i, f := range clusterFaults() {
		if f.full && !full {
			continue
		}
		if only := os.Getenv("CHAOS_ONLY"); only != "" && !strings.Contains(f.name, only) && f.name != "none (baseline)" {
			continue
		}
		var r row
		ok := t.Run(f.name, func(t *testing.T) { r = e.run(t, f) })
		rows = append(rows, r)
		if !ok {
			e.dump()
			break
		}
		if i == 0 {
			// The relay created the topics with the brokers' defaults.
			checkReplication(t, e)
			t.Run("read-your-writes with the read models on the standby", func(t *testing.T) { standbyReads(t, e) })
		}
	}
	if full || os.Getenv("CHAOS_PEAK") == "1" {
		t.Run("peak", func(t *testing.T) { e.peak(t, 15*time.Second) })
	}
	t.Log("\n" + table(rows))
	if full {
		report := filepath.Join(os.Getenv("PITBOSS_DATA_DIR"), "chaos-cluster-report.txt")
		if os.Getenv("PITBOSS_DATA_DIR") != "" {
			_ = os.WriteFile(report, []byte(table(rows)), 0o644)
		}
	}
}

// checkReplication: every topic the service made has three replicas and
// needs two in sync for a write.
func checkReplication(t *testing.T, e *env) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var errs []error
	for _, topic := range []string{e.topic, e.topic + ".dlq", e.topic + ".checkpoints"} {
		reps, minISR, err := e.cluster.TopicReplication(ctx, topic)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for i, n := range reps {
			if n != 3 {
				errs = append(errs, fmt.Errorf("%s/%d has %d replicas, want 3", topic, i, n))
			}
		}
		if minISR != "2" {
			errs = append(errs, fmt.Errorf("%s: min.insync.replicas %q, want 2", topic, minISR))
		}
	}
	if err := errors.Join(errs...); err != nil {
		t.Error(err)
	}
}

// peak is the flat-out rate (16 workers, no pacing) for d: acknowledged
// calls a second and the p99 of one attempt.
func (e *env) peak(t *testing.T, d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d+time.Minute)
	defer cancel()
	rate, workers := e.load.Rate, e.load.Workers
	defer func() { e.load.Rate, e.load.Workers = rate, workers }()
	e.load.Rate, e.load.Workers = 0, 16
	start := time.Now()
	stop := e.load.Start(ctx, "peak")
	time.Sleep(d)
	stop()
	st := stack.Stats(e.load.Calls(), "peak")
	t.Logf("peak: %.0f acknowledged wallet calls/s over %v (16 workers), p99 of one attempt %v",
		float64(st.Acked)/time.Since(start).Seconds(), d, st.P99.Round(time.Millisecond))
}

// standbyReads: main2 reads the read models from the standby
// (PITBOSS_READ_DATABASE_URL with prefer-standby). A deposit through it,
// then its history read with the deposit's min_position through it,
// answers the deposit (a 503 READ_MODEL_BEHIND meanwhile is the wait, not
// a failure: the standby replays the projector's commits), and the
// standby holds the read sessions.
func standbyReads(t *testing.T, e *env) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	api := &stack.API{Base: stack.RoleBaseURL(e.main2), Key: e.sandbox.Key, HTTP: stack.NewHTTPClient(2, 30*time.Second)}
	id := fmt.Sprintf("standby-read-%d", time.Now().UnixNano())
	r, err := api.Do(ctx, "POST", "/api/v1/transactions", map[string]any{"type": "deposit", "transaction_id": id,
		"player_id": "standby-reader", "amount": "1.00", "currency": "EUR"})
	if err != nil || r.Status != 200 {
		t.Fatalf("deposit through main2: %v %d %s", err, r.Status, r.Body)
	}
	var dep struct {
		Data struct {
			Position int64 `json:"position"`
		} `json:"data"`
	}
	if err := json.Unmarshal(r.Body, &dep); err != nil || dep.Data.Position == 0 {
		t.Fatalf("deposit answer %s (%v)", r.Body, err)
	}
	path := fmt.Sprintf("/api/v1/transactions?player_id=standby-reader&min_position=%d", dep.Data.Position)
	var last stack.Reply
	eventually.True(t, time.Minute, "the deposit read back through the standby", func() bool {
		last, err = api.Do(ctx, "GET", path, nil)
		return err == nil && last.Status == 200 && strings.Contains(string(last.Body), id)
	})
	standby := "b"
	if p, err := e.cluster.Primary(ctx); err == nil && p == "b" {
		standby = "a"
	}
	conn, err := pgx.Connect(ctx, e.cluster.NodeURL(standby, "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var inRecovery bool
	var sessions int
	if err := conn.QueryRow(ctx, `SELECT pg_is_in_recovery(), (SELECT count(*) FROM pg_stat_activity WHERE application_name = $1)`,
		stack.ReadApplication).Scan(&inRecovery, &sessions); err != nil {
		t.Fatal(err)
	}
	if !inRecovery || sessions == 0 {
		t.Fatalf("node %s: in recovery %v, %d read sessions: the read models were not read from the standby", standby, inRecovery, sessions)
	}
	t.Logf("read back through the standby (node %s, %d read sessions); the history answered %d", standby, sessions, last.Status)
}
