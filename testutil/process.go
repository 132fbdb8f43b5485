package testutil

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time this process has used so far, user and system;
// 0 where the system cannot tell. Benchmarks and the soak test divide it
// by wall time to get the cores they kept busy.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
