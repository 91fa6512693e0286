package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "maxrss: error: %v\n", err)
		return 125
	}
	if len(args) < 2 {
		return fail(errors.New("usage: maxrss REPORT COMMAND [ARG...]"))
	}
	report, argv := args[0], args[1:]
	floor, err := ownPeak()
	if err != nil {
		return fail(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = cmd.Run()
	if cmd.ProcessState == nil {
		return fail(fmt.Errorf("run %s: %w", argv[0], err))
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return fail(errors.New("no rusage for the command"))
	}
	code := cmd.ProcessState.ExitCode()
	// ru_maxrss is KiB on Linux, the only system with /proc/self/status.
	if err := os.WriteFile(report, fmt.Appendf(nil, "%d %d %d\n", ru.Maxrss, floor, code), 0o600); err != nil {
		return fail(fmt.Errorf("report: %w", err))
	}
	if code < 0 {
		return 125
	}
	return code
}

// ownPeak is this process's peak RSS in KiB (VmHWM), which unlike its
// ru_maxrss leaves out what its parent passed on through vfork.
func ownPeak() (int64, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("own peak RSS: %w", err)
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(v)
			var kib int64
			if len(f) == 2 && f[1] == "kB" {
				if _, err := fmt.Sscan(f[0], &kib); err == nil {
					return kib, nil
				}
			}
			return 0, fmt.Errorf("own peak RSS: unexpected line %q", strings.TrimSpace(line))
		}
	}
	return 0, errors.New("own peak RSS: no VmHWM in /proc/self/status")
}
