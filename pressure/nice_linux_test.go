package pressure

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestInBackground checks that work runs on a thread of lower priority and a longer time
// slice than the process's (a kernel before 6.12 reports no slice), off the first of the
// process's cores when it has more than one, and that the thread gets all three back after.
func TestInBackground(t *testing.T) {
	var tid int
	var before, during *unix.SchedAttr
	var cores, duringCores unix.CPUSet
	var err, coresErr error
	if err := unix.SchedGetaffinity(0, &cores); err != nil {
		t.Fatal(err)
	}
	InBackground(func() {
		tid = unix.Gettid()
		during, err = unix.SchedGetAttr(tid, 0)
		coresErr = unix.SchedGetaffinity(0, &duringCores)
	})
	if err != nil {
		t.Fatal(err)
	}
	if coresErr != nil {
		t.Fatal(coresErr)
	}
	want := cores
	if cores.Count() > 1 {
		first := 0
		for !want.IsSet(first) {
			first++
		}
		want.Clear(first)
	}
	if duringCores != want {
		t.Errorf("work ran on %d of the process's %d cores, want all but the first (%d)", duringCores.Count(), cores.Count(), want.Count())
	}
	before, err = unix.SchedGetAttr(unix.Getpid(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := min(19, before.Nice+backgroundNice); during.Nice != want {
		t.Errorf("work ran at nice %d, want %d", during.Nice, want)
	}
	if during.Runtime != 0 && during.Runtime != uint64(backgroundSlice) {
		t.Errorf("work ran with a slice of %d ns, want %d", during.Runtime, uint64(backgroundSlice))
	}
	after, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		t.Skipf("the thread ended (its priority could not be raised back): %v", err)
	}
	if after.Nice != before.Nice || after.Runtime != before.Runtime {
		t.Errorf("after the work the thread has nice %d, slice %d ns; want nice %d, slice %d ns as before",
			after.Nice, after.Runtime, before.Nice, before.Runtime)
	}
	var afterCores unix.CPUSet
	if err := unix.SchedGetaffinity(tid, &afterCores); err != nil {
		t.Fatal(err)
	}
	if afterCores != cores {
		t.Errorf("after the work the thread may run on %d cores, want the %d it had", afterCores.Count(), cores.Count())
	}
}
