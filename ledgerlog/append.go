package ledgerlog

import (
	"fmt"

	"golang.org/x/mod/sumdb/tlog"
)

// Tile is one tile to store: its coordinates (tlog.Tile of height
// TileHeight; W hashes wide, 256 when full) and its data, W hashes of 32
// bytes.
type Tile struct {
	tlog.Tile
	Data []byte
}

// Growth is what appending leaves to a tree of size From made: the tree of
// size To and its root, and every tile that changed (new, or a partial
// tile grown), lowest level first.
type Growth struct {
	From, To int64
	Root     tlog.Hash
	Tiles    []Tile
}

// Append appends the leaves (LeafHash of each record, in order) to the
// tree of size from whose stored hashes old reads (the tiles stored so
// far), and returns the growth. It is Go's tlog arithmetic: the stored
// hashes of each record (tlog.StoredHashesForRecordHash), the tiles of the
// growth (tlog.NewTiles) and their data (tlog.ReadTileData).
func Append(from int64, old tlog.HashReader, leaves []tlog.Hash) (Growth, error) {
	g := Growth{From: from, To: from + int64(len(leaves))}
	added := map[int64]tlog.Hash{}
	r := overlay{added: added, old: old}
	next := tlog.StoredHashIndex(0, from)
	for i, leaf := range leaves {
		n := from + int64(i)
		hashes, err := tlog.StoredHashesForRecordHash(n, leaf, r)
		if err != nil {
			return Growth{}, fmt.Errorf("leaf %d: %w", n, err)
		}
		for _, h := range hashes {
			added[next] = h
			next++
		}
	}
	var err error
	if g.To > 0 {
		if g.Root, err = tlog.TreeHash(g.To, r); err != nil {
			return Growth{}, fmt.Errorf("root of %d: %w", g.To, err)
		}
	}
	for _, t := range tlog.NewTiles(TileHeight, from, g.To) {
		data, err := tlog.ReadTileData(t, r)
		if err != nil {
			return Growth{}, fmt.Errorf("tile %s: %w", t.Path(), err)
		}
		g.Tiles = append(g.Tiles, Tile{Tile: t, Data: data})
	}
	return g, nil
}

// overlay reads the hashes added in this growth, and the rest from old.
type overlay struct {
	added map[int64]tlog.Hash
	old   tlog.HashReader
}

func (o overlay) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	var missing []int64
	var at []int
	for i, x := range indexes {
		if h, ok := o.added[x]; ok {
			out[i] = h
			continue
		}
		missing = append(missing, x)
		at = append(at, i)
	}
	if len(missing) == 0 {
		return out, nil
	}
	if o.old == nil {
		return nil, fmt.Errorf("stored hash %d: no earlier tree to read it from", missing[0])
	}
	hs, err := o.old.ReadHashes(missing)
	if err != nil {
		return nil, err
	}
	if len(hs) != len(missing) {
		return nil, fmt.Errorf("read %d hashes, asked %d", len(hs), len(missing))
	}
	for j, i := range at {
		out[i] = hs[j]
	}
	return out, nil
}

// TileReader reads stored tiles: the data of each (as stored, possibly
// wider than asked; a full tile is 256 hashes).
type TileReader interface {
	ReadTiles(tiles []tlog.Tile) ([][]byte, error)
}

// StoredHashes reads stored hashes out of stored tiles, trusting the
// store (the builder reading what it wrote itself; a verifier uses
// tlog.TileHashReader, which checks tiles against a signed root).
func StoredHashes(tr TileReader) tlog.HashReader {
	return tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		tiles := make([]tlog.Tile, len(indexes))
		for i, x := range indexes {
			tiles[i] = tlog.TileForIndex(TileHeight, x)
		}
		data, err := tr.ReadTiles(tiles)
		if err != nil {
			return nil, err
		}
		out := make([]tlog.Hash, len(indexes))
		for i, x := range indexes {
			t := tiles[i]
			if len(data[i]) < t.W*tlog.HashSize {
				return nil, fmt.Errorf("tile %s holds %d bytes, needs %d", t.Path(), len(data[i]), t.W*tlog.HashSize)
			}
			if out[i], err = tlog.HashFromTile(t, data[i][:t.W*tlog.HashSize], x); err != nil {
				return nil, err
			}
		}
		return out, nil
	})
}
