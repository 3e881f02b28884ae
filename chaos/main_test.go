package chaos_test

import (
	"context"
	"flag"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/pitboss/pitboss/chaos/stack"
)

// The short forms of TestChaos, TestChaosSeamless and TestChaosCluster
// each run a stack of their own (PostgreSQL, Kafka, the roles, on free
// ports, in folders of their own) and spend most of their time in fault
// windows and convergence waits, not on the CPU: run one after another
// they were 260 s of `make test`'s critical path. shortParallel lets them
// (and the two tests on the shared infra) overlap. go test's -parallel
// defaults to GOMAXPROCS, 2 on a 2-core box, which would still serialize
// three of the five: TestMain raises it to minParallel unless -parallel was
// given.
const minParallel = 5

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if p := flag.Lookup("test.parallel"); p != nil && !given {
		if n, err := strconv.Atoi(p.Value.String()); err == nil && n < minParallel {
			_ = p.Value.Set(strconv.Itoa(minParallel))
		}
	}
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// shortParallel marks t parallel unless it measures something a neighbour
// would disturb: the full form (CHAOS=full, CHAOS_CLUSTER=1), the peak
// rate (CHAOS_PEAK=1) or a soak (SOAK_MINUTES) keep the box to themselves.
func shortParallel(t *testing.T, full bool) {
	if full || os.Getenv("CHAOS_PEAK") == "1" || envInt("SOAK_MINUTES", 0) > 0 {
		return
	}
	t.Parallel()
}

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

// pitbossBin builds ./cmd/pitboss once for the package (stack.Build) into
// a folder TestMain removes; every test runs that binary. The build has a
// context of its own: the first caller's may be cancelled while others wait.
func pitbossBin() (string, error) {
	binOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if binDir, binErr = os.MkdirTemp("", "pitboss-chaos-bin-"); binErr != nil {
			return
		}
		binPath, binErr = stack.Build(ctx, binDir)
	})
	return binPath, binErr
}
