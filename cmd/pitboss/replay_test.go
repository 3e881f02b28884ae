package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/eventstore"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/adapters/postgres/readstore"
)

var errInterrupted = errors.New("interrupted by the test")

// interruptReplay runs the rebuild `pitboss replay --full --memory 16MiB`
// runs (slices of 10,000 events, its floor), stopped once pass is written.
func interruptReplay(t *testing.T, pool *pgxpool.Pool, pass int) {
	t.Helper()
	_, err := readstore.NewReadModels(pool).Compare(t.Context(), readstore.ReplayOptions{Full: true, Shadow: true,
		Memory: 16 << 20, Resumable: true, Fingerprint: replayFingerprint(), AfterWrite: func(n int) error {
			if n == pass {
				return errInterrupted
			}
			return nil
		}})
	if !errors.Is(err, errInterrupted) {
		t.Fatalf("interrupted replay: %v", err)
	}
}

// `pitboss replay --full --swap` after an interrupted one says it resumes,
// from which pass and position, reports its progress with the passes and
// the events the interrupted one had done, and says at the swap how far
// it lagged the live head; with --restart it says it starts afresh.
func TestReplayCommandResumes(t *testing.T) {
	t.Parallel()
	pool, dsn := pgtest.NewDatabase(t)
	if _, err := eventstore.SeedEvents(t.Context(), pool, eventstore.SeedOptions{Events: 25000, Clients: 2,
		PlayersPerClient: 3, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	cfg := config{DatabaseURL: dsn, ReplayMemory: 16 << 20}
	run := func(args ...string) (string, string, error) {
		var out, errOut bytes.Buffer
		err := replay(context.Background(), cfg, args, &out, &errOut)
		return out.String(), errOut.String(), err
	}

	interruptReplay(t, pool, 2)
	out, progress, err := run("--full", "--swap", "--memory", "16MiB")
	if err != nil {
		t.Fatalf("replay: %v\n%s\n%s", err, out, progress)
	}
	for _, want := range []string{"pitboss replay: resuming from pass 2 of 3 (position 10000): passes 1-1 of an interrupted replay were complete\n"} {
		if !strings.Contains(progress, want) {
			t.Errorf("stderr lacks %q:\n%s", want, progress)
		}
	}
	for _, want := range []string{"rebuilt from 25000 events (head position 25000", "in 3 slice(s)",
		"resumed an interrupted replay after its pass 1 of 3 (position 10000)\n",
		"at the swap the rebuild (up to position 25000) lagged the live head (position 25000) by 0 events, 0s of event time"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	// The progress records' fields this test reads (internal/progress
	// writes them; its own tests check every field).
	type logLine struct {
		Msg     string `json:"msg"`
		Phase   string `json:"phase"`
		Done    int64  `json:"events_done"`
		Total   int64  `json:"events_total"`
		Pass    int    `json:"pass"`
		Passes  int    `json:"passes"`
		Resumed int64  `json:"events_resumed"`
	}
	records := map[string][]logLine{} // per phase
	for _, l := range strings.Split(progress, "\n") {
		if strings.HasPrefix(l, "{") {
			var r logLine
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("a progress record that is not JSON: %q (%v)", l, err)
			}
			records[r.Phase] = append(records[r.Phase], r)
		}
	}
	events, swap := records["events"], records["swap: keys, indexes, vacuum"]
	if len(events) < 2 || len(swap) < 2 || len(records) != 2 {
		t.Fatalf("progress records: %+v\n%s", records, progress)
	}
	first, last := events[0], events[len(events)-1]
	if first.Msg != "replay progress" || first.Pass != 2 || first.Passes != 3 || first.Resumed != 10000 || first.Total != 25000 ||
		last.Msg != "replay phase done" || last.Done != 25000 || last.Pass != 3 || last.Resumed != 10000 {
		t.Errorf("progress records of the events: first %+v, last %+v", first, last)
	}
	// The swap's steps: every key and index of the shadow tables, then a
	// vacuum of each; the first record before any is done.
	first, last = swap[0], swap[len(swap)-1]
	if first.Msg != "replay progress" || first.Done != 0 || first.Total < 20 ||
		last.Msg != "replay phase done" || last.Done != first.Total || last.Total != first.Total {
		t.Errorf("progress records of the swap: first %+v, last %+v", first, last)
	}
	if !strings.Contains(out, "of it building the keys and indexes)\n") {
		t.Errorf("stdout lacks the swap's time:\n%s", out)
	}

	interruptReplay(t, pool, 3)
	out, progress, err = run("--full", "--restart", "--memory", "16MiB", "--quiet")
	if !errors.Is(err, errDifferences) && err != nil {
		t.Fatalf("replay --restart: %v\n%s", err, progress)
	}
	if want := "pitboss replay: not resuming the interrupted replay (--restart): starting afresh, 3 passes\n"; progress != want {
		t.Errorf("stderr %q, want %q", progress, want)
	}
	if strings.Contains(out, "resumed") {
		t.Errorf("replay --restart resumed:\n%s", out)
	}
	var ee *exitError
	if _, _, err := run("--restart"); !errors.As(err, &ee) || ee.code != exitUsage {
		t.Errorf("replay --restart without --full: %v, want a usage error", err)
	}
}

// TestReplayKilledHelper is the replay process TestReplayKilledResumes
// kills: run with PITBOSS_TEST_KILL_REPLAY set to a database URL, it runs
// the rebuild `pitboss replay --full --memory 16MiB` runs and sends itself
// SIGKILL once its second slice is written, before it is recorded.
func TestReplayKilledHelper(t *testing.T) {
	dsn := os.Getenv("PITBOSS_TEST_KILL_REPLAY")
	if dsn == "" {
		t.Skip("run by TestReplayKilledResumes")
	}
	pool, err := pgxpool.New(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	_, err = readstore.NewReadModels(pool).Compare(t.Context(), readstore.ReplayOptions{Full: true, Shadow: true,
		Memory: 16 << 20, Resumable: true, Fingerprint: replayFingerprint(), AfterWrite: func(n int) error {
			if n == 2 {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {} // until the signal lands
			}
			return nil
		}})
	t.Fatalf("the replay was not killed: %v", err)
}

// A replay process killed (SIGKILL: no deferred cleanup, connections
// dropped) once its second slice was written resumes from that pass when
// `pitboss replay --full --swap` runs, and the read models it swaps in are
// those a fresh full rebuild makes: `pitboss replay --full` then finds no
// difference.
func TestReplayKilledResumes(t *testing.T) {
	t.Parallel()
	pool, dsn := pgtest.NewDatabase(t)
	if _, err := eventstore.SeedEvents(t.Context(), pool, eventstore.SeedOptions{Events: 25000, Clients: 2,
		PlayersPerClient: 3, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	child := exec.Command(os.Args[0], "-test.run=^TestReplayKilledHelper$", "-test.count=1")
	child.Env = append(os.Environ(), "PITBOSS_TEST_KILL_REPLAY="+dsn)
	out, err := child.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the replay process ended with %v, want killed:\n%s", err, out)
	}
	cfg := config{DatabaseURL: dsn, ReplayMemory: 16 << 20}
	var stdout, stderr bytes.Buffer
	if err := replay(t.Context(), cfg, []string{"--full", "--swap", "--memory", "16MiB", "--quiet"}, &stdout, &stderr); err != nil {
		t.Fatalf("replay: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if want := "pitboss replay: resuming from pass 2 of 3 (position 10000): passes 1-1 of an interrupted replay were complete\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	stdout.Reset()
	stderr.Reset()
	if err := replay(t.Context(), cfg, []string{"--full", "--quiet"}, &stdout, &stderr); err != nil {
		t.Fatalf("a fresh full rebuild differs from the resumed one swapped in: %v\n%s", err, stdout.String())
	}
	if !strings.Contains(stdout.String(), "\n0 differences\n") || stderr.Len() != 0 {
		t.Errorf("fresh rebuild after the swap:\n%s\n%s", stdout.String(), stderr.String())
	}
}
