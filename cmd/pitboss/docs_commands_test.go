package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The command blocks of docs/provider-onboarding.md, run as a sandbox
// operator types them after `make run`.

// onboardingDoc is the page whose command blocks
// TestProviderOnboardingCommands runs.
const onboardingDoc = "../../docs/provider-onboarding.md"

// docsBinEnv marks a re-executed test binary as `bin/pitboss`.
const docsBinEnv = "PITBOSS_TEST_DOCS_BIN"

// runnableBlocks are the page's fenced blocks a sandbox operator types as
// they are: every line is blank, a comment, a `bin/pitboss` or `openssl`
// command, or the continuation of a line ending in a backslash. That skips
// `make run` and `source scripts/env.sh` (the test does what they do), the
// production example (bare `pitboss` with placeholders such as
// OUR-OPERATOR-ID) and the output samples.
func runnableBlocks(doc string) []string {
	var blocks []string
	var block []string
	inside := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			if inside && runnable(block) {
				blocks = append(blocks, strings.Join(block, "\n")+"\n")
			}
			inside, block = !inside, nil
			continue
		}
		if inside {
			block = append(block, line)
		}
	}
	return blocks
}

func runnable(block []string) bool {
	commands, continued := 0, false
	for _, line := range block {
		trimmed := strings.TrimSpace(line)
		switch {
		case continued:
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
		case strings.HasPrefix(line, "bin/pitboss ") || strings.HasPrefix(line, "openssl "):
			commands++
		default:
			return false
		}
		continued = strings.HasSuffix(trimmed, `\`)
	}
	return commands > 0
}

// TestRunnableBlocks: the rule picks command blocks only.
func TestRunnableBlocks(t *testing.T) {
	t.Parallel()
	doc := "```\nmake run\n```\n```\nbin/pitboss provider set --id demo \\\n  --wallet-protocol tbb\n\n# again\nopenssl rand -hex 24 > x\n```\n" +
		"```\npitboss provider list\n```\n```\nok     balance\n```\n```\n```\n"
	got := runnableBlocks(doc)
	want := "bin/pitboss provider set --id demo \\\n  --wallet-protocol tbb\n\n# again\nopenssl rand -hex 24 > x\n"
	if len(got) != 1 || got[0] != want {
		t.Fatalf("blocks %q, want [%q]", got, want)
	}
}

// TestProviderOnboardingCommands runs the command blocks of
// docs/provider-onboarding.md, in order, each with `bash -e`, in a folder
// laid out like the repository after `make run` (its `.data/` holds the
// sandbox key and the demo provider's secret that `pitboss sandbox`
// writes), against `pitboss serve` on real Postgres and Kafka. bin/pitboss
// is this test binary re-executed as the command; every block exits 0, so
// the simulator found no deviation on any protocol.
func TestProviderOnboardingCommands(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Fatalf("openssl: %v (the Caleta block needs it)", err)
	}
	doc, err := os.ReadFile(onboardingDoc)
	if err != nil {
		t.Fatal(err)
	}
	blocks := runnableBlocks(string(doc))
	all := strings.Join(blocks, "")
	for _, p := range []string{"pitboss", "evolution", "redtiger", "tbb", "caleta"} {
		if !regexp.MustCompile(`(?m)^bin/pitboss provider-sim --protocol ` + p + ` `).MatchString(all) {
			t.Fatalf("no provider-sim run of %s among the runnable blocks:\n%s", p, all)
		}
	}
	for _, c := range []string{"openssl genpkey ", "bin/pitboss provider add ", "bin/pitboss game set ",
		"bin/pitboss provider set --id demo --wallet-protocol pitboss\n"} {
		if !strings.Contains(all, c) {
			t.Fatalf("no %q among the runnable blocks:\n%s", c, all)
		}
	}

	root := t.TempDir()
	cfg, _ := testConfig(t)
	cfg.DataDir = filepath.Join(root, ".data")
	// No provider cache: a block's `provider set` holds for the simulator
	// started right after it (the page asks a person to wait a second).
	cfg.ProviderCacheTTL = 0
	// What `make run` (scripts/run.sh) does before serve.
	if err := migrate(t.Context(), cfg, nil, io.Discard, io.Discard); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if err := sandbox(t.Context(), cfg, nil, io.Discard, io.Discard); err != nil {
		t.Fatalf("sandbox: %v", err)
	}
	startServe(t, cfg, "api")
	writeDocsBin(t, root)

	env := append(os.Environ(),
		docsBinEnv+"=1",
		"PITBOSS_DATABASE_URL="+cfg.DatabaseURL,
		"PITBOSS_KAFKA_BROKERS="+strings.Join(cfg.KafkaBrokers, ","),
		"PITBOSS_KAFKA_TOPIC="+cfg.Topic,
		"PITBOSS_DATA_DIR="+cfg.DataDir,
		"PITBOSS_HTTP_ADDR="+cfg.HTTPAddr,
		"PITBOSS_PUBLIC_URL="+cfg.PublicURL,
		"PITBOSS_SECRET_KEY="+cfg.SecretKey,
		"PITBOSS_PROVIDER_CACHE_TTL=0s",
		"PITBOSS_LOG_LEVEL=warn",
	)
	for i, block := range blocks {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "-e", "-c", block)
		cmd.Dir, cmd.Env = root, env
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("block %d of %s failed: %v\n--- block\n%s--- output\n%s", i+1, onboardingDoc, err, block, out)
		}
	}
}

// writeDocsBin makes root/bin/pitboss: this test binary, re-executed as
// the pitboss command (TestProviderOnboardingBin).
func writeDocsBin(t *testing.T, root string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("#!/bin/sh\nexec '%s' -test.run='^TestProviderOnboardingBin$' -test.count=1 -- \"$@\"\n",
		strings.ReplaceAll(self, "'", `'\''`))
	if err := os.WriteFile(filepath.Join(root, "bin", "pitboss"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestProviderOnboardingBin is `bin/pitboss` for
// TestProviderOnboardingCommands: main's run on the arguments after "--",
// with main's exit status (provider-sim finds the test's server by
// PITBOSS_PUBLIC_URL, as the doc's commands rely on).
func TestProviderOnboardingBin(t *testing.T) {
	if os.Getenv(docsBinEnv) == "" {
		t.Skip("run as bin/pitboss by TestProviderOnboardingCommands")
	}
	var args []string
	for i, a := range os.Args {
		if a == "--" {
			args = os.Args[i+1:]
			break
		}
	}
	err := run(context.Background(), args, os.Stdout, os.Stderr)
	if code := exitStatus(err); code != 0 {
		fmt.Fprintln(os.Stderr, "pitboss:", err)
		os.Exit(code)
	}
}
