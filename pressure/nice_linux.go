package pressure

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// backgroundNice is the niceness of a thread running a long request while other projects
// are active: the kernel then gives it only a small weight against normal threads.
const backgroundNice = 15

// inBackground runs work on a thread of its own at lower priority. Go's scheduler cannot
// prefer one goroutine over another, but the kernel can prefer one thread over another: the
// other projects' requests, on the process's other threads, get the CPU first, and work
// still gets every cycle they leave. If the thread's priority cannot be set back, the
// thread is not given back to the runtime (it ends with the goroutine).
func inBackground(work func()) {
	runtime.LockOSThread()
	tid := unix.Gettid()
	if err := unix.Setpriority(unix.PRIO_PROCESS, tid, backgroundNice); err != nil {
		runtime.UnlockOSThread()
		work()
		return
	}
	defer func() {
		if unix.Setpriority(unix.PRIO_PROCESS, tid, 0) == nil {
			runtime.UnlockOSThread()
		}
	}()
	work()
}
