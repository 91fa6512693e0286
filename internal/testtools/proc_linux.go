package testtools

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SelfCPU is this process's user and system CPU so far, its GC included.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// PeakRSSKiB is this process's peak resident set size (VmHWM); a machine
// without /proc/self/status skips the benchmark.
func PeakRSSKiB(b testing.TB) int64 {
	b.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skipf("no /proc/self/status: %v", err)
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatalf("VmHWM: %v", err)
			}
			return kib
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}
