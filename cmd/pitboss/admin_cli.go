package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pitboss/pitboss/adapters/postgres/deliverystore"
	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// The `client` and `key` commands: the admin API's client and key
// operations, straight on the database (no running server, no admin
// token: whoever can reach the database is an administrator already).
// Every command takes --json for machine-readable output.

const clientUsage = `usage:
  pitboss client create --id ID --name NAME [--environment sandbox|production] [--plan TIER]
  pitboss client list [--page N] [--per-page N]
  pitboss client get --id ID
  pitboss client set --id ID [--name NAME] [--plan TIER] [--forward-callback-url URL|""]
                     [--require-signature true|false|default] [--ip-allow-list CIDR,...|""]
                     [--allowed-return-hosts HOST,...|""] [--default-currency CODE|""]
  pitboss client wallet --id ID --mode ledger|seamless [--url URL --protocol valkyrie-pam|tbb
                     [--operator-id ID] [--credential-file PATH|-]]
  every command takes --json
`

const keyUsage = `usage:
  pitboss key issue  --client ID --scopes SCOPE,...|all [--label TEXT] [--expires-in 2160h | --expires-at RFC3339]
  pitboss key rotate --client ID --key KEY_ID [--grace 24h] [--expires-in D | --expires-at T]
  pitboss key revoke --client ID --key KEY_ID
  pitboss key list   --client ID
  every command takes --json; issue and rotate print the new key once
`

// adminStores opens the database for one command.
func adminStores(ctx context.Context, cfg config) (*pgxpool.Pool, *gatewaystore.Gateway, error) {
	pool, err := openDatabase(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	return pool, gatewaystore.NewGateway(pool), nil
}

// sealingAdminStores is adminStores whose gateway seals and opens
// provider secrets with the master key.
func sealingAdminStores(ctx context.Context, cfg config) (*pgxpool.Pool, *gatewaystore.Gateway, error) {
	box, err := cfg.secretBox(cfg.logger())
	if err != nil {
		return nil, nil, err
	}
	pool, gw, err := adminStores(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	return pool, gw.WithSecretBox(box), nil
}

func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// cliError turns the gateway's validation errors into plain messages: the
// message alone, without the field the HTTP answer adds.
func cliError(err error) error {
	var fe *gateway.FieldError
	if errors.As(err, &fe) {
		return errors.New(fe.Message)
	}
	return err
}

// optionalString records whether a string flag was given at all, so that
// "" can mean "clear".
type optionalString struct {
	set bool
	v   string
}

func (o *optionalString) String() string { return o.v }
func (o *optionalString) Set(v string) error {
	o.set, o.v = true, v
	return nil
}

func splitList(v string) []string {
	out := []string{}
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

type cliClient struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Environment string    `json:"environment"`
	Plan        string    `json:"plan"`
	CreatedAt   time.Time `json:"created_at"`
	Created     *bool     `json:"created,omitempty"`
}

func toCLIClient(c gateway.Client) cliClient {
	return cliClient{ID: c.ID, Name: c.Name, Environment: c.Environment, Plan: c.Plan, CreatedAt: c.CreatedAt.UTC()}
}

func clientCommand(ctx context.Context, cfg config, args []string, out io.Writer) error {
	fs, err := subcommandFlags("client", clientUsage, args, out)
	if err != nil {
		return err
	}
	asJSON := fs.Bool("json", false, "print JSON")
	id := fs.String("id", "", "client id")
	var name, plan, env, forward, requireSig, allowList, returnHosts, currency optionalString
	fs.Var(&name, "name", "display name")
	fs.Var(&plan, "plan", "plan tier: "+strings.Join(cfg.Admin.RateLimits.Names(), ", "))
	fs.Var(&env, "environment", "sandbox or production")
	fs.Var(&forward, "forward-callback-url", "where game activity is forwarded; \"\" stops it")
	fs.Var(&requireSig, "require-signature", "signed launch: true, false or default")
	fs.Var(&allowList, "ip-allow-list", "signed launch: comma-separated CIDRs or addresses; \"\" allows all")
	fs.Var(&returnHosts, "allowed-return-hosts", "signed launch: comma-separated hosts a return_url may use")
	fs.Var(&currency, "default-currency", "signed launch: currency when a launch names none")
	var wf walletFlags
	wf.add(fs)
	page := fs.Int("page", 1, "page (list)")
	perPage := fs.Int("per-page", 50, "clients per page (list)")
	if err := parseFlags(fs, args[1:], out, out); err != nil {
		return err
	}
	pool, gw, err := adminStores(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()

	switch args[0] {
	case "create":
		if err := domain.ValidateID("--id", *id); err != nil {
			return err
		}
		if env.v == "" {
			env.v = gateway.EnvironmentSandbox
		}
		if plan.v == "" {
			plan.v = cfg.Admin.RateLimits.DefaultTier
		}
		if err := cliClientChecks(cfg, name.v, plan.v, env.v); err != nil {
			return err
		}
		c, created, err := gw.AddClient(ctx, gateway.Client{ID: *id, Name: name.v, Environment: env.v, Plan: plan.v})
		if err != nil {
			return err
		}
		v := toCLIClient(c)
		v.Created = &created
		if *asJSON {
			return writeJSON(out, v)
		}
		verb := "created"
		if !created {
			verb = "already exists, unchanged"
		}
		fmt.Fprintf(out, "client %s %s (environment %s, plan %s)\nissue a key: pitboss key issue --client %s --scopes all\n",
			c.ID, verb, c.Environment, c.Plan, c.ID)
		return nil
	case "list":
		return clientList(ctx, gw, *page, *perPage, *asJSON, out)
	case "get":
		c, err := gw.GetClient(ctx, *id)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(out, toCLIClient(c))
		}
		fmt.Fprintf(out, "%s  %q  environment %s  plan %s  created %s\n", c.ID, c.Name, c.Environment, c.Plan,
			c.CreatedAt.UTC().Format(time.RFC3339))
		return nil
	case "set":
		if env.set {
			return errors.New("a client's environment cannot change: its keys belong to it; create a new client")
		}
		return clientSet(ctx, cfg, pool, gw, *id, name, plan, forward, requireSig, allowList, returnHosts, currency, *asJSON, out)
	case "wallet":
		return clientWallet(ctx, cfg, gw, *id, wf, *asJSON, out)
	}
	fmt.Fprint(out, clientUsage)
	return fmt.Errorf("client: unknown subcommand %q", args[0])
}

// clientList prints one page of clients.
func clientList(ctx context.Context, gw *gatewaystore.Gateway, page, perPage int, asJSON bool, out io.Writer) error {
	if page < 1 || perPage < 1 || perPage > 1000 {
		return errors.New("--page must be at least 1 and --per-page 1 to 1000")
	}
	list, total, err := gw.ListClients(ctx, page, perPage)
	if err != nil {
		return err
	}
	if asJSON {
		vs := make([]cliClient, 0, len(list))
		for _, c := range list {
			vs = append(vs, toCLIClient(c))
		}
		return writeJSON(out, map[string]any{"clients": vs, "total": total, "page": page, "per_page": perPage})
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tENVIRONMENT\tPLAN\tCREATED")
	for _, c := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.ID, c.Name, c.Environment, c.Plan, c.CreatedAt.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(tw, "(%d of %d)\n", len(list), total)
	return tw.Flush()
}

func cliClientChecks(cfg config, name, plan, env string) error {
	if strings.TrimSpace(name) == "" {
		return errors.New("--name is required")
	}
	if err := gateway.CheckClientName(name); err != nil {
		return cliError(err)
	}
	if err := gateway.CheckEnvironment(env); err != nil {
		return cliError(err)
	}
	if err := cfg.Admin.RateLimits.CheckPlan(plan); err != nil {
		return cliError(err)
	}
	return nil
}

// clientSet applies the given settings: everything is checked first, then
// the launch settings, the callback address, and name and plan are written.
func clientSet(ctx context.Context, cfg config, pool *pgxpool.Pool, gw *gatewaystore.Gateway, id string,
	name, plan, forward, requireSig, allowList, returnHosts, currency optionalString, asJSON bool, out io.Writer) error {
	c, err := gw.GetClient(ctx, id)
	if err != nil {
		return err
	}
	if name.set && strings.TrimSpace(name.v) == "" {
		return errors.New("--name must not be empty")
	}
	if name.set {
		if err := gateway.CheckClientName(name.v); err != nil {
			return cliError(err)
		}
	}
	if plan.set {
		if err := cfg.Admin.RateLimits.CheckPlan(plan.v); err != nil {
			return cliError(err)
		}
	}
	if forward.set && forward.v != "" {
		// checked by the client's environment, as the admin API does
		if err := gateway.CheckCallbackURL("--forward-callback-url", forward.v,
			cfg.Delivery.PrivateTargets.Allows(c.Environment)); err != nil {
			return cliError(err)
		}
	}
	var sig *bool
	if requireSig.set && requireSig.v != "default" {
		b, err := strconv.ParseBool(requireSig.v)
		if err != nil {
			return errors.New("--require-signature must be true, false or default")
		}
		sig = &b
	}
	launchChanged := requireSig.set || allowList.set || returnHosts.set || currency.set
	if launchChanged || forward.set {
		box, err := cfg.secretBox(cfg.logger())
		if err != nil {
			return err
		}
		if launchChanged {
			lcs, err := gatewaystore.NewLaunchClients(pool, box)
			if err != nil {
				return err
			}
			lc, err := lcs.LaunchClient(ctx, id)
			if err != nil {
				return err
			}
			ls := lc.LaunchSettings
			if requireSig.set {
				ls.RequireSignature = sig
			}
			if allowList.set {
				if ls.IPAllowList, err = gateway.ParseAllowList(splitList(allowList.v)); err != nil {
					return cliError(err)
				}
			}
			if returnHosts.set {
				if ls.AllowedReturnHosts, err = gateway.ParseReturnHosts(splitList(returnHosts.v)); err != nil {
					return cliError(err)
				}
			}
			if currency.set {
				ls.DefaultCurrency = strings.ToUpper(currency.v)
			}
			if err := lcs.SetLaunchSettings(ctx, id, ls); err != nil {
				return err
			}
		}
		if forward.set {
			d, err := deliverystore.NewDeliveries(pool, box)
			if err != nil {
				return err
			}
			if err := d.SetForwardCallbackURL(ctx, id, forward.v); err != nil {
				return err
			}
		}
	}
	if name.set || plan.set {
		ch := gateway.ClientChange{}
		if name.set {
			ch.Name = &name.v
		}
		if plan.set {
			ch.Plan = &plan.v
		}
		if c, err = gw.UpdateClient(ctx, id, ch); err != nil {
			return err
		}
	}
	if asJSON {
		return writeJSON(out, toCLIClient(c))
	}
	fmt.Fprintf(out, "client %s updated (environment %s, plan %s)\n", c.ID, c.Environment, c.Plan)
	return nil
}

type cliKey struct {
	ID          string     `json:"id"`
	ClientID    string     `json:"client_id"`
	Prefix      string     `json:"prefix"`
	Label       string     `json:"label"`
	Environment string     `json:"environment"`
	Scopes      []string   `json:"scopes"`
	Status      string     `json:"status"`
	CreatedAt   time.Time  `json:"created_at"`
	ExpiresAt   *time.Time `json:"expires_at"`
	RevokedAt   *time.Time `json:"revoked_at"`
	LastUsedAt  *time.Time `json:"last_used_at"`
	ReplacedBy  string     `json:"replaced_by,omitempty"`
	Key         string     `json:"key,omitempty"`
}

func toCLIKey(k gateway.APIKey, now time.Time) cliKey {
	return cliKey{ID: k.ID, ClientID: k.ClientID, Prefix: k.Prefix, Label: k.Label, Environment: k.Environment,
		Scopes: k.Scopes, Status: k.State(now), CreatedAt: k.CreatedAt.UTC(), ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt,
		LastUsedAt: k.LastUsedAt, ReplacedBy: k.ReplacedBy}
}

func fmtTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// expiry reads --expires-in / --expires-at (at most one).
func expiry(in time.Duration, at string, now time.Time) (*time.Time, error) {
	switch {
	case in != 0 && at != "":
		return nil, errors.New("give --expires-in or --expires-at, not both")
	case in < 0:
		return nil, errors.New("--expires-in must be positive")
	case in > 0:
		t := now.Add(in)
		return &t, nil
	case at != "":
		t, err := time.Parse(time.RFC3339, at)
		if err != nil {
			return nil, errors.New("--expires-at must be an RFC 3339 time such as 2027-01-01T00:00:00Z")
		}
		if err := gateway.CheckExpiry(&t, now); err != nil {
			return nil, errors.New("--expires-at must be in the future")
		}
		return &t, nil
	}
	return nil, nil
}

func keyCommand(ctx context.Context, cfg config, args []string, out io.Writer) error {
	fs, err := subcommandFlags("key", keyUsage, args, out)
	if err != nil {
		return err
	}
	asJSON := fs.Bool("json", false, "print JSON")
	clientID := fs.String("client", "", "client id")
	keyID := fs.String("key", "", "key id (the hex after pb_test_ / pb_live_)")
	scopes := fs.String("scopes", "", "comma-separated scopes, or all: "+strings.Join(gateway.AllScopes, ", "))
	label := fs.String("label", "", "what the key is for")
	expiresIn := fs.Duration("expires-in", 0, "the key expires after this long")
	expiresAt := fs.String("expires-at", "", "the key expires at this RFC 3339 time")
	grace := fs.Duration("grace", gateway.DefaultRotationGrace, "rotate: how long the old key keeps working")
	if err := parseFlags(fs, args[1:], out, out); err != nil {
		return err
	}
	if err := domain.ValidateID("--client", *clientID); err != nil {
		return err
	}
	pool, gw, err := adminStores(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	now := time.Now()

	switch args[0] {
	case "issue":
		list := splitList(*scopes)
		if *scopes == "all" {
			list = gateway.AllScopes
		}
		checked, err := gateway.CheckScopes(list)
		if err != nil {
			return cliError(err)
		}
		if err := gateway.CheckKeyLabel(*label); err != nil {
			return cliError(err)
		}
		exp, err := expiry(*expiresIn, *expiresAt, now)
		if err != nil {
			return err
		}
		k, err := gw.IssueAPIKey(ctx, gateway.KeySpec{ClientID: *clientID, Scopes: checked, Label: *label, ExpiresAt: exp})
		if err != nil {
			return err
		}
		return printNewKey(out, k, now, *asJSON, "")
	case "rotate":
		if err := gateway.CheckGrace(*grace); err != nil {
			return errors.New("--grace must be from 0 to 720h (30 days)")
		}
		exp, err := expiry(*expiresIn, *expiresAt, now)
		if err != nil {
			return err
		}
		k, old, err := gw.RotateAPIKey(ctx, gateway.RotateSpec{ClientID: *clientID, KeyID: *keyID, Grace: *grace, ExpiresAt: exp})
		if err != nil {
			return err
		}
		return printNewKey(out, k, now, *asJSON, fmt.Sprintf("key %s keeps working until %s, then expires",
			old.ID, fmtTime(old.ExpiresAt)))
	case "revoke":
		k, err := gw.RevokeAPIKey(ctx, *clientID, *keyID)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(out, toCLIKey(k, now))
		}
		fmt.Fprintf(out, "key %s (%s) revoked at %s\n", k.ID, k.Prefix, fmtTime(k.RevokedAt))
		return nil
	case "list":
		if _, err := gw.GetClient(ctx, *clientID); err != nil {
			return err
		}
		keys, err := gw.ListAPIKeys(ctx, *clientID)
		if err != nil {
			return err
		}
		if *asJSON {
			vs := make([]cliKey, 0, len(keys))
			for _, k := range keys {
				vs = append(vs, toCLIKey(k, now))
			}
			return writeJSON(out, vs)
		}
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tPREFIX\tSTATUS\tSCOPES\tCREATED\tEXPIRES\tLAST USED\tLABEL")
		for _, k := range keys {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Prefix, k.State(now), strings.Join(k.Scopes, ","),
				k.CreatedAt.UTC().Format(time.RFC3339), fmtTime(k.ExpiresAt), fmtTime(k.LastUsedAt), k.Label)
		}
		return tw.Flush()
	}
	fmt.Fprint(out, keyUsage)
	return fmt.Errorf("key: unknown subcommand %q", args[0])
}

func printNewKey(out io.Writer, k gateway.IssuedKey, now time.Time, asJSON bool, note string) error {
	if asJSON {
		v := toCLIKey(k.APIKey, now)
		v.Key = k.Secret
		return writeJSON(out, v)
	}
	fmt.Fprintf(out, "API key for client %s (%s, scopes %s, expires %s):\n\n  %s\n\nIt is shown only now: store it in your secret store.\n",
		k.ClientID, k.Environment, strings.Join(k.Scopes, ","), fmtTime(k.ExpiresAt), k.Secret)
	if note != "" {
		fmt.Fprintln(out, note)
	}
	return nil
}
