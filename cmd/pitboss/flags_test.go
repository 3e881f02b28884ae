package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
)

// TestSubcommandFlags: every subcommand parses its flags before it does
// anything: -h/--help prints its usage and exits 0 without running it; an
// unknown flag or a stray argument exits 2 with the usage. The database URL
// points at a closed port and the context is cancelled before the call, so
// a subcommand that ran anyway would fail with a connection error, or stop
// at once (exit 0 without flag.ErrHelp), instead: never hang, and no clock
// needed to tell.
func TestSubcommandFlags(t *testing.T) {
	t.Setenv("PITBOSS_DATABASE_URL", "postgres://nobody:none@127.0.0.1:1/none?sslmode=disable&connect_timeout=1")
	commands := [][]string{{"serve"}, {"migrate"}, {"sandbox"}, {"verify"}, {"export"}, {"replay"}, {"seed-events"}, {"receive"},
		{"client", "create"}, {"client", "list"}, {"key", "issue"}, {"key", "revoke"}}
	type tc struct {
		name   string
		args   []string
		status int
		usage  string // text the usage output has
	}
	var cases []tc
	for _, c := range commands {
		name := strings.Join(c, " ")
		for _, h := range []string{"-h", "--help", "-help"} {
			cases = append(cases, tc{name + " " + h, append(append([]string{}, c...), h), 0, "usage: pitboss " + name})
		}
		cases = append(cases,
			tc{name + " with an unknown flag", append(append([]string{}, c...), "--no-such-flag"), 2, "usage: pitboss " + name},
			tc{name + " with a flag after help", append(append([]string{}, c...), "--help", "--no-such-flag"), 0, "usage: pitboss " + name})
	}
	cases = append(cases,
		tc{"sandbox with a stray argument", []string{"sandbox", "now"}, 2, "usage: pitboss sandbox"},
		tc{"migrate with a stray argument", []string{"migrate", "up"}, 2, "usage: pitboss migrate"},
		tc{"top-level --help", []string{"--help"}, 0, "usage: pitboss <command>"},
		tc{"top-level help", []string{"help"}, 0, "usage: pitboss <command>"},
		tc{"no command", nil, 2, "usage: pitboss <command>"},
		tc{"unknown command", []string{"frobnicate"}, 2, "usage: pitboss <command>"},
		tc{"client --help", []string{"client", "--help"}, 0, "pitboss client create"},
		tc{"key -h", []string{"key", "-h"}, 0, "pitboss key issue"},
		tc{"serve with a bad roles value is not a usage error", []string{"serve", "--roles", "nope"}, 1, ""},
		tc{"replay with a memory budget that is no size", []string{"replay", "--memory", "lots"}, 2, "usage: pitboss replay"},
		tc{"replay with a memory budget under 16MiB", []string{"replay", "--memory", "1MB"}, 2, "usage: pitboss replay"},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			err := run(ctx, c.args, &stdout, &stderr)
			if got := exitStatus(err); got != c.status {
				t.Fatalf("exit %d (%v), want %d\nstdout: %s\nstderr: %s", got, err, c.status, stdout.String(), stderr.String())
			}
			if c.status == 0 && !errors.Is(err, flag.ErrHelp) {
				t.Errorf("err %v, want flag.ErrHelp", err)
			}
			cmd := ""
			if len(c.args) > 0 {
				cmd = c.args[0]
			}
			if c.usage == "" || cmd == "serve" { // serve writes to the process's own stdout/stderr
				return
			}
			// Help goes to stdout, a usage error to stderr (client and key
			// write both to their one output).
			out := stdout.String()
			if c.status != 0 && cmd != "client" && cmd != "key" {
				out = stderr.String()
			}
			if !strings.Contains(out, c.usage) {
				t.Errorf("output lacks %q:\nstdout: %s\nstderr: %s", c.usage, stdout.String(), stderr.String())
			}
		})
	}
}

// A memory budget is a size with a unit, or megabytes without one.
func TestParseBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64 // 0: an error
	}{
		{"512MB", 512e6}, {"512", 512e6}, {"2GiB", 2 << 30}, {"768 mib", 768 << 20}, {"1.5GB", 1.5e9},
		{"16MiB", 16 << 20}, {"1MB", 0}, {"0", 0}, {"-1GB", 0}, {"lots", 0}, {"5TB", 0}, {"", 0},
	} {
		got, err := parseBytes(tc.in)
		if tc.want == 0 && err == nil || tc.want != 0 && (err != nil || got != tc.want) {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestPeakMemory(t *testing.T) {
	b, ok := peakMemory()
	if !ok || b < 1<<20 {
		t.Fatalf("peak memory %d bytes (ok %v): this process holds more than a megabyte", b, ok)
	}
	var out strings.Builder
	reportPeakMemory(&out, "replay")
	if !strings.HasPrefix(out.String(), "replay: peak memory ") || !strings.HasSuffix(out.String(), " MB (resident, VmHWM)\n") {
		t.Fatalf("report %q", out.String())
	}
}
