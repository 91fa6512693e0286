package inventory

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kevinburke/ssh_config"
)

type sshConfigEntry struct {
	cfg *ssh_config.Config // nil when the file is absent and that is fine
	ok  bool               // false once an error was reported for the file
}

// sshConfig returns the decoded file at path, loading it once per Parse.
// Problems are reported once, against the first host that needs the file;
// ok is false then, so callers skip the errors that would only follow from
// the missing values. A missing file that nobody named explicitly (the
// default ~/.ssh/config) is no error.
func (p *parser) sshConfig(path string, explicit bool, line int, fieldPath string) (*ssh_config.Config, bool) {
	if path == "" {
		return nil, true
	}
	if e, ok := p.sshConfigs[path]; ok {
		return e.cfg, e.ok
	}
	cfg, err := loadSSHConfig(path, p.home)
	e := &sshConfigEntry{cfg: cfg, ok: true}
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist) && !explicit:
		e.cfg = nil
	default:
		e.cfg, e.ok = nil, false
		p.add(line, fieldPath, fmt.Errorf("%w %s: %w", ErrSSHConfig, path, err))
	}
	p.sshConfigs[path] = e
	return e.cfg, e.ok
}

func loadSSHConfig(path, home string) (*ssh_config.Config, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	// A FIFO or device would block or never end.
	switch {
	case fi.IsDir():
		return nil, errors.New("is a directory")
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	data, err := readFile(path, maxSSHConfigSize)
	if err != nil {
		return nil, err
	}
	data, err = rewriteSSHConfig(data, home)
	if err != nil {
		return nil, err
	}
	return decodeSSHConfig(data)
}

func decodeSSHConfig(data []byte) (cfg *ssh_config.Config, err error) {
	// The library turns its own parse panics into errors but re-panics
	// runtime errors; a bug there must not crash an audit.
	defer func() {
		if r := recover(); r != nil {
			cfg, err = nil, fmt.Errorf("ssh_config parser failure: %v", r)
		}
	}()
	return ssh_config.Decode(bytes.NewReader(data))
}

// rewriteSSHConfig adapts a real-world ssh_config to what kevinburke/ssh_config
// can evaluate without consulting anything but the given home directory.
// Line numbers are kept so the library's errors still point at the file.
//
// Match: the library understands only "Match all" and a single "Match host"
// criterion and fails the whole file on anything else (exec, user,
// canonical, several criteria), which would make one exotic block break
// every host. Blocks it can evaluate are kept, with OpenSSH's comma list
// turned into the library's space list and originalhost (the name as typed,
// which is what the library matches) treated as host. Any other Match line
// becomes "Host !*", a block that matches no host, so its settings are
// ignored rather than applied where they might not belong. "Match host"
// is matched against the inventory name, not the resolved HostName as
// OpenSSH does.
//
// Include: the library resolves relative and ~/ paths against the real
// user's home, not LoadOptions.Home, and reads whatever the glob matches.
// Top-level Include paths are therefore made absolute here and their
// matches checked to be regular files. Includes nested in included files
// are still resolved by the library.
func rewriteSSHConfig(data []byte, home string) ([]byte, error) {
	lines := strings.Split(string(data), "\n")
	for i, raw := range lines {
		line := strings.TrimRight(raw, "\r")
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed == "" || trimmed[0] == '#' {
			continue
		}
		end := strings.IndexAny(trimmed, " \t=")
		if end < 0 {
			continue
		}
		keyword := strings.ToLower(trimmed[:end])
		args := strings.TrimLeft(trimmed[end:], " \t")
		args = strings.TrimLeft(strings.TrimPrefix(args, "="), " \t")
		if j := strings.Index(args, "#"); j >= 0 {
			args = args[:j]
		}
		switch keyword {
		case "match":
			lines[i] = rewriteMatch(strings.Fields(args))
		case "include":
			rewritten, err := rewriteInclude(strings.Fields(args), home)
			if err != nil {
				return nil, fmt.Errorf("line %d: Include: %w", i+1, err)
			}
			lines[i] = rewritten
		}
	}
	return []byte(strings.Join(lines, "\n")), nil
}

func rewriteMatch(args []string) string {
	const never = "Host !*"
	switch {
	case len(args) == 1 && strings.EqualFold(args[0], "all"):
		return "Match all"
	case len(args) == 2 && (strings.EqualFold(args[0], "host") || strings.EqualFold(args[0], "originalhost")):
		var pats []string
		for _, pat := range strings.Split(strings.Trim(args[1], `"`), ",") {
			if pat != "" {
				pats = append(pats, pat)
			}
		}
		if len(pats) == 0 {
			return never
		}
		return "Match host " + strings.Join(pats, " ")
	}
	return never
}

func rewriteInclude(args []string, home string) (string, error) {
	var abs []string
	for _, a := range args {
		a = strings.Trim(a, `"`)
		switch {
		case filepath.IsAbs(a):
		case home == "":
			return "", fmt.Errorf("cannot resolve %q: the home directory is unknown", a)
		case a == "~" || strings.HasPrefix(a, "~/"):
			a = filepath.Join(home, a[1:])
		default:
			// ssh_config(5): relative Include paths of a user config are
			// relative to ~/.ssh.
			a = filepath.Join(home, ".ssh", a)
		}
		matches, err := filepath.Glob(a)
		if err != nil {
			return "", fmt.Errorf("%q: %w", a, err)
		}
		for _, m := range matches {
			fi, err := os.Stat(m)
			if err != nil {
				return "", fmt.Errorf("%s: %w", m, unwrapPathError(err))
			}
			if !fi.Mode().IsRegular() || fi.Size() > maxSSHConfigSize {
				return "", fmt.Errorf("%s: not a regular file of at most %d MiB", m, maxSSHConfigSize>>20)
			}
		}
		abs = append(abs, a)
	}
	if len(abs) == 0 {
		return "", errors.New("no file named")
	}
	return "Include " + strings.Join(abs, " "), nil
}
