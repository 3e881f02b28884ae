package stack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/IBM/sarama"
	"github.com/jackc/pgx/v5"

	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/internal/freeport"
)

// Cluster is the local cluster of scripts/cluster.sh (three KRaft brokers,
// a PostgreSQL primary and its synchronous standby), started by that script
// on free ports in a folder of its own, without the Pitboss roles: the
// test runs those itself. Faults act on the processes through the pid
// files the script keeps; restarts, the promotion and the rebuild of a
// standby go through the script, as an operator's would.
type Cluster struct {
	Dir             string
	KafkaPorts      [3]int
	ControllerPorts [3]int
	PGPorts         [2]int // pg-a, pg-b
	script          string
	log             string
}

// StartCluster runs `scripts/cluster.sh up` with PITBOSS_CLUSTER_ROLES=0.
// The folder is under /tmp: the postgres OS user must reach it.
func StartCluster(ctx context.Context) (*Cluster, error) {
	root, err := ModuleRoot()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("/tmp", "pitboss-cluster-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, script: filepath.Join(root, "scripts", "cluster.sh"), log: filepath.Join(dir, "cluster.sh.log")}
	ports := make([]int, 0, 8)
	for len(ports) < 8 {
		p, err := freeport.Port()
		if err != nil {
			return nil, err
		}
		if !containsInt(ports, p) {
			ports = append(ports, p)
		}
	}
	copy(c.KafkaPorts[:], ports[0:3])
	copy(c.ControllerPorts[:], ports[3:6])
	copy(c.PGPorts[:], ports[6:8])
	if _, err := c.Script(ctx, "up"); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func joinPorts(ps []int) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, ",")
}

// Script runs scripts/cluster.sh args... for this cluster; its standard
// error goes to cluster.sh.log in the folder.
func (c *Cluster) Script(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "bash", append([]string{c.script}, args...)...)
	cmd.Env = append(os.Environ(),
		"PITBOSS_CLUSTER_DIR="+c.Dir,
		"PITBOSS_CLUSTER_ROLES=0",
		"PITBOSS_CLUSTER_KAFKA_PORTS="+joinPorts(c.KafkaPorts[:]),
		"PITBOSS_CLUSTER_CONTROLLER_PORTS="+joinPorts(c.ControllerPorts[:]),
		"PITBOSS_CLUSTER_PG_PORTS="+joinPorts(c.PGPorts[:]),
		"PITBOSS_STOP_TIMEOUT=20",
	)
	f, err := os.OpenFile(c.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fmt.Fprintf(f, "===== %s cluster.sh %s\n", time.Now().UTC().Format(time.RFC3339Nano), strings.Join(args, " "))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, f
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("scripts/cluster.sh %s: %w\n%s", strings.Join(args, " "), err, tail(c.log, 30))
	}
	return out.String(), nil
}

// Brokers is the bootstrap list: all three brokers.
func (c *Cluster) Brokers() []string {
	b := make([]string, 3)
	for i, p := range c.KafkaPorts {
		b[i] = fmt.Sprintf("127.0.0.1:%d", p)
	}
	return b
}

// URL is the multi-host DSN of database db: both nodes, and only the one
// that takes writes (target_session_attrs=read-write).
func (c *Cluster) URL(db string) string {
	return fmt.Sprintf("postgres://pitboss:pitboss@127.0.0.1:%d,127.0.0.1:%d/%s?sslmode=disable&target_session_attrs=read-write&connect_timeout=3",
		c.PGPorts[0], c.PGPorts[1], url.PathEscape(db))
}

// ReadURL is the multi-host DSN of database db for reads: the standby when
// one answers (target_session_attrs=prefer-standby), else the primary;
// its sessions are named ReadApplication on the server.
func (c *Cluster) ReadURL(db string) string {
	return fmt.Sprintf("postgres://pitboss:pitboss@127.0.0.1:%d,127.0.0.1:%d/%s?sslmode=disable&target_session_attrs=prefer-standby&connect_timeout=3&application_name=%s",
		c.PGPorts[0], c.PGPorts[1], url.PathEscape(db), ReadApplication)
}

// ReadApplication is the application_name of ReadURL's sessions.
const ReadApplication = "pitboss-reads"

// NodeURL is the DSN of database db on node ("a" or "b") alone.
func (c *Cluster) NodeURL(node, db string) string {
	return fmt.Sprintf("postgres://pitboss:pitboss@127.0.0.1:%d/%s?sslmode=disable", c.pgPort(node), url.PathEscape(db))
}

func readPid(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		return 0, fmt.Errorf("pid file %s: %w", path, err)
	}
	if syscall.Kill(pid, 0) != nil {
		return 0, fmt.Errorf("pid %d of %s is not running", pid, path)
	}
	return pid, nil
}

// BrokerPid is the pid of broker n (1-3).
func (c *Cluster) BrokerPid(n int) (int, error) {
	return readPid(filepath.Join(c.Dir, fmt.Sprintf("kafka-%d", n), "kafka.pid"))
}

// killWait sends SIGKILL to pid and waits until it is gone.
func killWait(ctx context.Context, pid int) error {
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return waitFor(wctx, 50*time.Millisecond, func() error {
		// A zombie of a process we did not start is reaped by init; until
		// then kill(pid, 0) still succeeds, so look at its state.
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return nil
		}
		if f := strings.Fields(string(b)); len(f) > 2 && f[2] == "Z" {
			return nil
		}
		return fmt.Errorf("pid %d still runs", pid)
	})
}

// KillBroker is kill -9 of broker n.
func (c *Cluster) KillBroker(ctx context.Context, n int) error {
	pid, err := c.BrokerPid(n)
	if err != nil {
		return err
	}
	return killWait(ctx, pid)
}

// SignalBroker sends sig (SIGSTOP, SIGCONT) to broker n.
func (c *Cluster) SignalBroker(n int, sig syscall.Signal) error {
	pid, err := c.BrokerPid(n)
	if err != nil {
		return err
	}
	return syscall.Kill(pid, sig)
}

// StartBroker starts broker n again and waits until the cluster lists
// all three brokers.
func (c *Cluster) StartBroker(ctx context.Context, n int) error {
	if _, err := c.Script(ctx, "kafka-start", strconv.Itoa(n)); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return waitFor(wctx, 250*time.Millisecond, func() error {
		cl, err := c.kafkaClient()
		if err != nil {
			return err
		}
		defer cl.Close()
		if got := len(cl.Brokers()); got != 3 {
			return fmt.Errorf("%d brokers in the metadata", got)
		}
		return nil
	})
}

func (c *Cluster) kafkaClient() (sarama.Client, error) {
	cfg := sarama.NewConfig()
	cfg.Version = kafka.KafkaVersion
	cfg.Net.DialTimeout = 2 * time.Second
	cfg.Metadata.Retry.Max = 0
	return sarama.NewClient(c.Brokers(), cfg)
}

// TopicReplication reports the replication factor of every partition of
// topic and the topic's min.insync.replicas.
func (c *Cluster) TopicReplication(ctx context.Context, topic string) (replicas []int, minISR string, err error) {
	cfg := sarama.NewConfig()
	cfg.Version = kafka.KafkaVersion
	admin, err := sarama.NewClusterAdmin(c.Brokers(), cfg)
	if err != nil {
		return nil, "", err
	}
	defer admin.Close()
	md, err := admin.DescribeTopics([]string{topic})
	if err != nil {
		return nil, "", err
	}
	if len(md) != 1 || !errors.Is(md[0].Err, sarama.ErrNoError) {
		return nil, "", fmt.Errorf("describe %s: %v", topic, md)
	}
	for _, p := range md[0].Partitions {
		replicas = append(replicas, len(p.Replicas))
	}
	entries, err := admin.DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: topic,
		ConfigNames: []string{"min.insync.replicas"}})
	if err != nil {
		return nil, "", err
	}
	for _, e := range entries {
		if e.Name == "min.insync.replicas" {
			minISR = e.Value
		}
	}
	return replicas, minISR, nil
}

// BusiestLeader is the broker leading the partitions of topic that hold
// the most records.
func (c *Cluster) BusiestLeader(topic string) (int, error) {
	cl, err := c.kafkaClient()
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	parts, err := cl.Partitions(topic)
	if err != nil {
		return 0, err
	}
	load := map[int32]int64{}
	for _, p := range parts {
		leader, err := cl.Leader(topic, p)
		if err != nil {
			return 0, err
		}
		n, err := cl.GetOffset(topic, p, sarama.OffsetNewest)
		if err != nil {
			return 0, err
		}
		load[leader.ID()] += n
	}
	ids := make([]int32, 0, len(load))
	for id := range load {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return load[ids[i]] > load[ids[j]] })
	if len(ids) == 0 {
		return 0, fmt.Errorf("no leader for %s", topic)
	}
	return int(ids[0]), nil
}

// WaitInSync waits until every partition of the topics has all three
// replicas in sync again (after a broker came back), so the next fault
// starts from a whole cluster.
func (c *Cluster) WaitInSync(ctx context.Context, within time.Duration, topics ...string) error {
	wctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	return waitFor(wctx, 250*time.Millisecond, func() error {
		cfg := sarama.NewConfig()
		cfg.Version = kafka.KafkaVersion
		admin, err := sarama.NewClusterAdmin(c.Brokers(), cfg)
		if err != nil {
			return err
		}
		defer admin.Close()
		md, err := admin.DescribeTopics(topics)
		if err != nil {
			return err
		}
		for _, t := range md {
			for _, p := range t.Partitions {
				if len(p.Isr) != 3 {
					return fmt.Errorf("%s/%d in sync: %v", t.Name, p.ID, p.Isr)
				}
			}
		}
		return nil
	})
}

// pgDir is the data folder of node ("a" or "b").
func (c *Cluster) pgDir(node string) string { return filepath.Join(c.Dir, "pg-"+node) }

func (c *Cluster) pgPort(node string) int {
	if node == "a" {
		return c.PGPorts[0]
	}
	return c.PGPorts[1]
}

// Primary is the node that is not in recovery ("a" or "b").
func (c *Cluster) Primary(ctx context.Context) (string, error) {
	for _, n := range []string{"a", "b"} {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		conn, err := pgx.Connect(cctx, fmt.Sprintf("postgres://pitboss:pitboss@127.0.0.1:%d/postgres?sslmode=disable", c.pgPort(n)))
		if err != nil {
			cancel()
			continue
		}
		var rec bool
		err = conn.QueryRow(cctx, "SELECT pg_is_in_recovery()").Scan(&rec)
		_ = conn.Close(cctx)
		cancel()
		if err == nil && !rec {
			return n, nil
		}
	}
	return "", errors.New("no PostgreSQL node is a primary")
}

// KillPostgres is kill -9 of node's postmaster (its backends notice and
// exit), as when the machine under it is lost.
func (c *Cluster) KillPostgres(ctx context.Context, node string) error {
	pid, err := readPid(filepath.Join(c.pgDir(node), "postmaster.pid"))
	if err != nil {
		return err
	}
	return killWait(ctx, pid)
}

// Log is the tail of a log in the cluster folder (kafka-1.log, pg-a.log, ...).
func (c *Cluster) Log(name string, n int) string { return tail(filepath.Join(c.Dir, name), n) }

// Close runs `scripts/cluster.sh down` and removes the folder (CHAOS_KEEP
// keeps it).
func (c *Cluster) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, _ = c.Script(ctx, "down")
	if os.Getenv("CHAOS_KEEP") == "" {
		_ = os.RemoveAll(c.Dir)
	}
}

// HoldsLocalPort reports whether the process has a TCP socket whose local
// port is port: which process is at the other end of a PostgreSQL backend
// (pg_stat_activity.client_port).
func (p *Proc) HoldsLocalPort(port int) bool {
	pid := p.Pid()
	if pid == 0 {
		return false
	}
	inodes := map[string]bool{}
	for _, f := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, f))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(line)
			if len(fs) < 10 {
				continue
			}
			_, hexPort, ok := strings.Cut(fs[1], ":")
			if n, err := strconv.ParseInt(hexPort, 16, 32); ok && err == nil && int(n) == port {
				inodes["socket:["+fs[9]+"]"] = true
			}
		}
	}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, fd := range fds {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && inodes[l] {
			return true
		}
	}
	return false
}
