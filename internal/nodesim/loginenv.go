package nodesim

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// loginEnvFile is where a node keeps the environment of every login
// session: pam_env reads /etc/environment (readenv=1, the default) in the
// session stack of sshd and of sudo on Debian and Ubuntu (pam_env(8),
// /etc/pam.d/sshd and /etc/pam.d/sudo of openssh-server and sudo).
const loginEnvFile = "etc/environment"

// environmentFile renders env as /etc/environment: one KEY=VALUE a line,
// sorted.
func environmentFile(env map[string]string) string {
	var b strings.Builder
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.WriteString(k + "=" + env[k] + "\n")
	}
	return b.String()
}

// loginEnv reads a node's /etc/environment as pam_env does
// (modules/pam_env/pam_env.c, _parse_env_file): blank lines and lines
// starting with # are skipped, a leading "export " is dropped, a value in
// matching quotes loses them, and a line without "=" sets nothing.
func loginEnv(root string) []string {
	f, err := os.Open(filepath.Join(root, filepath.FromSlash(loginEnvFile)))
	if err != nil {
		return nil
	}
	defer f.Close()
	var env []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		l = strings.TrimPrefix(l, "export ")
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			continue
		}
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		env = append(env, k+"="+v)
	}
	return env
}

// CorporateProxy is the proxy WithHTTPProxyEnv sets: a host no simulated
// node serves, as a proxy that cannot reach the node's loopback would be.
const CorporateProxy = "http://proxy.corp.example:3128"

// WithHTTPProxyEnv is a node whose /etc/environment sets a corporate proxy
// for every login, as proxied sites do for apt and curl: http_proxy and
// https_proxy in lower and upper case, and a no_proxy that names the
// company's domain but not the loopback addresses (a common list; curl
// would bypass the proxy for 127.0.0.1 only when no_proxy names it).
func WithHTTPProxyEnv(s State) State {
	env := make(map[string]string, len(s.LoginEnv)+5)
	for k, v := range s.LoginEnv {
		env[k] = v
	}
	for _, k := range []string{"http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"} {
		env[k] = CorporateProxy
	}
	env["no_proxy"] = ".corp.example"
	s.LoginEnv = env
	return s
}
