package chaos_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pitboss/pitboss/adapters/kafka/kafkatest"
	"github.com/pitboss/pitboss/adapters/postgres/pgtest"
	"github.com/pitboss/pitboss/chaos/stack"
	"github.com/pitboss/pitboss/internal/eventually"
)

// TestServeTLS: with PITBOSS_TLS_CERT and PITBOSS_TLS_KEY the api role
// speaks HTTPS only (TLS 1.2 or later); one without the other is refused
// at start.
func TestServeTLS(t *testing.T) {
	shortParallel(t, false)
	dir := t.TempDir()
	bin, err := pitbossBin()
	if err != nil {
		t.Fatal(err)
	}
	_, dbURL := pgtest.NewDatabase(t)
	svc, err := stack.NewService(bin, dir, dbURL, kafkatest.Brokers(t), "unused")
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath, pool := selfSigned(t, dir)

	half := svc.Role("half", "api", "PITBOSS_TLS_CERT="+certPath)
	if err := half.Start(); err != nil {
		t.Fatal(err)
	}
	done, _ := half.Exited()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = half.Kill()
		t.Fatal("serve started with a certificate and no key")
	}
	if !half.LogContains("PITBOSS_TLS_CERT and PITBOSS_TLS_KEY go together") {
		t.Fatalf("no reason given:\n%s", half.LogTail(5))
	}

	p := svc.Role("tls", "api", "PITBOSS_TLS_CERT="+certPath, "PITBOSS_TLS_KEY="+keyPath)
	t.Cleanup(func() { _ = p.Stop(10 * time.Second) })
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(svc.BaseURL(), "http://")
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	var resp *http.Response
	eventually.NoError(t, 60*time.Second, "an answer over https", func() (err error) {
		if resp, err = c.Get("https://" + addr + "/healthz"); err != nil {
			return fmt.Errorf("%w\n%s", err, p.LogTail(10))
		}
		return nil
	})
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.TLS == nil || resp.TLS.Version < tls.VersionTLS12 {
		t.Fatalf("https answered %d, TLS %+v", resp.StatusCode, resp.TLS)
	}
	old := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool,
		MaxVersion: tls.VersionTLS11}}}
	if _, err := old.Get("https://" + addr + "/healthz"); err == nil {
		t.Fatal("TLS 1.1 was accepted")
	}
	if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP answered 200 on the TLS port")
		}
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T, dir string) (cert, key string, pool *x509.CertPool) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pitboss test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}), 0o600); err != nil {
		t.Fatal(err)
	}
	parsed, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(parsed)
	return cert, key, pool
}
