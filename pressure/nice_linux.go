package pressure

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// backgroundNice is how much nicer than the process a thread running a long request gets
// while other projects are active: at 15 more, the kernel weighs it 36 against 1024.
const backgroundNice = 15

// backgroundSlice is the time slice the kernel gives such a thread, longer than the
// default (0.7 – 3 ms). Linux's scheduler (EEVDF, 6.6 and later) lets a thread it has just
// picked run out its slice before a thread that wakes runs, whatever their priorities,
// unless the one that wakes has the shorter slice (6.12 and later; older kernels ignore
// the slice). With the default slice a short request of another project that woke on the
// core of a flood's thread waited for up to a slice; with the longer one it runs at once
// (issue 27: quiet's p99 beside a flood, median 1.27 ms over 8 runs, fell to 0.91 ms over 6;
// docs/performance.md "Fair share").
const backgroundSlice = 20 * time.Millisecond

// InBackground runs work on a thread of its own at lower priority, kept off one of the
// process's cores: a long request of a project beside others (FairShare), an MCP analysis
// beside the projects (serve --role all). Go's scheduler cannot prefer one goroutine over
// another, but the kernel can prefer one thread over another: the other requests, on the
// process's other threads, get the CPU first, and work still gets every cycle they leave.
//
// The core left out (the first the process may use) runs no background work, so the other
// requests' threads, and their clients' on the same machine, find it idle when they wake
// (the kernel counts a core running only a thread of lower priority as busy when it places
// a waking thread) and its caches hold their data rather than the background work's reads
// (issue 27: quiet's p99 beside 1, 2 or 8 floods, median 0.88 ms over 36 runs with 8 over
// 1 ms, fell to 0.80 ms over 42 runs with none over 1 ms; docs/performance.md "Fair share").
//
// Threads the runtime starts meanwhile inherit neither the priority nor the cores (a
// locked thread has the runtime's template thread start them). A thread whose priority or
// cores cannot be set back (raising the priority needs CAP_SYS_NICE unless RLIMIT_NICE
// allows it) is not given back to the runtime: it ends with the goroutine, and the runtime
// starts another when it needs one, tens of microseconds against a request of more than
// 10 ms.
func InBackground(work func()) {
	runtime.LockOSThread()
	tid := unix.Gettid()
	normal, err := unix.SchedGetAttr(tid, 0)
	lowered := false
	if err == nil {
		// The kernel reports the slice in use; 0 gives the thread back the default one.
		normal.Runtime = 0
		background := *normal
		background.Nice = min(19, normal.Nice+backgroundNice)
		background.Runtime = uint64(backgroundSlice)
		lowered = unix.SchedSetAttr(tid, &background, 0) == nil
	}
	var cores unix.CPUSet
	narrowed := unix.SchedGetaffinity(0, &cores) == nil && cores.Count() > 1 &&
		unix.SchedSetaffinity(0, withoutFirst(cores)) == nil
	defer func() {
		if (!narrowed || unix.SchedSetaffinity(0, &cores) == nil) &&
			(!lowered || unix.SchedSetAttr(tid, normal, 0) == nil) {
			runtime.UnlockOSThread()
		}
	}()
	work()
}

// withoutFirst is cores without the first of them; cores holds at least one.
func withoutFirst(cores unix.CPUSet) *unix.CPUSet {
	for i := 0; ; i++ {
		if cores.IsSet(i) {
			cores.Clear(i)
			return &cores
		}
	}
}
