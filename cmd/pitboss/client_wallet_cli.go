package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pitboss/pitboss/adapters/postgres/gatewaystore"
	"github.com/pitboss/pitboss/gateway"
)

// walletFlags are `pitboss client wallet`'s: a client's wallet mode
// (docs/seamless-wallet.md).
type walletFlags struct {
	mode, url, protocol, operatorID, credentialFile *string
}

func (w *walletFlags) add(fs *flag.FlagSet) {
	w.mode = fs.String("mode", "", "wallet: ledger or seamless")
	w.url = fs.String("url", "", "wallet: the client's own wallet's base URL (seamless)")
	w.protocol = fs.String("protocol", "", "wallet: its protocol, "+strings.Join(gateway.OperatorProtocols, " or ")+" (seamless)")
	w.operatorID = fs.String("operator-id", "", "wallet: the operator's id in its protocol's calls, where it has one")
	w.credentialFile = fs.String("credential-file", "", "wallet: a file holding its credential (API token or signing secret), - for stdin; "+
		"left out, a seamless client keeps the stored one")
}

// cliClientWallet is a client's wallet as the command prints it: the
// credential never.
type cliClientWallet struct {
	ID            string `json:"id"`
	Mode          string `json:"mode"`
	URL           string `json:"url,omitempty"`
	Protocol      string `json:"protocol,omitempty"`
	OperatorID    string `json:"operator_id,omitempty"`
	CredentialSet bool   `json:"credential_set"`
}

// clientWallet sets the client's wallet mode, checked as the admin API
// checks it (PUT /admin/v1/clients/{id}/wallet), and prints it.
func clientWallet(ctx context.Context, cfg config, gw *gatewaystore.Gateway, id string, f walletFlags, asJSON bool, out io.Writer) error {
	if *f.mode == "" {
		return errors.New("--mode is required: ledger or seamless")
	}
	credential, err := readCredential(*f.credentialFile)
	if err != nil {
		return err
	}
	box, err := cfg.secretBox(cfg.logger())
	if err != nil {
		return err
	}
	gw.WithSecretBox(box)
	c, err := gw.GetClient(ctx, id)
	if err != nil {
		return fmt.Errorf("client %s: %w", id, err)
	}
	have, err := gw.ClientWallet(ctx, id)
	if err != nil {
		return err
	}
	w := gateway.ClientWallet{Mode: *f.mode, URL: *f.url, Protocol: *f.protocol, OperatorID: *f.operatorID, Credential: credential}
	if err := gateway.CheckClientWallet(w, cfg.Delivery.PrivateTargets.Allows(c.Environment), have.CredentialSet); err != nil {
		return cliError(err)
	}
	if err := gw.SetClientWallet(ctx, id, w); err != nil {
		return err
	}
	if w, err = gw.ClientWallet(ctx, id); err != nil {
		return err
	}
	v := cliClientWallet{ID: id, Mode: w.Mode, URL: w.URL, Protocol: w.Protocol, OperatorID: w.OperatorID, CredentialSet: w.CredentialSet}
	if asJSON {
		return writeJSON(out, v)
	}
	if !w.Seamless() {
		fmt.Fprintf(out, "client %s: wallet mode ledger (Pitboss holds its players' money)\n", id)
		return nil
	}
	fmt.Fprintf(out, "client %s: wallet mode seamless, %s at %s (credential set: %t); API processes use it within "+
		"PITBOSS_PROVIDER_CACHE_TTL\n", id, w.Protocol, w.URL, w.CredentialSet)
	return nil
}

// readCredential reads the credential from path ("-": stdin; "": none),
// its trailing newline dropped.
func readCredential(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	var (
		b   []byte
		err error
	)
	if path == "-" {
		b, err = io.ReadAll(io.LimitReader(os.Stdin, gateway.MaxCredentialLength+2))
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return "", fmt.Errorf("read the credential: %w", err)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}
