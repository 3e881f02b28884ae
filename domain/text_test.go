package domain_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/domain"
)

// Free text a caller puts into the ledger is bounded and printable: it is
// hashed into the chain and relayed to every consumer for ever.
func TestCheckText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, value string
		max         int
		msg         string // "" when the text is accepted
	}{
		{"empty", "", 10, ""},
		{"plain", "bonus for May", 20, ""},
		{"at the limit, counted in characters", strings.Repeat("ü", 10), 10, ""},
		{"one character over", strings.Repeat("ü", 11), 10, "reason must be at most 10 characters (it has 11)"},
		{"60,000 characters", strings.Repeat("x", 60000), domain.MaxReasonLength, "reason must be at most 500 characters (it has 60000)"},
		{"not UTF-8", "bonus\xff", 10, "reason must be valid UTF-8"},
		{"newline", "line one\nline two", 50, "reason must not contain control characters or line breaks (U+000A at character 9)"},
		{"tab", "a\tb", 50, "reason must not contain control characters or line breaks (U+0009 at character 2)"},
		{"NUL", "a\x00", 50, "reason must not contain control characters or line breaks (U+0000 at character 2)"},
		{"DEL", "a\x7f", 50, "reason must not contain control characters or line breaks (U+007F at character 2)"},
		{"C1 control", "a\u0085", 50, "reason must not contain control characters or line breaks (U+0085 at character 2)"},
		{"line separator", "a\u2028b", 50, "reason must not contain control characters or line breaks (U+2028 at character 2)"},
		{"paragraph separator", "a\u2029b", 50, "reason must not contain control characters or line breaks (U+2029 at character 2)"},
		{"other scripts and symbols", "Prämie für Mai – 5 € 🎰 ボーナス", 50, ""},
		{"right-to-left override", "bonus \u202e00.5", 50, "reason must not contain bidirectional embedding, override or isolate characters (U+202E at character 7)"},
		{"left-to-right embedding", "\u202aa", 50, "reason must not contain bidirectional embedding, override or isolate characters (U+202A at character 1)"},
		{"pop directional formatting", "a\u202c", 50, "reason must not contain bidirectional embedding, override or isolate characters (U+202C at character 2)"},
		{"first strong isolate", "a\u2068b\u2069", 50, "reason must not contain bidirectional embedding, override or isolate characters (U+2068 at character 2)"},
		{"pop directional isolate", "a\u2069", 50, "reason must not contain bidirectional embedding, override or isolate characters (U+2069 at character 2)"},
		{"zero-width joiner and non-joiner (emoji, Persian)", "👩\u200d💻 می\u200cخواهم", 50, ""},
		{"Arabic and Hebrew text", "مكافأة מבצע", 50, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := domain.CheckText("reason", tc.value, tc.max)
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("CheckText refused: %v", err)
				}
				return
			}
			var fe *domain.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v, want a *domain.FieldError", err)
			}
			if fe.Field != "reason" || fe.Message != tc.msg {
				t.Fatalf("got field %q message %q, want reason %q", fe.Field, fe.Message, tc.msg)
			}
			if !errors.Is(err, domain.ErrInvalidArgument) {
				t.Fatalf("%v is not ErrInvalidArgument", err)
			}
		})
	}
}

// Every operator transaction refuses a reason it may not store, before it
// books anything; a reason at the limit is booked.
func TestClientTxReason(t *testing.T) {
	long := strings.Repeat("x", domain.MaxReasonLength+1)
	reason := func(s string) clientOpt { return clientWith(func(c *domain.ClientTx) { c.Reason = s }) }
	runCases(t, []decisionCase{
		{name: "deposit with a reason of 60,000 characters",
			when: deposit("d1", amt("5.00"), forPlayer(player), reason(strings.Repeat("x", 60000))),
			then: then{err: domain.ErrInvalidArgument, balances: bal(wallet, 0, external, 0)}},
		{name: "deposit with a reason at the limit",
			when: deposit("d1", amt("5.00"), forPlayer(player), reason(strings.Repeat("é", domain.MaxReasonLength))),
			then: then{typ: domain.EventDeposited, stream: wallet, version: 1, amount: "5.00", after: "5.00",
				postings: []domain.Posting{post(external, "-5.00"), post(wallet, "5.00")},
				balances: bal(wallet, 500, external, -500)}},
		{name: "withdrawal with a reason too long",
			given: []decision{fund("10.00")},
			when:  withdrawal("w1", amt("1.00"), forPlayer(player), reason(long)),
			then:  then{err: domain.ErrInvalidArgument, balances: bal(wallet, 1000)}},
		{name: "adjustment with a line break in its reason",
			given: []decision{fund("10.00")},
			when:  adjustment("a1", amt("1.00"), forPlayer(player), reason("goodwill\r\nforged: line")),
			then:  then{err: domain.ErrInvalidArgument, balances: bal(wallet, 1000)}},
		{name: "transfer with a control character in its reason",
			given: []decision{deposit("d1", amt("10.00"))},
			when:  transfer("t1", amt("1.00"), domain.ToPlayer, forPlayer(player), reason("to\x1b[2Jplayer")),
			then:  then{err: domain.ErrInvalidArgument, balances: bal(clientWallet, 1000, wallet, 0)}},
	})
}
