// Command pitboss is the Pitboss gateway: one binary, several roles.
//
//	pitboss serve [--roles api,relay]   run the service (all roles by default)
//	pitboss migrate                      apply database migrations
//	pitboss sandbox                      create the sandbox client, key and demo provider
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage: pitboss <command> [flags]

commands:
  serve     run the service; --roles picks roles (api,relay,forwarder,projector); default all
  migrate   apply database migrations and exit
  sandbox   create the sandbox client, its API key and the demo provider (idempotent)
  client    create|list|get|set clients (plan tier, callback URL, signed-launch settings)
  key       issue|rotate|revoke|list a client's API keys (a new key is printed once)
  replay    rebuild the read models from the event store, compare with the live ones;
            --swap makes the rebuild live, --full applies every event up to the head
  verify    recompute the hash chain, check double entry, accounts, records and read models;
            exit 0 when all hold, 1 when a check fails, 2 when it cannot run; --json, --anchor
  export    write events as NDJSON with their bodies and hashes; --from-position/--to-position
            or --from/--to (RFC 3339), --output FILE

configuration comes from PITBOSS_* environment variables (see README.md).
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pitboss:", err)
		code := 1
		var ec interface{ ExitCode() int }
		if errors.As(err, &ec) {
			code = ec.ExitCode()
		}
		os.Exit(code)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return fmt.Errorf("no command given")
	}
	cfg, err := loadConfig()
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	switch args[0] {
	case "serve":
		return serve(ctx, cfg, args[1:])
	case "migrate":
		return migrate(ctx, cfg)
	case "sandbox":
		return sandbox(ctx, cfg, os.Stdout)
	case "verify":
		return verify(ctx, cfg, args[1:], os.Stdout, os.Stderr)
	case "export":
		return export(ctx, cfg, args[1:], os.Stdout, os.Stderr)
	case "client":
		return clientCommand(ctx, cfg, args[1:], os.Stdout)
	case "key":
		return keyCommand(ctx, cfg, args[1:], os.Stdout)
	case "replay":
		return replay(ctx, cfg, args[1:], os.Stdout, os.Stderr)
	case "seed-events": // hidden: fills an empty event store for benchmarks
		return seedEvents(ctx, cfg, args[1:], os.Stdout)
	case "help", "-h", "--help":
		fmt.Print(usage)
		return nil
	}
	fmt.Fprint(os.Stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
