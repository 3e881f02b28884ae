package stack

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/IBM/sarama"

	"github.com/pitboss/pitboss/adapters/kafka"
	"github.com/pitboss/pitboss/internal/freeport"
)

// Kafka is a private single-node KRaft broker, started from the jars that
// scripts/kafka-up.sh fetched into .cache, on ports and a log folder of its
// own: stopping it disturbs no one else's tests.
type Kafka struct {
	Dir         string
	Port, CPort int
	proc        *Proc
}

// Brokers is the bootstrap list.
func (k *Kafka) Brokers() []string { return []string{fmt.Sprintf("127.0.0.1:%d", k.Port)} }

// kafkaLibs is $PITBOSS_CACHE_DIR/kafka-$PITBOSS_KAFKA_VERSION/libs, with
// the defaults of scripts/env.sh.
func kafkaLibs() (string, error) {
	cache := os.Getenv("PITBOSS_CACHE_DIR")
	if cache == "" {
		root, err := ModuleRoot()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(root, ".cache")
	}
	v := os.Getenv("PITBOSS_KAFKA_VERSION")
	if v == "" {
		v = "4.3.1"
	}
	libs := filepath.Join(cache, "kafka-"+v, "libs")
	if _, err := os.Stat(filepath.Join(libs, "kafka_2.13-"+v+".jar")); err != nil {
		return "", fmt.Errorf("Kafka jars not found in %s: run `make infra` once, which fetches them: %w", libs, err)
	}
	return libs, nil
}

// findJava returns a java binary: JAVA_HOME, PATH, then /usr/lib/jvm.
func findJava() (string, error) {
	var cands []string
	if h := os.Getenv("JAVA_HOME"); h != "" {
		cands = append(cands, filepath.Join(h, "bin", "java"))
	}
	if p, err := exec.LookPath("java"); err == nil {
		cands = append(cands, p)
	}
	jvms, _ := filepath.Glob("/usr/lib/jvm/*/bin/java")
	sort.Sort(sort.Reverse(sort.StringSlice(jvms)))
	cands = append(cands, jvms...)
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			return c, nil
		}
	}
	return "", errors.New("no java found: run `make infra` once, which installs a JRE")
}

// StartKafka formats and starts a private broker in a new folder.
func StartKafka(ctx context.Context, dir string) (*Kafka, error) {
	libs, err := kafkaLibs()
	if err != nil {
		return nil, err
	}
	java, err := findJava()
	if err != nil {
		return nil, err
	}
	k := &Kafka{Dir: dir}
	if k.Port, err = freeport.Port(); err != nil {
		return nil, err
	}
	if k.CPort, err = freeport.Port(); err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, err
	}
	props := fmt.Sprintf(`process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:%[2]d
controller.listener.names=CONTROLLER
listeners=PLAINTEXT://127.0.0.1:%[1]d,CONTROLLER://127.0.0.1:%[2]d
advertised.listeners=PLAINTEXT://127.0.0.1:%[1]d
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=%[3]s
num.partitions=6
default.replication.factor=1
min.insync.replicas=1
auto.create.topics.enable=true
delete.topic.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=6
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=6
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=2
`, k.Port, k.CPort, data)
	propsPath := filepath.Join(dir, "server.properties")
	log4j := fmt.Sprintf(`status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = %s
appender.file.append = true
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%%d] %%p %%m (%%c)%%n
rootLogger.level = WARN
rootLogger.appenderRef.file.ref = FILE
`, filepath.Join(dir, "kafka-server.log"))
	log4jPath := filepath.Join(dir, "log4j2.properties")
	for p, s := range map[string]string{propsPath: props, log4jPath: log4j} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			return nil, err
		}
	}
	jvm := []string{"-Xms128m", "-Xmx384m", "-XX:+UseG1GC", "-XX:+ExitOnOutOfMemoryError", "-XX:TieredStopAtLevel=1",
		"-Djava.awt.headless=true", "-Dlog4j2.configurationFile=" + log4jPath, "-Dkafka.logs.dir=" + dir, "-cp", libs + "/*"}
	env := []string{"PATH=" + os.Getenv("PATH")}
	format := &Proc{Name: "kafka-format", Path: java, Dir: dir, Env: env, LogPath: filepath.Join(dir, "format.log"),
		Args: append(append([]string{}, jvm...), "kafka.tools.StorageTool", "format", "-t",
			clusterID(func(b []byte) { _, _ = rand.Read(b) }), "-c", propsPath)}
	if err := format.Run(ctx, 20); err != nil {
		return nil, err
	}
	k.proc = &Proc{Name: "kafka", Path: java, Dir: dir, Env: env, LogPath: filepath.Join(dir, "kafka.log"),
		Args: append(append([]string{}, jvm...), "kafka.Kafka", propsPath)}
	if err := k.Start(ctx); err != nil {
		k.Close()
		return nil, err
	}
	return k, nil
}

// Start starts the broker and waits until it answers a metadata request
// listing itself.
func (k *Kafka) Start(ctx context.Context) error {
	if err := k.proc.Start(); err != nil {
		return err
	}
	return k.WaitReady(ctx, 2*time.Minute)
}

// WaitReady waits until the broker answers metadata requests.
func (k *Kafka) WaitReady(ctx context.Context, within time.Duration) error {
	wctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	err := waitFor(wctx, 250*time.Millisecond, func() error {
		if !k.proc.Running() {
			return errors.New("the broker exited")
		}
		return k.ping()
	})
	if err != nil {
		return fmt.Errorf("kafka on port %d did not come up: %w\n%s", k.Port, err, k.proc.LogTail(20))
	}
	return nil
}

func (k *Kafka) ping() error {
	c := sarama.NewConfig()
	c.Version = kafka.KafkaVersion
	c.Net.DialTimeout = 2 * time.Second
	c.Metadata.Retry.Max = 0
	client, err := sarama.NewClient(k.Brokers(), c)
	if err != nil {
		return err
	}
	defer client.Close()
	if len(client.Brokers()) == 0 {
		return errors.New("no broker in the metadata")
	}
	// A fresh KRaft broker answers metadata before it can create topics;
	// asking for the controller proves the quorum is up.
	_, err = client.Controller()
	return err
}

// Kill is kill -9 of the broker.
func (k *Kafka) Kill() error { return k.proc.Kill() }

// Stop is a controlled shutdown (SIGTERM), killed after 30 s.
func (k *Kafka) Stop() error { return k.proc.Signal(syscall.SIGTERM, 30*time.Second) }

// Log is the tail of the broker's console log.
func (k *Kafka) Log(n int) string { return k.proc.LogTail(n) }

// Close kills the broker.
func (k *Kafka) Close() {
	if k.proc != nil {
		_ = k.proc.Kill()
	}
}

// clusterID is a Kafka cluster id: 16 random bytes from fill in base64url
// without padding, never starting with '-', which the storage tool's
// command line would read as an option (one id in 64 did, and TestChaos
// failed with a usage message). Kafka's own random-uuid has the same rule.
func clusterID(fill func([]byte)) string {
	b := make([]byte, 16)
	for {
		fill(b)
		if id := base64.RawURLEncoding.EncodeToString(b); id[0] != '-' {
			return id
		}
	}
}
