package pressure

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// backgroundNice is how much nicer than the process a thread running a long request gets
// while other projects are active: at 15 more, the kernel weighs it 36 against 1024.
const backgroundNice = 15

// InBackground runs work on a thread of its own at lower priority: a long request of a
// project beside others (FairShare), an MCP analysis beside the projects (serve --role
// all). Go's scheduler cannot prefer one goroutine over another, but the kernel can prefer
// one thread over another: the other requests, on the process's other threads, get the CPU
// first, and work still gets every cycle they leave. Threads the runtime starts meanwhile do not inherit the
// priority (a locked thread has the runtime's template thread start them). A thread whose
// priority cannot be set back (raising it needs CAP_SYS_NICE unless RLIMIT_NICE allows it)
// is not given back to the runtime: it ends with the goroutine, and the runtime starts
// another when it needs one, tens of microseconds against a request of more than 10 ms.
func InBackground(work func()) {
	runtime.LockOSThread()
	tid := unix.Gettid()
	// The system call answers 20 - nice, never a negative number.
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	nice := 20 - prio
	lowered := err == nil && unix.Setpriority(unix.PRIO_PROCESS, tid, min(19, nice+backgroundNice)) == nil
	defer func() {
		if !lowered || unix.Setpriority(unix.PRIO_PROCESS, tid, nice) == nil {
			runtime.UnlockOSThread()
		}
	}()
	work()
}
