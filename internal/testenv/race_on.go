//go:build race

package testenv

// Race reports whether the tests run under the race detector, which makes single-goroutine
// walks of large trees (GOROOT) twenty times slower and has nothing to find in them.
const Race = true
