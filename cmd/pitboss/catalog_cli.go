package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// `pitboss provider add` and `pitboss game set`: a new provider and its
// games, the first step of onboarding a provider
// (docs/provider-onboarding.md). Straight on the database, as the other
// admin commands are. Before, a provider could only be created by SQL (or
// be the sandbox's demo), so onboarding one on its own protocol needed a
// database session.

const providerAddUsage = `usage:
  pitboss provider add --id ID --name NAME --secret-file FILE
                       [--wallet-protocol pitboss|caleta|redtiger|evolution [--wallet-public-key-file KEY.pem]]
                       [--kind demo|json|form-xml|caleta|evolution|redtiger --endpoint URL ...] [--disabled] [--json]
  adds a provider that does not exist yet (an existing id is refused: change
  one with provider set). Its secret (the file's content, trimmed) signs its
  wallet calls on pitboss, is Red Tiger's API key and Evolution's authToken;
  it is sealed with the master key. --kind and --endpoint (repeatable, in
  order of preference) are how its games are launched; without them the
  built-in demo kind. Launch credentials: provider set --launch-*.
`

const gameUsage = `usage:
  pitboss game set --id ID --provider PROVIDER --name NAME --category CATEGORY
                   [--provider-code CODE] [--disabled] [--json]
  creates or changes a game of the catalog: its provider, name, category,
  the provider's own code of it (Caleta's game_code, Evolution's table id,
  Red Tiger's game key; default our id) and whether it launches
`

// repeated is a flag that may be given more than once.
type repeated []string

func (r *repeated) String() string { return strings.Join(*r, ",") }

func (r *repeated) Set(v string) error {
	*r = append(*r, v)
	return nil
}

// providerAdd is `pitboss provider add`.
func providerAdd(ctx context.Context, cfg config, args []string, out io.Writer) error {
	fs, err := subcommandFlags("provider", providerAddUsage, append([]string{"add"}, args...), out)
	if err != nil {
		return err
	}
	asJSON := fs.Bool("json", false, "print JSON")
	id := fs.String("id", "", "provider id")
	name := fs.String("name", "", "its name as listings show it")
	secretFile := fs.String("secret-file", "", "file holding its secret")
	protocol := fs.String("wallet-protocol", gateway.DefaultWalletProtocol, "the protocol its wallet calls come in: "+strings.Join(gateway.WalletProtocols, " or "))
	keyFile := fs.String("wallet-public-key-file", "", "PEM file of its RSA public key (caleta)")
	kind := fs.String("kind", gateway.ProviderKindDemo, "how its games are launched: "+strings.Join(gateway.ProviderKinds, ", "))
	var endpoints repeated
	fs.Var(&endpoints, "endpoint", "a base URL of its launch API (repeatable, in order of preference)")
	disabled := fs.Bool("disabled", false, "add it disabled (no launches, wallet calls refused)")
	if err := parseFlags(fs, args, out, out); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &exitError{exitUsage, fmt.Errorf("provider add: unexpected arguments %q", fs.Args())}
	}
	if err := domain.ValidateID("--id", *id); err != nil {
		return err
	}
	if strings.TrimSpace(*name) == "" || *secretFile == "" {
		fmt.Fprint(out, providerAddUsage)
		return &exitError{exitUsage, errors.New("provider add: --name and --secret-file are required")}
	}
	b, err := os.ReadFile(*secretFile)
	if err != nil {
		return fmt.Errorf("read --secret-file: %w", err)
	}
	secret := strings.TrimSpace(string(b))
	if len(secret) < 16 {
		return errors.New("provider add: the secret must be at least 16 characters (a shared secret anyone can guess signs nothing)")
	}
	if err := gateway.CheckWalletProtocol("--wallet-protocol", *protocol); err != nil {
		return cliError(err)
	}
	var publicKey string
	if *keyFile != "" {
		k, err := os.ReadFile(*keyFile)
		if err != nil {
			return fmt.Errorf("read --wallet-public-key-file: %w", err)
		}
		publicKey = string(k)
	}
	if err := gateway.CheckWalletCredentials("--wallet-public-key-file", *protocol, publicKey); err != nil {
		return cliError(err)
	}
	route := gateway.ProviderRoute{ProviderID: *id, Kind: *kind, Endpoints: endpoints, Balancing: gateway.BalancingPriority,
		Timeout: gateway.DefaultProviderTimeout, BreakerFailures: gateway.DefaultBreakerFailures,
		BreakerCooldown: gateway.DefaultBreakerCooldown}
	if err := route.Validate(); err != nil {
		return fmt.Errorf("provider add: %w", err)
	}

	pool, gw, err := sealingAdminStores(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := gw.ProviderRoute(ctx, *id); err == nil { // reads no secret
		return fmt.Errorf("provider %q exists: change it with `pitboss provider set`", *id)
	} else if !errors.Is(err, domain.ErrNotFound) {
		return err
	}
	p := gateway.Provider{ID: *id, Name: strings.TrimSpace(*name), Secret: secret, Enabled: !*disabled,
		WalletProtocol: *protocol, WalletPublicKey: publicKey}
	if err := gw.UpsertProvider(ctx, p); err != nil {
		return cliError(err)
	}
	if err := gw.SetProviderRoute(ctx, route); err != nil {
		return cliError(err)
	}
	if *asJSON {
		return writeJSON(out, cliProvider{ID: p.ID, Name: p.Name, Enabled: p.Enabled, SignatureScheme: gateway.DefaultSignatureScheme,
			WalletProtocol: p.Protocol(), WalletPublicKeySHA256: keyFingerprint(publicKey)})
	}
	fmt.Fprintf(out, "provider %s added: wallet protocol %s, launch kind %s%s\n", p.ID, p.Protocol(), route.Kind,
		map[bool]string{true: " (disabled)", false: ""}[*disabled])
	return nil
}

// cliGame is a game as `pitboss game` prints it.
type cliGame struct {
	ID           string `json:"id"`
	Provider     string `json:"provider"`
	Name         string `json:"name"`
	Category     string `json:"category"`
	ProviderCode string `json:"provider_code"`
	Enabled      bool   `json:"enabled"`
}

// gameCommand is `pitboss game`.
func gameCommand(ctx context.Context, cfg config, args []string, out io.Writer) error {
	fs, err := subcommandFlags("game", gameUsage, args, out)
	if err != nil {
		return err
	}
	asJSON := fs.Bool("json", false, "print JSON")
	id := fs.String("id", "", "our id of the game (what launches name)")
	provider := fs.String("provider", "", "its provider's id")
	name := fs.String("name", "", "its name")
	category := fs.String("category", "", "its category (slots, live, table, ...)")
	code := fs.String("provider-code", "", "the provider's own code of it; default our id")
	disabled := fs.Bool("disabled", false, "it does not launch")
	if err := parseFlags(fs, args[1:], out, out); err != nil {
		return err
	}
	if args[0] != "set" {
		fmt.Fprint(out, gameUsage)
		return &exitError{exitUsage, fmt.Errorf("game: unknown subcommand %q", args[0])}
	}
	if fs.NArg() > 0 {
		return &exitError{exitUsage, fmt.Errorf("game set: unexpected arguments %q", fs.Args())}
	}
	for _, f := range [][2]string{{"--id", *id}, {"--provider", *provider}} {
		if err := domain.ValidateID(f[0], f[1]); err != nil {
			return err
		}
	}
	if *code != "" {
		if err := domain.ValidateID("--provider-code", *code); err != nil {
			return err
		}
	}
	if strings.TrimSpace(*name) == "" || strings.TrimSpace(*category) == "" {
		fmt.Fprint(out, gameUsage)
		return &exitError{exitUsage, errors.New("game set: --name and --category are required")}
	}
	pool, gw, err := adminStores(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := gw.ProviderRoute(ctx, *provider); errors.Is(err, domain.ErrNotFound) { // reads no secret
		return fmt.Errorf("no provider %q (add it with `pitboss provider add`)", *provider)
	} else if err != nil {
		return err
	}
	g := gateway.Game{ID: *id, ProviderID: *provider, Name: strings.TrimSpace(*name), Category: strings.TrimSpace(*category),
		Enabled: !*disabled}
	if err := gw.UpsertGame(ctx, g); err != nil {
		return err
	}
	if err := gw.SetProviderGameCode(ctx, *id, *code); err != nil {
		return err
	}
	stored, err := gw.Game(ctx, *id)
	if err != nil {
		return err
	}
	v := cliGame{ID: stored.ID, Provider: stored.ProviderID, Name: stored.Name, Category: stored.Category,
		ProviderCode: stored.Code, Enabled: stored.Enabled}
	if *asJSON {
		return writeJSON(out, v)
	}
	fmt.Fprintf(out, "game %s of %s set: %q (%s), provider code %s, enabled %v\n", v.ID, v.Provider, v.Name, v.Category,
		v.ProviderCode, v.Enabled)
	return nil
}
