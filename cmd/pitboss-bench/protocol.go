package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/pitboss/pitboss/domain"
	"github.com/pitboss/pitboss/gateway"
	"github.com/pitboss/pitboss/providersim"
	"github.com/pitboss/pitboss/wallet"
)

// BENCH_PROTOCOL: the load generator speaks a provider's own wallet
// protocol (docs/protocols/) instead of ours, through the provider
// simulator's dialects (providersim.Load): the same requests, the same
// authentication, one call at a time. The demo provider is moved to the
// protocol with `pitboss provider set` before the service starts, so
// nothing is cached from before. What the comparison is about is the
// service's CPU per wallet call (the CPU table's "service µs per call"):
// a Caleta provider's RSA signature is the load generator's cost, on the
// same cores, so the calls/s of a caleta run are not comparable with
// ours, while the service's CPU per call is.

// setWalletProtocol moves the sandbox's demo provider to cfg.Protocol and
// returns the simulator's configuration for it (the provider's secret is
// filled in once the sandbox's credentials are read). For caleta it makes
// the provider's RSA key pair: the public half goes to Pitboss, the
// private half signs the load's requests.
func setWalletProtocol(ctx context.Context, svc *service, cfg config) (providersim.Config, error) {
	pc := providersim.Config{Protocol: cfg.Protocol, BaseURL: svc.base, Provider: "demo"}
	if cfg.Protocol == gateway.WalletProtocolPitboss {
		return pc, nil
	}
	args := []string{"provider", "set", "--id", "demo", "--wallet-protocol", cfg.Protocol}
	if spec, _ := gateway.WalletProtocolOf(cfg.Protocol); spec.PublicKey {
		key, err := rsa.GenerateKey(rand.Reader, 2048) // the least Pitboss accepts, the cheapest to sign with
		if err != nil {
			return pc, err
		}
		der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
		if err != nil {
			return pc, err
		}
		file := filepath.Join(svc.dataDir, "caleta-public.pem")
		if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600); err != nil {
			return pc, err
		}
		pc.PrivateKey = key
		args = append(args, "--wallet-public-key-file", file)
	}
	if _, err := svc.command(ctx, args...); err != nil {
		return pc, fmt.Errorf("move the demo provider to %s: %w", cfg.Protocol, err)
	}
	return pc, nil
}

// dialectCall is one money call of a spin in the provider's protocol:
// amount is decimal text in the player's currency, as the spin writes it.
func (w *walletClient) dialectCall(ctx context.Context, op string, p player, tx providersim.LoadTx, amount string) callResult {
	r := callResult{op: op, start: time.Now(), id: tx.ID}
	if op == opRollback {
		r.alt = wallet.RefundPrefix + tx.Ref // Red Tiger's and TBB's refund (wallet.Core.RefundBet)
	}
	cur, err := domain.ParseCurrency(p.currency)
	if err == nil && amount != "" {
		var m domain.Money
		if m, err = domain.ParseMoney(amount, cur); err == nil {
			tx.Amount = m.Minor()
		}
	}
	if err != nil {
		r.code, r.done = "encode: "+err.Error(), time.Now()
		return r
	}
	lop := map[string]providersim.LoadOp{opBet: providersim.LoadBet, opWin: providersim.LoadWin, opRollback: providersim.LoadRollback}[op]
	res, err := w.dialect.Call(ctx, w.http, providersim.LoadSession{ID: p.session, Player: p.id, Game: w.game, Currency: cur}, lop, tx)
	r.done = time.Now()
	switch {
	case err != nil:
		r.code = "transport: " + shortErr(err)
	case !res.OK:
		r.code = fmt.Sprintf("HTTP %d %s", res.HTTPStatus, res.Status)
	case !res.Replayed:
		r.eventID = res.ID // Red Tiger's and ours: our event id; Caleta's and Evolution's answers carry none
	}
	return r
}
