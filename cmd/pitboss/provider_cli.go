package main

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
)

// The `provider` command: which signature scheme each game provider's
// wallet calls are checked by and which wallet protocol they come in, and
// moving a provider to another (docs/provider-wallet.md#authentication,
// docs/providers-and-games.md#wallet-protocols). Straight on the database,
// as the client and key commands are.

const providerUsage = `usage:
  pitboss provider list
  pitboss provider add --id ID --name NAME --secret-file FILE [...]   (pitboss provider add --help)
  pitboss provider set --id ID [--signature-scheme v1|v2]
                       [--wallet-protocol pitboss|caleta|redtiger|evolution [--wallet-public-key-file KEY.pem]]
                       [--launch-operator-id ID] [--launch-country CC]
                       [--launch-private-key-file KEY.pem | --launch-token-file FILE]
  set changes what it is given (at least one thing); a caleta provider
  needs its RSA public key (PEM) that verifies its requests; a redtiger
  provider's API key is its provider secret (no key file); an evolution
  provider authenticates with its secret (the authToken of its calls)
  the --launch-* flags set how its games are launched (kinds caleta,
  evolution, redtiger): who we are at the provider (Caleta's operator_id,
  Evolution's casino key, Red Tiger's casino), the country launches name,
  and our own secret there, sealed with the master key: our RSA private key
  (caleta) or the casino token (evolution); list shows only a fingerprint
  every command takes --json
`

// cliProvider is a provider as the command prints it (never its secret).
type cliProvider struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	Enabled         bool   `json:"enabled"`
	SignatureScheme string `json:"signature_scheme"`
	WalletProtocol  string `json:"wallet_protocol"`
	// WalletPublicKeySHA256 is the hex SHA-256 of the public key's DER
	// (what `openssl pkey -pubin -outform DER | sha256sum` prints), so an
	// operator can check which key is set; empty without one.
	WalletPublicKeySHA256 string `json:"wallet_public_key_sha256,omitempty"`
	// LaunchKey tells which launch secret is set, never the secret: the
	// hex SHA-256 of the DER of our launch private key's public half, or
	// "set" for a token; empty without one.
	LaunchKey string `json:"launch_key,omitempty"`
}

// keyFingerprint is a provider's cliProvider.WalletPublicKeySHA256.
func keyFingerprint(pemText string) string {
	if pemText == "" {
		return ""
	}
	k, err := gateway.ParseRSAPublicKey(pemText)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	der, err := x509.MarshalPKIXPublicKey(k)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

func providerCommand(ctx context.Context, cfg config, args []string, out io.Writer) error {
	fs, err := subcommandFlags("provider", providerUsage, args, out)
	if err != nil {
		return err
	}
	asJSON := fs.Bool("json", false, "print JSON")
	id := fs.String("id", "", "provider id")
	scheme := fs.String("signature-scheme", "", "how its wallet calls are signed: "+strings.Join(gateway.SignatureSchemes, " or "))
	protocol := fs.String("wallet-protocol", "", "the protocol its wallet calls come in: "+strings.Join(gateway.WalletProtocols, " or "))
	keyFile := fs.String("wallet-public-key-file", "", "PEM file of its RSA public key (caleta)")
	var launch gateway.LaunchCredentials
	fs.StringVar(&launch.OperatorID, "launch-operator-id", "", "who we are at the provider: Caleta's operator_id, Evolution's casino key, Red Tiger's casino")
	fs.StringVar(&launch.Country, "launch-country", "", "ISO 3166-1 alpha-2 country its launches name (caleta, evolution)")
	launchKeyFile := fs.String("launch-private-key-file", "", "PEM file of our RSA private key that signs its launches (caleta)")
	launchTokenFile := fs.String("launch-token-file", "", "file holding our casino token for its launches (evolution)")
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
		if *keyFile != "" && *protocol == "" {
			return errors.New("provider set: --wallet-public-key-file goes with --wallet-protocol")
		}
		if *launchKeyFile != "" && *launchTokenFile != "" {
			return errors.New("provider set: give --launch-private-key-file or --launch-token-file, not both")
		}
		for _, f := range []string{*launchKeyFile, *launchTokenFile} {
			if f == "" {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				return fmt.Errorf("read launch secret file: %w", err)
			}
			launch.Secret = strings.TrimSpace(string(b))
			if launch.Secret == "" {
				return fmt.Errorf("provider set: %s is empty", f)
			}
		}
		if *launchKeyFile != "" {
			if _, err := gateway.ParseRSAPrivateKey(launch.Secret); err != nil {
				return fmt.Errorf("--launch-private-key-file: %w", err)
			}
		} else if *launchTokenFile != "" && strings.Contains(launch.Secret, "-----BEGIN") {
			return errors.New("--launch-token-file holds a PEM block; a private key goes in --launch-private-key-file")
		}
		if err := gateway.CheckLaunchCredentials(launch); err != nil {
			return cliError(err)
		}
		if *scheme == "" && *protocol == "" && launch == (gateway.LaunchCredentials{}) {
			fmt.Fprint(out, providerUsage)
			return errors.New("provider set: give --signature-scheme, --wallet-protocol or a --launch-* flag")
		}
		if *scheme != "" {
			if err := gateway.CheckSignatureScheme("--signature-scheme", *scheme); err != nil {
				return cliError(err)
			}
		}
	}
	var publicKey string
	if *protocol != "" {
		if err := gateway.CheckWalletProtocol("--wallet-protocol", *protocol); err != nil {
			return cliError(err)
		}
		if *keyFile != "" {
			b, err := os.ReadFile(*keyFile)
			if err != nil {
				return fmt.Errorf("read --wallet-public-key-file: %w", err)
			}
			publicKey = string(b)
			if err := gateway.CheckWalletCredentials("--wallet-public-key-file", *protocol, publicKey); err != nil {
				return cliError(err)
			}
		}
	}
	pool, gw, err := adminStores(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()

	if args[0] == "set" {
		if launch != (gateway.LaunchCredentials{}) {
			if launch.Secret != "" {
				box, err := cfg.secretBox(cfg.logger())
				if err != nil {
					return err
				}
				gw.WithSecretBox(box)
			}
			if err := gw.SetProviderLaunchCredentials(ctx, *id, launch); err != nil {
				if errors.Is(err, domain.ErrNotFound) {
					return fmt.Errorf("no provider %q", *id)
				}
				return cliError(err)
			}
			if !*asJSON {
				fmt.Fprintf(out, "provider %s launch credentials set (API processes apply them within PITBOSS_PROVIDER_CACHE_TTL)\n", *id)
			}
		}
		if *scheme != "" {
			if err := gw.SetProviderSignatureScheme(ctx, *id, *scheme); err != nil {
				if errors.Is(err, domain.ErrNotFound) {
					return fmt.Errorf("no provider %q", *id)
				}
				return cliError(err)
			}
			if !*asJSON {
				fmt.Fprintf(out, "provider %s now signs with %s (API processes apply it within PITBOSS_PROVIDER_CACHE_TTL)\n", *id, *scheme)
			}
		}
		if *protocol != "" {
			if err := gw.SetProviderWalletProtocol(ctx, *id, *protocol, publicKey); err != nil {
				if errors.Is(err, domain.ErrNotFound) {
					return fmt.Errorf("no provider %q", *id)
				}
				return cliError(err)
			}
			if !*asJSON {
				fmt.Fprintf(out, "provider %s now speaks the %s wallet protocol (API processes apply it within PITBOSS_PROVIDER_CACHE_TTL)\n", *id, *protocol)
			}
		}
		if !*asJSON {
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
		vs = append(vs, cliProvider{ID: p.ID, Name: p.Name, Enabled: p.Enabled, SignatureScheme: p.SignatureScheme,
			WalletProtocol: p.Protocol(), WalletPublicKeySHA256: keyFingerprint(p.WalletPublicKey),
			LaunchKey: p.LaunchKeyFingerprint})
	}
	if *asJSON {
		if args[0] == "set" && len(vs) == 1 {
			return writeJSON(out, vs[0])
		}
		return writeJSON(out, map[string]any{"providers": vs})
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tENABLED\tSIGNATURE\tPROTOCOL\tPUBLIC KEY SHA-256\tLAUNCH KEY")
	for _, p := range vs {
		fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%s\t%s\t%s\n", p.ID, p.Name, p.Enabled, p.SignatureScheme, p.WalletProtocol,
			p.WalletPublicKeySHA256, p.LaunchKey)
	}
	return tw.Flush()
}
