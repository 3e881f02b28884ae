package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/pitboss/pitboss/adapters/postgres"
	"github.com/pitboss/pitboss/adapters/postgres/auditstore"
	"github.com/pitboss/pitboss/audit"
)

// checkpointCommand is `pitboss checkpoint [make]` (sign the ledger's head
// now: the platform's checkpoint and each client's) and `pitboss
// checkpoint get --id ID` (print one as JSON, the record an auditor verifies).
func checkpointCommand(ctx context.Context, cfg config, args []string, stdout, stderr io.Writer) error {
	sub := "make"
	if len(args) > 0 && !isFlag(args[0]) && !isHelp(args[0]) {
		sub, args = args[0], args[1:]
	}
	if sub != "make" && sub != "get" {
		return &exitError{exitUsage, fmt.Errorf("usage: pitboss checkpoint [make] | pitboss checkpoint get --id ID (unknown subcommand %q)", sub)}
	}
	fs := flag.NewFlagSet("checkpoint "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var id int64
	if sub == "get" {
		fs.Int64Var(&id, "id", 0, "the checkpoint's id")
	}
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if sub == "get" && id < 1 {
		return &exitError{exitUsage, errors.New("checkpoint get: --id must be a checkpoint id (a positive integer)")}
	}
	pool, err := postgres.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	defer pool.Close()
	if sub == "get" {
		cp, err := auditstore.NewCheckpoints(pool, nil).Get(ctx, id)
		if err != nil {
			return err
		}
		return writeJSON(stdout, cp.Record())
	}
	box, err := cfg.secretBox(cfg.logger())
	if err != nil {
		return err
	}
	res, err := auditstore.NewCheckpoints(pool, box).Make(ctx)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	p := res.Platform
	fmt.Fprintf(stdout, "checkpoint %d: position %d, chain hash %x, signed %s with key %s; %d client checkpoints\n",
		p.ID, p.Position, p.ChainHash, p.SignedAt.Format(audit.CheckpointTimeLayout), p.KeyID, res.Clients)
	return nil
}

// checkpointKeyCommand is `pitboss checkpoint-key list|rotate`.
func checkpointKeyCommand(ctx context.Context, cfg config, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "list" && args[0] != "rotate") {
		if len(args) > 0 && isHelp(args[0]) {
			fmt.Fprintln(stdout, "usage: pitboss checkpoint-key list|rotate")
			return flag.ErrHelp
		}
		return &exitError{exitUsage, errors.New("usage: pitboss checkpoint-key list|rotate")}
	}
	fs := flag.NewFlagSet("checkpoint-key "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := parseFlags(fs, args[1:], stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &exitError{exitUsage, fmt.Errorf("checkpoint-key %s: unexpected arguments %q", args[0], fs.Args())}
	}
	pool, err := postgres.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	defer pool.Close()
	if args[0] == "rotate" {
		box, err := cfg.secretBox(cfg.logger())
		if err != nil {
			return err
		}
		k, err := auditstore.NewCheckpoints(pool, box).RotateKey(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "checkpoint key %s is active from now on; older keys stay listed\n%s", k.KeyID, audit.PublicKeyPEM(k.PublicKey))
		return nil
	}
	keys, err := auditstore.NewCheckpoints(pool, nil).Keys(ctx)
	if err != nil {
		return err
	}
	for _, k := range keys {
		state := "retired"
		if k.Active {
			state = "active"
		}
		fmt.Fprintf(stdout, "%s  %s  %s\n%s", k.KeyID, k.CreatedAt.Format(audit.CheckpointTimeLayout), state, audit.PublicKeyPEM(k.PublicKey))
	}
	return nil
}

// verifyCheckpoint is `pitboss verify --checkpoint FILE|ID`: the signature,
// with the public key the database lists under the payload's key id (a
// file's own key must be that one), then the ledger against the payload.
func verifyCheckpoint(ctx context.Context, cfg config, arg string, asJSON bool, batch int, stdout io.Writer) error {
	var rec audit.CheckpointRecord
	id, idErr := strconv.ParseInt(arg, 10, 64)
	pool, err := postgres.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		return &exitError{exitVerifyError, fmt.Errorf("postgres: %w", err)}
	}
	defer pool.Close()
	cps := auditstore.NewCheckpoints(pool, nil)
	if idErr == nil && id > 0 {
		cp, err := cps.Get(ctx, id)
		if err != nil {
			return &exitError{exitVerifyError, err}
		}
		rec = cp.Record()
	} else {
		raw, err := os.ReadFile(arg)
		if err != nil {
			return &exitError{exitVerifyError, fmt.Errorf("--checkpoint: %w", err)}
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			return &exitError{exitVerifyError, fmt.Errorf("--checkpoint %s: not a checkpoint record: %w", arg, err)}
		}
	}
	type outcome struct {
		OK         bool                   `json:"ok"`
		Checkpoint audit.CheckpointRecord `json:"checkpoint"`
		Signature  string                 `json:"signature"` // "ok" or what is wrong
		Checks     []audit.CheckResult    `json:"checks,omitempty"`
	}
	out := outcome{Checkpoint: rec, Signature: "ok"}
	p, sigErr := checkCheckpointSignature(ctx, cps, rec)
	if sigErr != nil {
		out.Signature = sigErr.Error()
	} else {
		checks, err := auditstore.NewAudit(pool).VerifyCheckpoint(ctx, p, batch)
		if err != nil {
			return &exitError{exitVerifyError, err}
		}
		out.Checks = checks
		out.OK = true
		for _, c := range checks {
			out.OK = out.OK && c.OK
		}
	}
	if asJSON {
		if err := writeJSON(stdout, out); err != nil {
			return &exitError{exitVerifyError, err}
		}
	} else {
		verdict := "OK"
		if !out.OK {
			verdict = "FAILED"
		}
		fmt.Fprintf(stdout, "verify checkpoint %s: key %s\n", verdict, rec.KeyID)
		fmt.Fprintf(stdout, "  %-4s signature  %s\n", okWord(sigErr == nil), out.Signature)
		if sigErr == nil {
			fmt.Fprintf(stdout, "       %s checkpoint of %s at position %d, chain hash %s, signed %s\n",
				p.Scope, orPlatform(p.ClientID), p.Position, p.ChainHash, p.SignedAt)
		}
		for _, c := range out.Checks {
			fmt.Fprintf(stdout, "  %-4s %-19s %d rows, %d broken\n", okWord(c.OK), c.Name, c.Rows, c.Failures)
			if f, ok := c.First(); ok {
				fmt.Fprintf(stdout, "       first position %d: %s\n", f.Position, f.Message)
			}
		}
	}
	if !out.OK {
		return &exitError{exitVerifyFailed, errors.New("checkpoint verification failed: the signature or the ledger does not hold up (see the report)")}
	}
	return nil
}

func checkCheckpointSignature(ctx context.Context, cps *auditstore.Checkpoints, rec audit.CheckpointRecord) (audit.CheckpointPayload, error) {
	payload, sig, pub, err := rec.Decode()
	if err != nil {
		return audit.CheckpointPayload{}, err
	}
	listed, err := cps.PublicKey(ctx, rec.KeyID)
	if err != nil {
		return audit.CheckpointPayload{}, fmt.Errorf("key %s is not a listed checkpoint key: %w", rec.KeyID, err)
	}
	if !bytes.Equal(listed, pub) {
		return audit.CheckpointPayload{}, fmt.Errorf("the record's public key is not the key listed as %s", rec.KeyID)
	}
	return audit.VerifyCheckpointSignature(payload, sig, listed)
}

func okWord(ok bool) string {
	if ok {
		return "ok"
	}
	return "FAIL"
}

func orPlatform(client string) string {
	if client == "" {
		return "the platform"
	}
	return "client " + client
}

func isFlag(s string) bool { return len(s) > 0 && s[0] == '-' }
