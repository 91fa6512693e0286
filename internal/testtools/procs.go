package testtools

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ProcessesWithEnv lists the pids of this machine's processes whose
// environment holds the entry env (NAME=value) and whose command line
// starts with cmdline (NUL-separated, as in /proc/PID/cmdline; "" for any):
// a test's own processes, told apart from another test run's on the same
// machine by an environment entry that only its processes carry (a fork
// shares its parent's environment block, so subshells carry it too).
func ProcessesWithEnv(env, cmdline string) []int {
	want := "\x00" + env + "\x00"
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cmdline != "" {
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err != nil || !strings.HasPrefix(string(b), cmdline) {
				continue
			}
		}
		environ, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && strings.Contains("\x00"+string(environ), want) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// CommandLines lists this machine's processes whose command line holds
// marker, one "PID UID ARGS" line each (ARGS space-separated): what ps
// -eo pid,uid,args would print of them, read from /proc, since procps is
// not on every machine that runs the tests.
func CommandLines(marker string) []string {
	var lines []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
		if !strings.Contains(args, marker) {
			continue
		}
		uid := "?"
		if info, err := os.Stat(filepath.Join("/proc", e.Name())); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				uid = strconv.FormatUint(uint64(st.Uid), 10)
			}
		}
		lines = append(lines, e.Name()+" "+uid+" "+args)
	}
	return lines
}
