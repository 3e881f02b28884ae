// Command pitboss is the Pitboss gateway: one binary, several roles.
//
//	pitboss serve [--roles api,relay]   run the service (all roles by default)
//	pitboss migrate                      apply database migrations
//	pitboss sandbox                      create the sandbox client, key and demo provider
//	pitboss receive [--addr 127.0.0.1:9999] [--secret S]...  print the callbacks and webhooks received
//	pitboss provider-sim --protocol P ...  play a session as a provider and check the answers
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
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
  provider  add a provider; list providers, their signature scheme and wallet protocol; set one
  game      set a game of the catalog (its provider, name, category, provider code)
  catalog   sync --provider ID [--dry-run]: a provider's games from its own game list (caleta)
  deal      add|list|history commission deal versions (flat or tiered, carry-forward)
  replay    rebuild the read models from the event store, compare with the live ones;
            --swap makes the rebuild live, --full applies every event up to the head
  verify    recompute the hash chain, check double entry, accounts, records and read models;
            exit 0 when all hold, 1 when a check fails, 2 when it cannot run; --json, --anchor;
            --checkpoint FILE|ID checks a signed checkpoint and the ledger against it
  export    write events as NDJSON with their bodies and hashes; --from-position/--to-position
            or --from/--to (RFC 3339), --output FILE
  checkpoint  sign the ledger's head now (the platform's checkpoint and each client's);
            checkpoint get --id ID prints one as JSON for an auditor
  checkpoint-key  list|rotate the Ed25519 checkpoint signing keys (rotate: a new active key)
  receive   a local receiver for forwarded callbacks and webhooks: prints each one and checks
            its signature (--secret, repeatable); --addr (default 127.0.0.1:9999); no database
  provider-sim  play a session as a provider on a wallet protocol (caleta, evolution, redtiger,
            pitboss) against a running Pitboss and check every answer; exit 1 on any deviation
  operator-sim  serve a reference operator wallet (valkyrie-pam, tbb) with fault injection

pitboss <command> --help shows a command's flags (exit 0); an unknown flag exits 2.
configuration comes from PITBOSS_* environment variables (see README.md).
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if code := exitStatus(err); code != 0 {
		fmt.Fprintln(os.Stderr, "pitboss:", err)
		os.Exit(code)
	}
}

// run dispatches to a subcommand. Every subcommand parses its flags first
// (parseFlags): --help prints its usage and runs nothing.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return &exitError{exitUsage, errors.New("no command given")}
	}
	if isHelp(args[0]) {
		fmt.Fprint(stdout, usage)
		return flag.ErrHelp
	}
	switch args[0] { // these need no configuration: they may run anywhere
	case "receive":
		return receive(ctx, args[1:], stdout, stderr)
	case "provider-sim":
		return providerSim(ctx, args[1:], stdout, stderr)
	case "operator-sim":
		return operatorSim(ctx, args[1:], stdout, stderr)
	}
	cfg, err := loadConfig()
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	switch args[0] {
	case "serve":
		return serve(ctx, cfg, args[1:])
	case "migrate":
		return migrate(ctx, cfg, args[1:], stdout, stderr)
	case "sandbox":
		return sandbox(ctx, cfg, args[1:], stdout, stderr)
	case "verify":
		return verify(ctx, cfg, args[1:], stdout, stderr)
	case "export":
		return export(ctx, cfg, args[1:], stdout, stderr)
	case "client":
		return clientCommand(ctx, cfg, args[1:], stdout)
	case "key":
		return keyCommand(ctx, cfg, args[1:], stdout)
	case "provider":
		if len(args) > 1 && args[1] == "add" {
			return providerAdd(ctx, cfg, args[2:], stdout)
		}
		return providerCommand(ctx, cfg, args[1:], stdout)
	case "game":
		return gameCommand(ctx, cfg, args[1:], stdout)
	case "catalog":
		return catalogCommand(ctx, cfg, args[1:], stdout)
	case "deal":
		return dealCommand(ctx, cfg, args[1:], stdout)
	case "checkpoint":
		return checkpointCommand(ctx, cfg, args[1:], stdout, stderr)
	case "checkpoint-key":
		return checkpointKeyCommand(ctx, cfg, args[1:], stdout, stderr)
	case "replay":
		return replay(ctx, cfg, args[1:], stdout, stderr)
	case "seed-events": // hidden: fills an empty event store for benchmarks
		return seedEvents(ctx, cfg, args[1:], stdout, stderr)
	}
	fmt.Fprint(stderr, usage)
	return &exitError{exitUsage, fmt.Errorf("unknown command %q", args[0])}
}
