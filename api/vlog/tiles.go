package vlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/pitboss/pitboss/api/wire"
	"github.com/pitboss/pitboss/ledgerlog"
)

// TilePath is a C2SP tlog-tiles path below the prefix: level -1 is the
// entry bundles ("tile/entries/<N>"), width 0 a full tile.
type TilePath struct {
	Level int
	N     int64
	Width int
}

// String is the path's text: "tile/<L>/<N>[.p/<W>]" with N in 3-digit
// groups, all but the last prefixed with "x".
func (p TilePath) String() string {
	l := strconv.Itoa(p.Level)
	if p.Level < 0 {
		l = "entries"
	}
	n := fmt.Sprintf("%03d", p.N%1000)
	for rest := p.N / 1000; rest > 0; rest /= 1000 {
		n = fmt.Sprintf("x%03d/", rest%1000) + n
	}
	if p.Width > 0 {
		n += ".p/" + strconv.Itoa(p.Width)
	}
	return "tile/" + l + "/" + n
}

// errTilePath is every malformed tile path (a 404: there is no such
// resource).
var errTilePath = errors.New("not a C2SP tile path")

// ParseTilePath reads a path as String writes it, refusing any other
// spelling of the same tile (leading zeros, empty groups, width 0 or 256).
func ParseTilePath(path string) (TilePath, error) {
	rest, ok := strings.CutPrefix(path, "tile/")
	if !ok {
		return TilePath{}, errTilePath
	}
	var p TilePath
	level, rest, _ := strings.Cut(rest, "/")
	if level == "entries" {
		p.Level = -1
	} else {
		l, err := strconv.Atoi(level)
		if err != nil || l < 0 || l > 63 || strconv.Itoa(l) != level {
			return TilePath{}, errTilePath
		}
		p.Level = l
	}
	if n, w, partial := strings.Cut(rest, ".p/"); partial {
		width, err := strconv.Atoi(w)
		if err != nil || width < 1 || width > 255 || strconv.Itoa(width) != w {
			return TilePath{}, errTilePath
		}
		rest, p.Width = n, width
	}
	groups := strings.Split(rest, "/")
	for i, g := range groups {
		if i < len(groups)-1 {
			var ok bool
			if g, ok = strings.CutPrefix(g, "x"); !ok {
				return TilePath{}, errTilePath
			}
		}
		d, err := strconv.Atoi(g)
		if len(g) != 3 || strings.Trim(g, "0123456789") != "" || err != nil || (i == 0 && i < len(groups)-1 && d == 0) ||
			p.N > (1<<53) {
			return TilePath{}, errTilePath
		}
		p.N = p.N*1000 + int64(d)
	}
	return p, nil
}

// widthIn is the width of the tile at level (-1: the entries, as level 0)
// and index n in a tree of size: 256 for a full tile, 0 for none.
func widthIn(level int, n, size int64) int {
	if level < 0 {
		level = 0
	}
	span := int64(1) << (ledgerlog.TileHeight * level) // leaves under one hash of the tile
	hashes := size / span                              // complete hashes at that level
	switch {
	case n < hashes/256:
		return 256
	case n == hashes/256:
		return int(hashes % 256)
	}
	return 0
}

// tile answers prefix/tile/...: a hash tile or an entry bundle of the
// latest checkpoint's tree, at any width up to the one it has there (a
// narrower one is the tile of an earlier size: C2SP requires those of
// every checkpointed size); a wider one, or a tile the tree does not
// reach, is 404.
func (h Handlers) tile(c echo.Context, prefix string) error {
	if h.Store == nil {
		return unavailable()
	}
	path := c.Request().URL.Path
	if i := strings.Index(path, prefix+"/tile/"); i >= 0 {
		path = path[i+len(prefix)+1:]
	}
	p, err := ParseTilePath(path)
	if err != nil {
		return wire.NewError(http.StatusNotFound, wire.CodeNotFound, "not a C2SP tile path: tile/<L>/<N>[.p/<W>] or tile/entries/<N>[.p/<W>]")
	}
	ctx, log := c.Request().Context(), h.LogOf(c)
	msg, err := h.Store.LatestNote(ctx, log)
	if err != nil {
		return err
	}
	cp, err := noteCheckpoint(msg)
	if err != nil {
		return err
	}
	want, has := p.Width, widthIn(p.Level, p.N, cp.Size)
	if want == 0 {
		want = 256
	}
	if has == 0 || want > has {
		return wire.NewError(http.StatusNotFound, wire.CodeNotFound, "no tile "+p.String()+" in the tree of the latest checkpoint")
	}
	var data []byte
	if p.Level < 0 {
		data, err = h.bundle(c, log, p.N*256, want)
	} else {
		var d [][]byte
		d, err = h.Store.Tiles(ctx, log).ReadTiles([]tlog.Tile{{H: ledgerlog.TileHeight, L: p.Level, N: p.N, W: want}})
		if err == nil {
			data = d[0]
		}
	}
	if err != nil {
		return err
	}
	cache := CacheImmutable
	if p.Width > 0 {
		cache = CacheMutable
	}
	c.Response().Header().Set(echo.HeaderCacheControl, cache)
	return c.Blob(http.StatusOK, "application/octet-stream", data)
}

// bundle is the entry bundle of count leaves from first: each body with
// its length as a big-endian uint16 before it.
func (h Handlers) bundle(c echo.Context, log string, first int64, count int) ([]byte, error) {
	bodies, err := h.Store.Entries(c.Request().Context(), log, first, count)
	if err != nil {
		return nil, err
	}
	var out []byte
	for i, b := range bodies {
		if len(b) > 0xffff {
			return nil, fmt.Errorf("entry %d of %s: %d bytes, more than a bundle's 65535", first+int64(i), log, len(b))
		}
		out = binary.BigEndian.AppendUint16(out, uint16(len(b)))
		out = append(out, b...)
	}
	return out, nil
}
