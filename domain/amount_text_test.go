package domain_test

import (
	"encoding/json"
	"testing"

	"github.com/pitboss/pitboss/domain"
)

// TestAmountText: a JSON amount keeps the sender's exact text whether it
// came as a number or a string, so ParseMoney sees the digits that were
// sent (a float64 would turn 0.1 + 0.2 style amounts into other ones).
func TestAmountText(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"number", `{"amount":10.50}`, "10.50"},
		{"string", `{"amount":"10.50"}`, "10.50"},
		{"digits beyond a float64", `{"amount":12345678901234567.89}`, "12345678901234567.89"},
		{"exponent kept for ParseMoney to refuse", `{"amount":1e3}`, "1e3"},
		{"negative", `{"amount":-0.01}`, "-0.01"},
		{"escaped string", `{"amount":"\u0031.5"}`, "1.5"},
		{"null", `{"amount":null}`, ""},
		{"missing", `{}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v struct {
				Amount domain.AmountText `json:"amount"`
			}
			if err := json.Unmarshal([]byte(tt.body), &v); err != nil {
				t.Fatal(err)
			}
			if string(v.Amount) != tt.want {
				t.Fatalf("%s: %q, want %q", tt.body, v.Amount, tt.want)
			}
		})
	}
	var v struct {
		Amount domain.AmountText `json:"amount"`
	}
	if err := json.Unmarshal([]byte(`{"amount":"unterminated}`), &v); err == nil {
		t.Fatal("a broken string was accepted")
	}
	m, err := domain.ParseMoney(string(domain.AmountText("0.10")), domain.MustCurrency("EUR"))
	if err != nil || m.Minor() != 10 {
		t.Fatalf("ParseMoney of the text: %v %v", m, err)
	}
}
