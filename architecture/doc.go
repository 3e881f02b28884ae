// Package architecture holds the package map as data (Rooms: every package
// of the module, what it holds, what it may import) and the size limits
// (MaxFileLines, MaxFuncLines, LongFuncs). Its test checks the import
// graph and the code against them, and docs/architecture.md's "Package
// map" table against Rooms, so that a package in no room, an edge pointing
// the wrong way, or a file or function grown too long fails the build
// instead of waiting for a review to notice. No other package imports it.
package architecture
