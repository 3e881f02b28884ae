package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// The `provider` command: which signature scheme each game provider's
// wallet calls are checked by, and moving a provider to another
// (docs/provider-wallet.md#authentication). Straight on the database, as
// the client and key commands are.

const providerUsage = `usage:
  pitboss provider list
  pitboss provider set --id ID --signature-scheme v1|v2
  every command takes --json
`

// cliProvider is a provider as the command prints it (never its secret).
type cliProvider struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	Enabled         bool   `json:"enabled"`
	SignatureScheme string `json:"signature_scheme"`
}

func providerCommand(ctx context.Context, cfg config, args []string, out io.Writer) error {
	fs, err := subcommandFlags("provider", providerUsage, args, out)
	if err != nil {
		return err
	}
	asJSON := fs.Bool("json", false, "print JSON")
	id := fs.String("id", "", "provider id")
	scheme := fs.String("signature-scheme", "", "how its wallet calls are signed: "+strings.Join(gateway.SignatureSchemes, " or "))
	if err := parseFlags(fs, args[1:], out, out); err != nil {
		return err
	}
	switch args[0] {
	case "list", "set":
	default:
		fmt.Fprint(out, providerUsage)
		return fmt.Errorf("provider: unknown subcommand %q", args[0])
	}
	if args[0] == "set" {
		if err := domain.ValidateID("--id", *id); err != nil {
			return err
		}
		if err := gateway.CheckSignatureScheme("--signature-scheme", *scheme); err != nil {
			return cliError(err)
		}
	}
	pool, gw, err := adminStores(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()

	if args[0] == "set" {
		if err := gw.SetProviderSignatureScheme(ctx, *id, *scheme); err != nil {
			if errors.Is(err, domain.ErrNotFound) {
				return fmt.Errorf("no provider %q", *id)
			}
			return cliError(err)
		}
		if !*asJSON {
			fmt.Fprintf(out, "provider %s now signs with %s (API processes apply it within PITBOSS_PROVIDER_CACHE_TTL)\n", *id, *scheme)
			return nil
		}
	}
	all, err := gw.AllProviders(ctx)
	if err != nil {
		return err
	}
	vs := make([]cliProvider, 0, len(all))
	for _, p := range all {
		if args[0] == "set" && p.ID != *id {
			continue
		}
		vs = append(vs, cliProvider{ID: p.ID, Name: p.Name, Enabled: p.Enabled, SignatureScheme: p.SignatureScheme})
	}
	if *asJSON {
		if args[0] == "set" && len(vs) == 1 {
			return writeJSON(out, vs[0])
		}
		return writeJSON(out, map[string]any{"providers": vs})
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tENABLED\tSIGNATURE")
	for _, p := range vs {
		fmt.Fprintf(tw, "%s\t%s\t%v\t%s\n", p.ID, p.Name, p.Enabled, p.SignatureScheme)
	}
	return tw.Flush()
}
