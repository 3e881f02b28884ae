package wire_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/domain"
)

// keysBody has every shape a key can sit in: fields of the body, of a
// nested object, of objects in an array, of a map, and of a raw value the
// decoder does not look into.
type keysBody struct {
	SessionID string            `json:"session_id"`
	Amount    domain.AmountText `json:"amount"`
	Kind      string            `json:"kind"`
	Inner     *struct {
		A int `json:"a"`
		B int `json:"b"`
	} `json:"inner"`
	Items []struct {
		A int `json:"a"`
	} `json:"items"`
	Labels map[string]string `json:"labels"`
	Raw    json.RawMessage   `json:"raw"`
	keysEmbedded
}

type keysEmbedded struct {
	Round string `json:"round_id"`
}

// TestDecodeJSONRefusesDuplicateAndCaseFoldedKeys: encoding/json lets the
// last of two equal keys win and reads a key onto a field whose name it
// equals only under case folding, so a reader that takes the first value,
// or matches names exactly, sees another request than we book (issue 17,
// item 3). Every such key is a 400 INVALID_REQUEST naming it.
func TestDecodeJSONRefusesDuplicateAndCaseFoldedKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body, field string
	}{
		{"duplicate", `{"amount":"0.01","amount":"0.02"}`, "amount"},
		{"duplicate with the same value", `{"session_id":"s","session_id":"s"}`, "session_id"},
		{"duplicate of a field of an embedded struct", `{"round_id":"r","round_id":"s"}`, "round_id"},
		{"duplicate after unescaping", `{"amount":"0.01","\u0061mount":"0.02"}`, "amount"},
		{"duplicate after unescaping a slash", `{"labels":{"a/b":"1","a\/b":"2"}}`, "labels.a/b"},
		{"lone surrogates both read as U+FFFD", `{"labels":{"\ud800":"1","\udfff":"2"}}`, "labels.\ufffd"},
		{"upper case", `{"Amount":"0.02"}`, "Amount"},
		{"all upper case", `{"SESSION_ID":"s"}`, "SESSION_ID"},
		{"upper case after unescaping", `{"\u0041mount":"0.02"}`, "Amount"},
		{"case-folded beside the exact key", `{"amount":"0.01","Amount":"0.02"}`, "Amount"},
		{"case-folded before the exact key", `{"AMOUNT":"0.01","amount":"0.02"}`, "AMOUNT"},
		{"Kelvin sign folds onto k", `{"\u212aind":"x"}`, "\u212aind"},
		{"long s folds onto s", `{"ſession_id":"x"}`, "ſession_id"},
		{"case-folded field of an embedded struct", `{"Round_ID":"r"}`, "Round_ID"},
		{"nested duplicate", `{"inner":{"a":1,"b":2,"a":3}}`, "inner.a"},
		{"nested case-folded", `{"inner":{"A":1}}`, "inner.A"},
		{"duplicate in the second object of an array", `{"items":[{"a":1},{"a":1,"a":2}]}`, "items[1].a"},
		{"case-folded in an array", `{"items":[{"A":1}]}`, "items[0].A"},
		{"map keys that differ only in case", `{"labels":{"x":"1","X":"2"}}`, "labels.X"},
		{"map duplicate", `{"labels":{"x":"1","x":"2"}}`, "labels.x"},
		{"duplicate inside a raw value", `{"raw":{"a":1,"a":2}}`, "raw.a"},
		{"duplicate deep inside a raw value", `{"raw":[0,[{"a":{"b":1,"B":2}}]]}`, "raw[1][0].a.B"},
		{"duplicate after a nested object", `{"inner":{"a":1},"kind":"x","inner":null}`, "inner"},
		{"duplicate in a large object", `{"labels":{` + manyKeys(40) + `,"k5":""}}`, "labels.k5"},
		{"case-folded in a large object", `{"labels":{` + manyKeys(40) + `,"K33":""}}`, "labels.K33"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v keysBody
			err := wire.DecodeJSON([]byte(tc.body), &v)
			var we *wire.Error
			if !errors.As(err, &we) {
				t.Fatalf("%s: err %v, decoded %+v; want a refusal", tc.body, err, v)
			}
			if we.Status != http.StatusBadRequest || we.Code != wire.CodeInvalidRequest || we.Details["field"] != tc.field {
				t.Fatalf("%s: %d %s %q %v, want 400 INVALID_REQUEST field %q", tc.body, we.Status, we.Code, we.Message, we.Details, tc.field)
			}
			if !strings.Contains(we.Message, tc.field) {
				t.Errorf("%s: message %q does not name %q", tc.body, we.Message, tc.field)
			}
		})
	}
}

// manyKeys is the members "k0":"" to "k<n-1>":"", more than an object's
// keys are compared one by one.
func manyKeys(n int) string {
	m := make([]string, n)
	for i := range m {
		m[i] = `"k` + strconv.Itoa(i) + `":""`
	}
	return strings.Join(m, ",")
}

// TestDecodeJSONAcceptsDistinctKeys: the same key in different objects,
// keys that only look alike, and a key's text inside a string value are
// all fine.
func TestDecodeJSONAcceptsDistinctKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
	}{
		{"a bet", `{"session_id":"s","amount":"0.01","kind":"bet","round_id":"r"}`},
		{"the same key in nested and outer objects", `{"kind":"x","inner":{"a":1,"b":2},"raw":{"kind":1,"a":{"a":2}}}`},
		{"the same key in objects of an array", `{"items":[{"a":1},{"a":2},{"a":3}]}`},
		{"keys as values", `{"session_id":"amount","kind":"Amount","amount":"1"}`},
		{"a key's text in a string", `{"session_id":"\"amount\":\"2\",\"amount\"","amount":"1"}`},
		{"map keys that differ beyond case", `{"labels":{"a":"1","b":"2","ab":"3","a_":"4"}}`},
		{"escaped key that is the field's name", `{"\u0061mount":"0.01"}`},
		{"empty objects", `{"inner":{},"labels":{},"raw":{},"items":[{}]}`},
		{"white space around keys", " {\n \"amount\" : \"1\" ,\t\"kind\":\"x\" } "},
		{"a large object", `{"labels":{` + manyKeys(40) + `}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v keysBody
			if err := wire.DecodeJSON([]byte(tc.body), &v); err != nil {
				t.Fatalf("%s: %v", tc.body, err)
			}
		})
	}
	var v keysBody
	if err := wire.DecodeJSON([]byte(`{"\u0061mount":"0.01","items":[{"a":1},{"a":2}]}`), &v); err != nil ||
		v.Amount != "0.01" || len(v.Items) != 2 || v.Items[1].A != 2 {
		t.Fatalf("decoded %+v, %v", v, err)
	}
}

// TestDecodeJSONKeyRulesKeepTheOtherRefusals: a malformed body is still
// INVALID_JSON even when it also repeats a key, and a key the request does
// not have at all is still an unknown field.
func TestDecodeJSONKeyRulesKeepTheOtherRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body, code, field string
	}{
		{"malformed after a duplicate", `{"amount":"1","amount":"2",}`, wire.CodeInvalidJSON, ""},
		{"unterminated after a duplicate", `{"amount":"1","amount":"2"`, wire.CodeInvalidJSON, ""},
		{"data after the object", `{"amount":"1"} {"amount":"1","amount":"2"}`, wire.CodeInvalidJSON, ""},
		{"too deep", `{"raw":` + strings.Repeat("[", 20) + strings.Repeat("]", 20) + `}`, wire.CodeInvalidJSON, ""},
		{"unknown", `{"amounts":"1"}`, wire.CodeInvalidRequest, "amounts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v keysBody
			var we *wire.Error
			if err := wire.DecodeJSON([]byte(tc.body), &v); !errors.As(err, &we) {
				t.Fatalf("%s: err %v", tc.body, err)
			}
			if we.Code != tc.code || (tc.field != "" && we.Details["field"] != tc.field) {
				t.Fatalf("%s: %s %q %v, want %s field %q", tc.body, we.Code, we.Message, we.Details, tc.code, tc.field)
			}
		})
	}
}
