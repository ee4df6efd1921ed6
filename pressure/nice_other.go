//go:build !linux

package pressure

// InBackground runs work: thread priorities are set on Linux only.
func InBackground(work func()) { work() }
