package providersim

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
)

// ParsePrivateKey reads the Caleta provider's RSA private key from PEM:
// PKCS #8 ("PRIVATE KEY") or PKCS #1 ("RSA PRIVATE KEY").
func ParsePrivateKey(pemText []byte) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode(pemText)
	if block == nil {
		return nil, fmt.Errorf("%w: not a PEM file", ErrConfig)
	}
	switch block.Type {
	case "RSA PRIVATE KEY":
		k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		return k, nil
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("%w: the key is a %T, not an RSA key", ErrConfig, k)
		}
		return rk, nil
	}
	return nil, fmt.Errorf("%w: a PEM block %q, not a private key", ErrConfig, block.Type)
}
