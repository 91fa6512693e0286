package testtools

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SudoUser is a throw-away login made by SudoLogin.
type SudoUser struct {
	Name     string
	UID, GID uint32
}

// SudoLogin creates a throw-away system user that may run anything as root
// through sudo without a password (the README's become: sudo setup), and
// removes it and its sudoers drop-in when the test ends. Creating a user
// needs root, which CI has: without it, or without sudo, visudo, useradd
// or userdel, the test skips, or fails when RequireEnv is set.
func SudoLogin(t testing.TB) SudoUser {
	t.Helper()
	if need := SudoLoginMissing(); need != "" {
		Require(t, need)
	}
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	tag := hex.EncodeToString(b)
	name := "fa-sudo-" + tag
	// -p '*': a locked ("!") password makes sshd refuse the account even for
	// key logins when it runs without PAM (OpenSSH auth.c allowed_user).
	if out, err := exec.Command("useradd", "-M", "-r", "-s", "/bin/sh", "-p", "*", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd: %v: %s", err, out)
	}
	t.Cleanup(func() {
		// userdel refuses a user that still runs a process (exit 8). The
		// login's sshd session process ends on its own once the client
		// has closed the connection, a moment after the test; whatever
		// is still the user's after the bound is named, never waited out.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			out, err := exec.Command("userdel", name).CombinedOutput()
			if err == nil {
				return
			}
			if time.Now().After(deadline) || !strings.Contains(string(out), "currently used by process") {
				t.Errorf("userdel %s: %v: %s (the user's processes: %q)", name, err, out, processesOf(uidOf(name)))
				return
			}
		}
	})
	rule := name + " ALL=(ALL) NOPASSWD: ALL\n"
	draft := filepath.Join(t.TempDir(), "sudoers")
	if err := os.WriteFile(draft, []byte(rule), 0o440); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("visudo", "-cf", draft).CombinedOutput(); err != nil {
		t.Fatalf("visudo -cf: %v: %s", err, out)
	}
	// sudo reads drop-ins only from /etc/sudoers.d, and skips names with a dot.
	dropIn := "/etc/sudoers.d/fleet-audit-test-" + tag
	if err := os.WriteFile(dropIn, []byte(rule), 0o440); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.Remove(dropIn); err != nil {
			t.Errorf("remove %s: %v", dropIn, err)
		}
	})
	if out, err := exec.Command("sudo", "-n", "-u", name, "sudo", "-n", "true").CombinedOutput(); err != nil {
		t.Fatalf("%s cannot use sudo without a password: %v: %s", name, err, out)
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		t.Fatalf("%s: uid %q, gid %q", name, u.Uid, u.Gid)
	}
	return SudoUser{Name: name, UID: uint32(uid), GID: uint32(gid)}
}

// SudoLoginMissing names what this machine lacks for SudoLogin, a need
// of Tiers, or "" when it has it all.
func SudoLoginMissing() string {
	if os.Geteuid() != 0 {
		return "root"
	}
	for _, tool := range []string{"sudo", "visudo", "useradd", "userdel"} {
		if _, err := exec.LookPath(tool); err != nil {
			return tool
		}
	}
	return ""
}

// PublicDir is a directory every user can read, removed when the test
// ends: t.TempDir's directories are private to the user running the test.
// It is named as t.TempDir names its own (the test's name, then random
// digits), so that a test watching /tmp for what an audit leaves there
// (cmd's TestProbesAreReadOnly, running beside other packages) knows it
// for another test's directory.
func PublicDir(t testing.TB) string {
	t.Helper()
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, t.Name())
	if len(name) > 64 {
		name = name[:64]
	}
	dir, err := os.MkdirTemp("", name+"Public")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// uidOf is name's uid, or "" when it cannot be looked up.
func uidOf(name string) string {
	u, err := user.Lookup(name)
	if err != nil {
		return ""
	}
	return u.Uid
}

// processesOf lists the pid and command line of every process of uid.
func processesOf(uid string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		info, err := os.Stat(filepath.Join("/proc", e.Name()))
		if err != nil {
			continue
		}
		if st, ok := info.Sys().(*syscall.Stat_t); !ok || strconv.FormatUint(uint64(st.Uid), 10) != uid {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, e.Name()+" "+strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " ")))
	}
	return out
}
