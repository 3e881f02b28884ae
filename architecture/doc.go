// Package architecture holds no production code: its test checks the
// import graph and the size of our own packages against the rules in
// docs/architecture.md ("Package map"), so that an edge pointing the wrong
// way, or a room grown too big, fails the build instead of waiting for a
// review to notice.
package architecture
