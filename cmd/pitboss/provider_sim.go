package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/pitboss/pitboss/providersim"
)

// `pitboss provider-sim`: the provider simulator, our conformance kit
// (docs/provider-onboarding.md). It needs no configuration of ours: it is
// a client of a running Pitboss, as a game provider is. The logic is in
// providersim; this file only reads the command line.

const providerSimUsage = `usage: pitboss provider-sim --protocol caleta|evolution|redtiger|pitboss --provider ID --game GAME
                          --api-key-file FILE [--client-secret-file FILE]
                          (--private-key-file KEY.pem | --provider-secret-file FILE) [flags]
plays a launched session of spins against a running Pitboss as the provider would, checks every
answer against the protocol's document; exit 0 with no deviation, 1 on any, 2 on a usage error
`

// secretFlag is a credential given on the command line or, better (the
// process list shows arguments), in a file.
type secretFlag struct{ value, file *string }

func newSecretFlag(fs *flag.FlagSet, name, what string) secretFlag {
	return secretFlag{value: fs.String(name, "", what+" (prefer --"+name+"-file)"),
		file: fs.String(name+"-file", "", "file holding "+what)}
}

func (s secretFlag) read(name string) (string, error) {
	if *s.file == "" {
		return *s.value, nil
	}
	if *s.value != "" {
		return "", fmt.Errorf("give --%s or --%s-file, not both", name, name)
	}
	b, err := os.ReadFile(*s.file)
	if err != nil {
		return "", fmt.Errorf("--%s-file: %w", name, err)
	}
	return strings.TrimSpace(string(b)), nil
}

func providerSim(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("provider-sim", flag.ContinueOnError)
	var cfg providersim.Config
	fs.StringVar(&cfg.Protocol, "protocol", "", "the provider's wallet protocol: "+strings.Join(providersim.Protocols, ", "))
	fs.StringVar(&cfg.BaseURL, "base-url", env("PITBOSS_PUBLIC_URL", "http://127.0.0.1:8080"),
		"Pitboss's public address (PITBOSS_PUBLIC_URL)")
	fs.StringVar(&cfg.Provider, "provider", "", "the provider's id")
	fs.StringVar(&cfg.Game, "game", "", "a game of the provider (our catalog id) to launch")
	fs.StringVar(&cfg.Player, "player", "sim-player", "the client's player id")
	fs.StringVar(&cfg.Currency, "currency", "EUR", "the session's currency")
	fs.StringVar(&cfg.Balance, "balance", "100.00", "the player's balance the launch sets (seamless: what the operator holds)")
	fs.StringVar(&cfg.SessionToken, "session-token", "", "a seamless client's own session token of the player: "+
		"launch with POST /api/v1/game/launch (docs/seamless-wallet.md)")
	fs.IntVar(&cfg.Spins, "spins", 20, "bet-and-win rounds to play")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the amounts and outcomes (ids are fresh on every run)")
	fs.DurationVar(&cfg.Timeout, "timeout", 10*time.Second, "bound of each HTTP call")
	apiKey := newSecretFlag(fs, "api-key", "the client's API key (scope launch)")
	clientSecret := newSecretFlag(fs, "client-secret", "the client's signed-launch secret; without it the launch is unsigned")
	providerSecret := newSecretFlag(fs, "provider-secret", "the provider's secret (pitboss, evolution, redtiger)")
	keyFile := fs.String("private-key-file", "", "PEM file of the provider's RSA private key (caleta)")
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, "\n"+providerSimUsage)
		}
		return err
	}
	usageErr := func(err error) error {
		fmt.Fprint(stderr, providerSimUsage)
		return &exitError{exitUsage, fmt.Errorf("provider-sim: %w", err)}
	}
	var err error
	if cfg.APIKey, err = apiKey.read("api-key"); err != nil {
		return usageErr(err)
	}
	if cfg.ClientSecret, err = clientSecret.read("client-secret"); err != nil {
		return usageErr(err)
	}
	if cfg.Secret, err = providerSecret.read("provider-secret"); err != nil {
		return usageErr(err)
	}
	if *keyFile != "" {
		b, err := os.ReadFile(*keyFile)
		if err != nil {
			return usageErr(fmt.Errorf("--private-key-file: %w", err))
		}
		if cfg.PrivateKey, err = providersim.ParsePrivateKey(b); err != nil {
			return usageErr(fmt.Errorf("--private-key-file: %w", err))
		}
	}
	cfg.Out = stdout
	rep, err := providersim.Run(ctx, cfg)
	if errors.Is(err, providersim.ErrConfig) {
		return usageErr(err)
	}
	if rep != nil && rep.Session != "" {
		fmt.Fprintf(stdout, "\n%s: %d wallet calls in session %s, %d booked, balance %s -> %s %s, %d deviations\n",
			rep.Protocol, rep.Calls, rep.Session, len(rep.Booked), rep.Start, rep.Final, strings.ToUpper(cfg.Currency),
			len(rep.Deviations))
		for _, d := range rep.Deviations {
			fmt.Fprintf(stdout, "  DEVIATION %s\n", d)
		}
	}
	if err != nil {
		return err
	}
	if n := len(rep.Deviations); n > 0 {
		return fmt.Errorf("provider-sim: %d deviations from the %s protocol's document", n, cfg.Protocol)
	}
	return nil
}
