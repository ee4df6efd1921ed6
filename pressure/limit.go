// Package pressure knows how much memory the process may use, watches how much it holds,
// and refuses new expensive requests while it holds nearly all of it, so that a burst of
// them is answered 503 instead of taking the process (and every project it serves) down.
// When the process is busy, it admits work per project (FairShare), so that one project's
// flood of expensive requests does not take the CPU from the others.
package pressure

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/dustin/go-humanize"
)

// Limit is the memory the process may use, and where that figure came from.
type Limit struct {
	Bytes int64 // 0: no limit is known, and the process never reports pressure
	// Source is "flag", "GOMEMLIMIT", "cgroup" or "" (none).
	Source string
}

// cgroupMemoryMax is the memory limit of the process's cgroup (v2), "max" when there is
// none.
const cgroupMemoryMax = "/sys/fs/cgroup/memory.max"

// cgroupShare is the part of the cgroup's limit the runtime's soft limit is set to: the
// rest is left for what the runtime does not count (the binary, C stacks, page cache of
// the SQLite files it maps), so the kernel's OOM killer is never the first to act.
const cgroupShare = 0.9

// ParseBytes reads a size as GOMEMLIMIT writes it ("900MiB", "2GiB", "1073741824") or with
// decimal units ("1GB"). "" is 0.
func ParseBytes(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	n, err := humanize.ParseBytes(s)
	if err != nil || n > math.MaxInt64 {
		return 0, fmt.Errorf("memory limit %q: want a size such as 900MiB or 2GiB", s)
	}
	return int64(n), nil
}

// DetectLimit finds the process's memory limit: configured (bytes) when it is not 0, else
// GOMEMLIMIT, else cgroupShare of the cgroup's memory.max. A configured limit, or one read
// from the cgroup, also becomes the runtime's soft limit (runtime/debug.SetMemoryLimit), so
// the collector works harder as the process nears it; GOMEMLIMIT already is that limit.
func DetectLimit(configured int64) (Limit, error) {
	switch {
	case configured < 0:
		return Limit{}, fmt.Errorf("memory limit %d: want a positive number of bytes", configured)
	case configured > 0:
		debug.SetMemoryLimit(configured)
		return Limit{Bytes: configured, Source: "flag"}, nil
	}
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		return Limit{Bytes: l, Source: "GOMEMLIMIT"}, nil
	}
	raw, err := os.ReadFile(cgroupMemoryMax)
	if errors.Is(err, fs.ErrNotExist) {
		return Limit{}, nil
	}
	if err != nil {
		return Limit{}, fmt.Errorf("read the cgroup memory limit: %w", err)
	}
	text := strings.TrimSpace(string(raw))
	if text == "max" {
		return Limit{}, nil
	}
	max, err := strconv.ParseInt(text, 10, 64)
	if err != nil || max <= 0 {
		return Limit{}, fmt.Errorf("read the cgroup memory limit: %s holds %q", cgroupMemoryMax, text)
	}
	l := int64(float64(max) * cgroupShare)
	debug.SetMemoryLimit(l)
	return Limit{Bytes: l, Source: "cgroup"}, nil
}
