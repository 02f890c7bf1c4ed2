// Package doccheck holds the tests that keep the documentation true to
// itself: every relative link in README.md, ARCHITECTURE.md, CHANGELOG.md
// and docs/ names a file that exists and, with a #fragment, a heading in it.
package doccheck
