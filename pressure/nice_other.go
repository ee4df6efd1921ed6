//go:build !linux

package pressure

// inBackground runs work: thread priorities are set on Linux only.
func inBackground(work func()) { work() }
