package vlog_test

import (
	"testing"

	"github.com/pitboss/pitboss/api/vlog"
)

// Tile paths as C2SP tlog-tiles spells them: N in 3-digit groups, all but
// the last with an x; any other spelling of a tile is refused.
func TestTilePath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		path string
		want vlog.TilePath
		bad  bool
	}{
		{path: "tile/0/000", want: vlog.TilePath{Level: 0, N: 0}},
		{path: "tile/1/067.p/5", want: vlog.TilePath{Level: 1, N: 67, Width: 5}},
		{path: "tile/entries/x001/x234/067.p/255", want: vlog.TilePath{Level: -1, N: 1234067, Width: 255}},
		{path: "tile/63/x001/000", want: vlog.TilePath{Level: 63, N: 1000}},
		{path: "tile/0/0", bad: true},
		{path: "tile/00/000", bad: true},
		{path: "tile/64/000", bad: true},
		{path: "tile/0/x000/001", bad: true},
		{path: "tile/0/001/002", bad: true},
		{path: "tile/0/000.p/0", bad: true},
		{path: "tile/0/000.p/256", bad: true},
		{path: "tile/0/000.p/05", bad: true},
		{path: "tile/0/-01", bad: true},
		{path: "tile/data/000", bad: true},
		{path: "tiles/0/000", bad: true},
	} {
		t.Run(tc.path, func(t *testing.T) {
			got, err := vlog.ParseTilePath(tc.path)
			if tc.bad {
				if err == nil {
					t.Fatalf("parsed %+v", got)
				}
				return
			}
			if err != nil || got != tc.want || got.String() != tc.path {
				t.Fatalf("got %+v (%q), %v; want %+v", got, got.String(), err, tc.want)
			}
		})
	}
}

// Whatever parses prints back as itself.
func FuzzTilePath(f *testing.F) {
	for _, s := range []string{"tile/0/000", "tile/entries/x001/x234/067.p/255", "tile/3/x999/999.p/1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := vlog.ParseTilePath(s)
		if err == nil && p.String() != s {
			t.Fatalf("%q parsed as %+v, prints %q", s, p, p.String())
		}
	})
}
