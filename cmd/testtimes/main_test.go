package main

import (
	"strings"
	"testing"
)

func TestRelayPrintsWhatPlainGoTestWouldAndTheSlowest(t *testing.T) {
	in := strings.Join([]string{
		`# a vet line`,
		`{"Action":"run","Package":"p/a","Test":"TestOK"}`,
		`{"Action":"output","Package":"p/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}`,
		`{"Action":"output","Package":"p/a","Test":"TestOK","Output":"    a_test.go:1: quiet\n"}`,
		`{"Action":"pass","Package":"p/a","Test":"TestOK","Elapsed":3.5}`,
		`{"Action":"output","Package":"p/a","Test":"TestBad/sub","Output":"    a_test.go:2: loud\n"}`,
		`{"Action":"fail","Package":"p/a","Test":"TestBad/sub","Elapsed":9}`,
		`{"Action":"fail","Package":"p/a","Test":"TestBad","Elapsed":1.25}`,
		`{"Action":"output","Package":"p/a","Output":"PASS\n"}`,
		`{"Action":"output","Package":"p/a","Output":"FAIL\tp/a\t5.0s\n"}`,
		`{"Action":"fail","Package":"p/a","Elapsed":5}`,
		`{"Action":"pass","Package":"p/b","Elapsed":2}`,
	}, "\n")
	var out strings.Builder
	tests, pkgs, err := relay(strings.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	report(&out, tests, pkgs, 1)
	want := "# a vet line\n    a_test.go:2: loud\nFAIL\tp/a\t5.0s\n" +
		"\nslowest tests (go test -json Elapsed):\n      3.5 s  TestOK  p/a\n" +
		"slowest packages:\n      5.0 s  p/a  FAIL\n      7.0 s  the sum of 2 packages (go test runs several at once)\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}
