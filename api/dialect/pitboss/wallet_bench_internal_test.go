package pitboss

import (
	"testing"
	"time"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/gateway"
)

// Hot paths of every provider wallet call, in isolation (the whole call,
// on the real ledger, is BenchmarkProviderBet in api/wallet_bench_test.go):
//
//	go test -run '^$' -bench 'ValidSignature|VerifyProviderCall|DecodeWalletCall' -benchmem ./api/dialect/pitboss/

// benchBody is a bet as a provider sends it.
var benchBody = []byte(`{"session_id":"sess-5f0c2b7e9a1d4c3b8e6f","transaction_id":"bet-0195f3c2-7d41-7a8e-9c10",` +
	`"round_id":"round-0195f3c2-7d41","amount":"2.50","currency":"EUR","player_id":"player-1842","game_id":"demo-slot"}`)

func BenchmarkValidSignature(b *testing.B) {
	secret := "demo-provider-secret-0123456789abcdef"
	sig := gateway.Signature(secret, benchBody)
	if !gateway.ValidSignature(secret, benchBody, sig) {
		b.Fatal("the right signature is refused")
	}
	b.SetBytes(int64(len(benchBody)))
	b.ReportAllocs()
	for b.Loop() {
		if !gateway.ValidSignature(secret, benchBody, sig) {
			b.Fatal("refused")
		}
	}
}

// BenchmarkVerifyProviderCallV2 is the v2 check: one HMAC over the time,
// method, path and body, and the header parsed.
func BenchmarkVerifyProviderCallV2(b *testing.B) {
	p := gateway.Provider{ID: "demo", Secret: "demo-provider-secret-0123456789abcdef", SignatureScheme: gateway.SignatureV2}
	call := gateway.ProviderCall{Method: "POST", Path: "/provider/v1/wallet/bet", Body: benchBody}
	now := time.Unix(1_773_500_966, 0)
	sig := gateway.SignProviderCall(p.Secret, now, call)
	if err := gateway.VerifyProviderCall(p, call, sig, now); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(benchBody)))
	b.ReportAllocs()
	for b.Loop() {
		if err := gateway.VerifyProviderCall(p, call, sig, now); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeWalletCall(b *testing.B) {
	b.SetBytes(int64(len(benchBody)))
	b.ReportAllocs()
	for b.Loop() {
		var call walletCall
		if err := wire.DecodeJSON(benchBody, &call); err != nil {
			b.Fatal(err)
		}
		if call.Amount != "2.50" || call.SessionID == "" {
			b.Fatalf("decoded %+v", call)
		}
	}
}
