package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/operatorsim"
)

// `pitboss operator-sim`: a reference operator wallet (a seamless
// client's PAM) that Pitboss calls, for operators to rehearse with and for
// our tests and chaos runs. It needs no configuration of ours. The logic
// is in operatorsim; this file reads the command line and prints how to
// call it.

const operatorSimUsage = `usage: pitboss operator-sim --protocol valkyrie-pam|tbb [--listen 127.0.0.1:9300]
                          [--token T | --token-file F] [--secret S | --secret-file F] [--state PATH]
                          [--players N --balance X --currency C] [--latency 5ms] [--fault-timeout R]
                          [--fault-5xx R] [--fault-lost R] [--fault-restart R] [flags]
serves an operator wallet on the protocol until Ctrl-C; a fault rule R is a probability (0.05) or
every N-th call (1/7); the admin API is under /_sim/ (state, players, faults, restart)
`

// operatorSimFlags are the command line's values.
type operatorSimFlags struct {
	cfg                                operatorsim.Config
	listen, currencies                 string
	token, secret, admin               secretFlag
	timeout, error5xx, lost, restart   *string
	latency, timeoutHold, restartPause *time.Duration
	seed                               *uint64
	errorStatus, lostStatus            *int
}

func parseOperatorSimFlags(args []string, stdout, stderr io.Writer) (*operatorSimFlags, error) {
	fs := flag.NewFlagSet("operator-sim", flag.ContinueOnError)
	o := &operatorSimFlags{}
	fs.StringVar(&o.cfg.Protocol, "protocol", "", "the wallet protocol: "+strings.Join(operatorsim.Protocols, ", "))
	fs.StringVar(&o.listen, "listen", "127.0.0.1:9300", "address to listen on (port 0 picks one)")
	o.token = newSecretFlag(fs, "token", "the PAM API token (valkyrie-pam; generated when not given)")
	o.secret = newSecretFlag(fs, "secret", "the shared secret of X-REQUEST-SIGN (tbb; generated when not given)")
	o.admin = newSecretFlag(fs, "admin-token", "the bearer token of /_sim/ (default: the API token or secret)")
	fs.StringVar(&o.cfg.StatePath, "state", "", "state file, written after every movement and read at start; "+
		"empty: memory only")
	fs.IntVar(&o.cfg.Players, "players", 1, "players player-1..player-N created when missing")
	fs.StringVar(&o.cfg.Balance, "balance", "1000.00", "each created player's cash balance")
	fs.StringVar(&o.cfg.Currency, "currency", "EUR", "the created players' currency")
	fs.StringVar(&o.currencies, "currencies", "", "more currencies and their decimals: XYZ:8,ABC:2")
	fs.StringVar(&o.cfg.Country, "country", "MT", "the country PAM's session answers")
	fs.StringVar(&o.cfg.Language, "language", "EN", "the language PAM's session answers")
	o.latency = fs.Duration("latency", 0, "latency added to every wallet call")
	o.timeout = fs.String("fault-timeout", "", "rule: hold a call unapplied until the client gives up")
	o.error5xx = fs.String("fault-5xx", "", "rule: answer a 5xx without applying")
	o.lost = fs.String("fault-lost", "", "rule: apply, then lose the answer")
	o.restart = fs.String("fault-restart", "", "rule: drop the call and restart from the state file")
	o.seed = fs.Uint64("fault-seed", 1, "seed of the fault probabilities")
	o.timeoutHold = fs.Duration("timeout-hold", 30*time.Second, "longest hold of a timed-out call")
	o.restartPause = fs.Duration("restart-pause", 200*time.Millisecond, "how long a restart stays down")
	o.errorStatus = fs.Int("error-status", 500, "the status of --fault-5xx")
	o.lostStatus = fs.Int("lost-status", 0, "the status of --fault-lost (0: drop the connection)")
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, "\n"+operatorSimUsage)
		}
		return nil, err
	}
	if err := o.complete(); err != nil {
		fmt.Fprint(stderr, operatorSimUsage)
		return nil, &exitError{exitUsage, fmt.Errorf("operator-sim: %w", err)}
	}
	return o, nil
}

// complete reads the credentials, currencies and fault rules into cfg.
func (o *operatorSimFlags) complete() error {
	var err error
	c := &o.cfg
	if c.APIToken, err = o.token.read("token"); err != nil {
		return err
	}
	if c.Secret, err = o.secret.read("secret"); err != nil {
		return err
	}
	if c.AdminToken, err = o.admin.read("admin-token"); err != nil {
		return err
	}
	if c.Protocol == operatorsim.ProtocolValkyriePAM && c.APIToken == "" {
		c.APIToken = newSimCredential(20)
	}
	if c.Protocol == operatorsim.ProtocolTBB && c.Secret == "" {
		c.Secret = newSimCredential(32)
	}
	for _, pair := range strings.Split(o.currencies, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		code, exp, ok := strings.Cut(strings.ToUpper(strings.TrimSpace(pair)), ":")
		e, perr := strconv.Atoi(exp)
		if !ok || perr != nil {
			return fmt.Errorf("--currencies: %q is not CODE:DECIMALS", pair)
		}
		if err := domain.RegisterCurrency(code, e); err != nil {
			return fmt.Errorf("--currencies: %w", err)
		}
	}
	f := &c.Faults
	f.Latency, f.TimeoutHold, f.RestartPause, f.Seed = *o.latency, *o.timeoutHold, *o.restartPause, *o.seed
	f.ErrorStatus, f.LostAnswerStatus = *o.errorStatus, *o.lostStatus
	for _, r := range []struct {
		name, text string
		to         *operatorsim.Rule
	}{{"fault-timeout", *o.timeout, &f.Timeout}, {"fault-5xx", *o.error5xx, &f.Error5xx},
		{"fault-lost", *o.lost, &f.LostAnswer}, {"fault-restart", *o.restart, &f.Restart}} {
		if *r.to, err = operatorsim.ParseRule(r.text); err != nil {
			return fmt.Errorf("--%s: %w", r.name, err)
		}
	}
	return nil
}

func newSimCredential(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// operatorSim serves the simulator until ctx ends (SIGINT, SIGTERM).
func operatorSim(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseOperatorSimFlags(args, stdout, stderr)
	if err != nil {
		return err
	}
	o.cfg.Logger = slog.New(slog.NewTextHandler(stdout, nil))
	sim, err := operatorsim.New(o.cfg)
	if err != nil {
		fmt.Fprint(stderr, operatorSimUsage)
		return &exitError{exitUsage, fmt.Errorf("operator-sim: %w", err)}
	}
	base, err := sim.Start(ctx, o.listen)
	if err != nil {
		return fmt.Errorf("operator-sim: %w", err)
	}
	printOperatorSim(stdout, sim, o, base)
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := sim.Close(sctx); err != nil {
		return fmt.Errorf("operator-sim: %w", err)
	}
	fmt.Fprintln(stdout, "pitboss operator-sim: stopped")
	return nil
}

// printOperatorSim says how to call the simulator: its URL, credential,
// a sample player and its token, and a first call to try.
func printOperatorSim(w io.Writer, sim *operatorsim.Sim, o *operatorSimFlags, base string) {
	c := o.cfg
	state := c.StatePath
	if state == "" {
		state = "memory only"
	}
	admin := c.AdminToken
	if admin == "" {
		admin = map[string]string{operatorsim.ProtocolValkyriePAM: c.APIToken, operatorsim.ProtocolTBB: c.Secret}[c.Protocol]
	}
	fmt.Fprintf(w, "pitboss operator-sim: %s operator wallet at %s (state: %s); Ctrl-C stops\n", c.Protocol, base, state)
	players := sim.Players()
	var player, token, balance string
	if len(players) > 0 {
		p := players[0]
		player = p.ID
		for code := range p.Accounts {
			balance = code
		}
		if len(p.Tokens) > 0 {
			token = p.Tokens[0].Token
			balance = p.Tokens[0].Currency
		}
		if m, err := sim.Balance(p.ID, balance); err == nil {
			balance += " " + m.String()
		}
	}
	switch c.Protocol {
	case operatorsim.ProtocolValkyriePAM:
		fmt.Fprintf(w, "  API token:  Authorization: Bearer %s\n", c.APIToken)
		if player != "" {
			fmt.Fprintf(w, "  player:     %s  %s  X-Player-Token: %s\n", player, balance, token)
			fmt.Fprintf(w, "  try:        curl -H 'Authorization: Bearer %s' -H 'X-Player-Token: %s' -H 'X-Correlation-ID: try-1' "+
				"'%s/players/%s/balance?provider=demo'\n", c.APIToken, token, base, player)
		}
	case operatorsim.ProtocolTBB:
		fmt.Fprintf(w, "  secret:     %s  (X-REQUEST-SIGN: hex HMAC-SHA256 of the raw body)\n", c.Secret)
		fmt.Fprintf(w, "  wallet:     POST %s/operator/wallet  (action balance, bet, win, refund, rollback-win)\n", base)
		if player != "" {
			fmt.Fprintf(w, "  player:     %s  %s\n", player, balance)
			fmt.Fprintf(w, "  try:        body='{\"action\":\"balance\",\"player_id\":\"%s\",\"currency_code\":\"%s\",\"is_mobile\":false,"+
				"\"reference\":\"demo\",\"session_token\":\"try\"}'; curl -H \"X-REQUEST-SIGN: $(printf %%s \"$body\" | "+
				"openssl dgst -sha256 -hmac '%s' -r | cut -d' ' -f1)\" -H 'Content-Type: application/json' -d \"$body\" %s/operator/wallet\n",
				player, strings.Fields(balance)[0], c.Secret, base)
		}
	}
	if player == "" {
		fmt.Fprintln(w, "  players:    none yet; create one with POST /_sim/players")
	}
	fmt.Fprintf(w, "  admin:      curl -H 'Authorization: Bearer %s' %s/_sim/state   (also /_sim/players, /_sim/faults, "+
		"/_sim/restart)\n", admin, base)
}
