package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/sshfleet"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/inventory"
	"github.com/fleet-audit/fleet-audit/report"
	"github.com/fleet-audit/fleet-audit/result"
)

// ---------------------------------------------------------------------------
// Secrets never reach reports or logs.

// secretForms are the byte strings whose presence anywhere in an output
// means the secret leaked: the secret, its hex, and the part of its
// standard and URL base64 encodings that does not depend on the bytes
// around it, at each of the three alignments a secret embedded in a larger
// base64 blob (a kubeconfig's client-key-data) can have.
func secretForms(secret []byte) []string {
	forms := []string{string(secret), hex.EncodeToString(secret)}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for pad := range 3 {
			b := enc.EncodeToString(append(make([]byte, pad), secret...))
			start := 0
			if pad > 0 {
				start = 4 // the first group mixes the padding in
			}
			end := 4 * ((pad + len(secret)) / 3) // the last partial group mixes in what follows
			if end-start >= 12 {
				forms = append(forms, b[start:end])
			}
		}
	}
	slices.Sort(forms)
	return slices.Compact(forms)
}

// leak is one secret form found in one output.
type leak struct {
	where, secret, form string
}

func (l leak) String() string { return fmt.Sprintf("%s: %s (as %q)", l.where, l.secret, l.form) }

// findLeaks searches every output for every form of every secret.
func findLeaks(outputs map[string][]byte, secrets map[string][]string) []leak {
	var found []leak
	for _, where := range slices.Sorted(maps.Keys(outputs)) {
		for _, name := range slices.Sorted(maps.Keys(secrets)) {
			for _, form := range secrets[name] {
				if bytes.Contains(outputs[where], []byte(form)) {
					found = append(found, leak{where, name, form})
				}
			}
		}
	}
	return found
}

// readTree returns every regular file under dir, keyed by its path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// pemBodyLines are the full-width base64 lines of a PEM file: any one of
// them in an output is a piece of the key.
func pemBodyLines(pemBytes []byte) []string {
	var out []string
	for _, l := range strings.Split(string(pemBytes), "\n") {
		if len(l) >= 40 && !strings.HasPrefix(l, "-----") {
			out = append(out, l)
		}
	}
	return out
}

// newEd25519 returns a fresh key, unencrypted or with a passphrase.
func newEd25519(t *testing.T, passphrase string) (ed25519.PrivateKey, ssh.PublicKey, []byte) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var block *pem.Block
	if passphrase == "" {
		block, err = ssh.MarshalPrivateKey(priv, "security test key")
	} else {
		block, err = ssh.MarshalPrivateKeyWithPassphrase(priv, "security test key", []byte(passphrase))
	}
	if err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return priv, sshPub, pem.EncodeToMemory(block)
}

// inventoryKnows reports whether the inventory parser accepts key in the
// given YAML position, so the tests use inventory features (passphrase_env,
// proxy_jump, become_user) as soon as they exist and not before.
func inventoryKnows(t *testing.T, doc string) bool {
	t.Helper()
	dir := t.TempDir()
	_, err := inventory.Parse(filepath.Join(dir, "probe.yaml"), []byte(doc), inventory.LoadOptions{UserSSHConfig: "none", Home: dir, CurrentUser: "root"})
	return !errors.Is(err, inventory.ErrUnknownKey)
}

// TestSecretsNeverReachOutputs plants RKE2 join tokens, a kubeconfig bearer
// token and client key, and private keys on every node, and an encrypted
// identity file plus its passphrase on the client. A full audit writing every
// format with -v, and a re-render of its results, must not carry any of them
// in any byte written, raw or encoded. A node rejecting the key puts the
// auth error path, which names the identity files, into the reports too.
func TestSecretsNeverReachOutputs(t *testing.T) {
	testtools.SkipShort(t, "audits fleets end to end")
	t.Parallel()
	home := t.TempDir()
	secret := func(label string) string { return "SECRET-" + label + "-" + probe.NewNonce() }
	text := map[string]string{
		"A rke2 token":                 secret("A"),
		"B rke2 agent-token":           secret("B"),
		"C kubeconfig bearer token":    secret("C"),
		"D identity passphrase":        secret("D"),
		"E kubeconfig client-key-data": secret("E"),
		"F token in a probed file":     secret("F"),
		"G bearer in a probed file":    secret("G"),
		"H node private key":           secret("H"),
		"I wrong passphrase":           secret("I"),
		"J second key passphrase":      secret("J"),
	}
	// The canary is no secret and must be found, in the formats that show
	// facts: proof that what the probes print is in what is searched.
	canary := "CANARY-" + probe.NewNonce()
	secrets := map[string][]string{}
	for name, s := range text {
		secrets[name] = secretForms([]byte(s))
	}

	dir := t.TempDir()
	plainPriv, plainPub, plainPEM := newEd25519(t, "")
	encPriv, encPub, encPEM := newEd25519(t, text["D identity passphrase"])
	enc2Priv, enc2Pub, enc2PEM := newEd25519(t, text["J second key passphrase"])
	for name, priv := range map[string]ed25519.PrivateKey{"client key": plainPriv, "encrypted client key": encPriv, "second encrypted key": enc2Priv} {
		secrets[name+" seed"] = secretForms(priv.Seed())
	}
	secrets["client key file"] = pemBodyLines(plainPEM)
	secrets["encrypted client key file"] = pemBodyLines(encPEM)
	secrets["second encrypted key file"] = pemBodyLines(enc2PEM)
	secrets["any private key block"] = []string{"PRIVATE KEY-----"}
	plainKey, encKey, enc2Key := filepath.Join(dir, "id_plain"), filepath.Join(dir, "id_encrypted"), filepath.Join(dir, "id_encrypted2")
	for p, b := range map[string][]byte{plainKey: plainPEM, encKey: encPEM, enc2Key: enc2PEM} {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// With passphrase_env, node-2 accepts only the encrypted key, so its
	// passphrase is used, and node-3 accepts only a second encrypted key
	// whose variable holds a wrong passphrase, so the failure path runs;
	// no passphrase may reach any output.
	const passEnv, wrongEnv = "FLEET_AUDIT_TEST_KEY_PASSPHRASE", "FLEET_AUDIT_TEST_WRONG_PASSPHRASE"
	cliEnv := []string{passEnv + "=" + text["D identity passphrase"], wrongEnv + "=" + text["I wrong passphrase"]}
	cli := func(args ...string) (int, string, string) {
		t.Helper()
		return runProcess(context.Background(), t, home, cliEnv, args...)
	}
	passphraseLine, hostPassphrase := "", map[string]string{}
	withPassphrase := inventoryKnows(t, "defaults:\n  passphrase_env: X\nhosts:\n  h: {address: 127.0.0.1}\n")
	if withPassphrase {
		passphraseLine = "  passphrase_env: " + passEnv + "\n"
		hostPassphrase["node-3"] = fmt.Sprintf(", passphrase_env: %s, identity_files: [%q, %q]", wrongEnv, enc2Key, plainKey)
	} else {
		t.Log("the inventory has no passphrase_env yet: the passphrase is only planted in the environment")
	}

	// A node private key whose base64 body holds secret H.
	nodeKey := "-----BEGIN OPENSSH PRIVATE KEY-----\n" +
		base64.StdEncoding.EncodeToString([]byte("openssh-key-v1\x00"+text["H node private key"]+"\x00padding")) +
		"\n-----END OPENSSH PRIVATE KEY-----\n"
	clientKeyData := base64.StdEncoding.EncodeToString([]byte("-----BEGIN EC PRIVATE KEY-----\nMHc" + text["E kubeconfig client-key-data"] + "\n-----END EC PRIVATE KEY-----\n"))
	kubeconfig := `apiVersion: v1
clusters:
- cluster:
    server: https://127.0.0.1:6443
  name: default
contexts:
- context: {cluster: default, user: default}
  name: default
current-context: default
kind: Config
users:
- name: default
  user:
    client-key-data: ` + clientKeyData + `
    token: ` + text["C kubeconfig bearer token"] + `
`
	members := nodesim.Clean(4)
	for i := range members {
		s := &members[i].State
		files := maps.Clone(s.Files)
		cfg := "token: " + text["A rke2 token"] + "\nagent-token: " + text["B rke2 agent-token"] + "\n"
		for _, l := range strings.Split(files["etc/rancher/rke2/config.yaml"], "\n") {
			if l != "" && !strings.HasPrefix(l, "token:") {
				cfg += l + "\n"
			}
		}
		files["etc/rancher/rke2/config.yaml"] = cfg
		if _, ok := files[nodesim.KubeconfigPath]; ok { // the server node-1
			files[nodesim.KubeconfigPath] = kubeconfig
		}
		files["root/.kube/config"] = kubeconfig
		files["etc/ssh/ssh_host_ed25519_key"] = nodeKey
		files["root/.ssh/id_ed25519"] = nodeKey
		s.Files = files
		// A file the os probe does read: what it prints must be redacted.
		switch i {
		case 0:
			s.OSRelease = "PRETTY_NAME=\"Debian 12 token: " + text["F token in a probed file"] + "\"\nID=debian\nVERSION_ID=\"12\"\n"
		case 1:
			s.OSRelease = "PRETTY_NAME=\"Debian 12 Authorization: Bearer " + text["G bearer in a probed file"] + "\"\nID=debian\nVERSION_ID=\"12-" + canary + "\"\n"
		}
	}
	var cfgs []sshfleet.NodeConfig
	for i, m := range members {
		root := filepath.Join(dir, "nodes", m.Name)
		if err := nodesim.Build(root, m.State); err != nil {
			t.Fatal(err)
		}
		c := sshfleet.NodeConfig{Name: m.Name, AuthorizedKeys: []ssh.PublicKey{plainPub, encPub}, Env: nodesim.SessionEnv(root), Dir: root}
		if withPassphrase && m.Name == "node-2" {
			c.AuthorizedKeys = []ssh.PublicKey{encPub}
		}
		if withPassphrase && m.Name == "node-3" {
			c.AuthorizedKeys = []ssh.PublicKey{enc2Pub}
		}
		if i == 3 {
			c.Fault = sshfleet.FaultRejectKey
		}
		cfgs = append(cfgs, c)
	}
	fleet, err := sshfleet.Start(context.Background(), cfgs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := fleet.Close(); err != nil {
			t.Error(err)
		}
	})
	known, sshConfig := filepath.Join(dir, "known_hosts"), filepath.Join(dir, "ssh_config")
	var hosts strings.Builder
	for i, n := range fleet.Nodes() {
		fmt.Fprintf(&hosts, "  %s: {address: %s, port: %d, roles: [%s]%s}\n", n.Config.Name, n.Host, n.Port, members[i].Roles[0], hostPassphrase[n.Config.Name])
	}
	inv := filepath.Join(dir, "inventory.yaml")
	for p, b := range map[string]string{
		known:     string(fleet.KnownHosts()),
		sshConfig: "",
		inv: fmt.Sprintf("name: secrets\ndefaults:\n  identity_files: [%q, %q]\n  known_hosts: [%q]\n  ssh_config: %q\n%shosts:\n%s",
			encKey, plainKey, known, sshConfig, passphraseLine, hosts.String()),
	} {
		if err := os.WriteFile(p, []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	outputs := map[string][]byte{}
	runDir, reportDir := t.TempDir(), t.TempDir()
	results := filepath.Join(runDir, "results.json")
	code, stdout, stderr := cli(append([]string{"run", "-i", inv, "-v", "--connect-timeout", "5s"}, everyReport(runDir)...)...)
	outputs["run stdout"], outputs["run stderr"] = []byte(stdout), []byte(stderr)
	if code != int(exitUnaudited) {
		t.Fatalf("run: exit %d, want %d (node-4 rejects the key)\nstdout:\n%s\nstderr:\n%s", code, exitUnaudited, stdout, stderr)
	}
	// Not vacuous: the nodes were audited, kubectl read the planted
	// kubeconfig, the probed secrets arrived and were redacted, and the
	// auth error path ran.
	r := readResults(t, results)
	byName := map[string]result.Node{}
	for _, n := range r.Nodes {
		byName[n.Name] = n
	}
	if r.Cluster == nil || r.Cluster.Facts["cluster.kubectl"] != "ok" {
		t.Errorf("cluster probe did not use the planted rke2.yaml: %+v", r.Cluster)
	}
	for _, n := range []string{"node-1", "node-2"} {
		if got := byName[n].Facts["os.pretty_name"]; got != result.Redacted {
			t.Errorf("%s os.pretty_name = %q, want %s", n, got, result.Redacted)
		}
	}
	if withPassphrase && byName["node-2"].Status != result.StatusOK {
		t.Errorf("node-2 (encrypted key only) status %s: %s", byName["node-2"].Status, byName["node-2"].Message)
	}
	// The node's own error, after the status's cause, names the variable.
	if withPassphrase && (byName["node-3"].Status != result.StatusAuthFailed || !strings.Contains(byName["node-3"].Error, wrongEnv)) {
		t.Errorf("node-3 (wrong passphrase) status %s: %s: %s", byName["node-3"].Status, byName["node-3"].Message, byName["node-3"].Error)
	}
	if byName["node-4"].Status != result.StatusAuthFailed {
		t.Errorf("node-4 status %s, want %s", byName["node-4"].Status, result.StatusAuthFailed)
	}

	for _, rr := range []struct {
		name string
		args []string
	}{
		{"report -v", append([]string{"report", results, "-v"}, everyReport(reportDir)...)},
		{"report", []string{"report", results}},
		{"report -q", []string{"report", results, "-q"}},
	} {
		code, stdout, stderr := cli(rr.args...)
		if code != int(exitUnaudited) {
			t.Fatalf("%s: exit %d, want %d\nstderr:\n%s", rr.name, code, exitUnaudited, stderr)
		}
		outputs[rr.name+" stdout"], outputs[rr.name+" stderr"] = []byte(stdout), []byte(stderr)
	}
	// Every file format is scanned for leaks. Those that carry no node
	// facts (the summary keeps only drift, the textfile only metrics, the
	// plans only the checks' fixes and the node names) are named here; any
	// other must show the canary fact, so a new format either proves the
	// search reaches it or is added here on purpose.
	noFacts := map[string]bool{"summary.md": true, "fleet-audit.prom": true, "plan.md": true, "plan.yml": true}
	mustShowFacts := []string{"run stdout", "report -v stdout", "report stdout"}
	files := 0
	for _, d := range []string{runDir, reportDir} {
		for p, b := range readTree(t, d) {
			outputs[p] = b
			files++
			if !noFacts[filepath.Base(p)] {
				mustShowFacts = append(mustShowFacts, p)
			}
		}
	}
	if want := 2 * len(report.FileFormats()); files != want {
		t.Errorf("scanned %d report files, want %d (every format, twice)", files, want)
	}
	canaryIn := map[string]bool{}
	for _, l := range findLeaks(outputs, map[string][]string{"canary": {canary}}) {
		canaryIn[l.where] = true
	}
	for _, p := range mustShowFacts {
		if !canaryIn[p] {
			t.Errorf("the canary fact is not in %s: the search would miss a leak there", p)
		}
	}
	for _, l := range findLeaks(outputs, secrets) {
		t.Errorf("secret leaked: %s", l)
	}

	// Negative control: the same search finds a secret written into a copy
	// of a report, raw and inside base64 at each alignment.
	md := outputs[filepath.Join(runDir, "report.md")]
	if len(md) == 0 {
		t.Fatal("no Markdown report to copy")
	}
	tokenA := text["A rke2 token"]
	planted := map[string][]byte{
		"raw":              append(slices.Clone(md), "\ntoken: "+tokenA+"\n"...),
		"base64 aligned":   append(slices.Clone(md), base64.StdEncoding.EncodeToString([]byte(tokenA))...),
		"base64 offset 1":  append(slices.Clone(md), base64.StdEncoding.EncodeToString([]byte("x"+tokenA+"y"))...),
		"base64 offset 2":  append(slices.Clone(md), base64.URLEncoding.EncodeToString([]byte("xy"+tokenA+"z"))...),
		"key seed in hex":  append(slices.Clone(md), hex.EncodeToString(plainPriv.Seed())...),
		"client key block": append(slices.Clone(md), plainPEM...),
	}
	for name, b := range planted {
		ctl := filepath.Join(t.TempDir(), "report.md")
		if err := os.WriteFile(ctl, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if got := findLeaks(readTree(t, filepath.Dir(ctl)), secrets); len(got) == 0 {
			t.Errorf("negative control %q: the planted secret was not found", name)
		}
	}
}

// ---------------------------------------------------------------------------
// Injection: hostile inventory and ssh_config values are rejected or inert.

// recordingNode is an SSH server on loopback that records everything a
// client asks of it (user names, every channel request with its payload,
// and each session's stdin) and runs exec commands faithfully with /bin/sh
// against a simulated node root, so an audit completes. sshfleet does not
// record what it is asked; this does nothing else.
type recordingNode struct {
	port    int
	hostKey ssh.PublicKey
	ln      net.Listener
	wg      sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]bool
	groups map[int]bool
	rec    recorded
}

// recorded is what clients asked of a recordingNode.
type recorded struct {
	Users []string
	// Requests are "type payload" per channel or global request; an exec
	// request's payload is its command.
	Requests []string
	Execs    []string
	Stdin    [][]byte
}

func startRecordingNode(t *testing.T, root string, authorized ssh.PublicKey) *recordingNode {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	n := &recordingNode{hostKey: signer.PublicKey(), conns: map[net.Conn]bool{}, groups: map[int]bool{}}
	cfg := &ssh.ServerConfig{PublicKeyCallback: func(meta ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
		n.mu.Lock()
		n.rec.Users = append(n.rec.Users, meta.User())
		n.mu.Unlock()
		if bytes.Equal(key.Marshal(), authorized.Marshal()) {
			return &ssh.Permissions{}, nil
		}
		return nil, errors.New("recording node: key not authorized")
	}}
	cfg.AddHostKey(signer)
	if n.ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	n.port = n.ln.Addr().(*net.TCPAddr).Port
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		for {
			c, err := n.ln.Accept()
			if err != nil {
				return
			}
			n.mu.Lock()
			n.conns[c] = true
			n.mu.Unlock()
			n.wg.Add(1)
			go func() {
				defer n.wg.Done()
				n.serve(c, cfg, root)
			}()
		}
	}()
	t.Cleanup(func() {
		_ = n.ln.Close()
		n.mu.Lock()
		for c := range n.conns {
			_ = c.Close()
		}
		for g := range n.groups {
			_ = syscall.Kill(-g, syscall.SIGKILL)
		}
		n.mu.Unlock()
		done := make(chan struct{})
		go func() { n.wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("recording node: goroutines still running 10s after close")
		}
	})
	return n
}

func (n *recordingNode) record(f func(r *recorded)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	f(&n.rec)
}

// take returns what was recorded since the last take and starts afresh.
func (n *recordingNode) take() recorded {
	n.mu.Lock()
	defer n.mu.Unlock()
	r := n.rec
	n.rec = recorded{}
	return r
}

func (n *recordingNode) knownHostsLine() string {
	return knownhosts.Line([]string{fmt.Sprintf("127.0.0.1:%d", n.port)}, n.hostKey)
}

func (n *recordingNode) serve(c net.Conn, cfg *ssh.ServerConfig, root string) {
	defer func() {
		_ = c.Close()
		n.mu.Lock()
		delete(n.conns, c)
		n.mu.Unlock()
	}()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	_, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	_ = c.SetDeadline(time.Time{})
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		for r := range reqs {
			n.record(func(rec *recorded) { rec.Requests = append(rec.Requests, "global "+r.Type+" "+string(r.Payload)) })
			if r.WantReply {
				_ = r.Reply(r.Type == "keepalive@openssh.com", nil)
			}
		}
	}()
	for nc := range chans {
		n.record(func(rec *recorded) {
			rec.Requests = append(rec.Requests, "channel "+nc.ChannelType()+" "+string(nc.ExtraData()))
		})
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "sessions only")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			continue
		}
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			n.session(ch, creqs, root)
		}()
	}
}

func (n *recordingNode) session(ch ssh.Channel, reqs <-chan *ssh.Request, root string) {
	started := false
	for r := range reqs {
		if r.Type != "exec" || started {
			n.record(func(rec *recorded) { rec.Requests = append(rec.Requests, r.Type+" "+string(r.Payload)) })
			if r.WantReply {
				_ = r.Reply(false, nil)
			}
			continue
		}
		var p struct{ Command string }
		if err := ssh.Unmarshal(r.Payload, &p); err != nil {
			_ = r.Reply(false, nil)
			continue
		}
		started = true
		n.record(func(rec *recorded) {
			rec.Requests = append(rec.Requests, "exec "+p.Command)
			rec.Execs = append(rec.Execs, p.Command)
		})
		_ = r.Reply(true, nil)
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			n.exec(ch, p.Command, root)
		}()
	}
}

func (n *recordingNode) exec(ch ssh.Channel, command, root string) {
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Env = append(nodesim.SessionEnv(root), "PATH=/usr/local/bin:/usr/bin:/bin")
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = ch, ch.Stderr()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	status := uint32(127)
	if err == nil {
		pgid := cmd.Process.Pid
		n.record(func(*recorded) { n.groups[pgid] = true })
		var script bytes.Buffer
		copied := make(chan struct{})
		go func() {
			defer close(copied)
			_, _ = io.Copy(stdin, io.TeeReader(ch, &script))
			_ = stdin.Close()
		}()
		_ = cmd.Wait()
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		n.record(func(*recorded) { delete(n.groups, pgid) })
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Exited() {
			status = uint32(ws.ExitStatus())
		}
		_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{status}))
		_ = ch.Close()
		<-copied
		n.record(func(rec *recorded) { rec.Stdin = append(rec.Stdin, script.Bytes()) })
		return
	}
	_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{status}))
	_ = ch.Close()
}

// inertProblems says how a run that was allowed to go ahead was not inert:
// a command other than `/bin/sh -s`, a hostile value in any request or in
// the script, or the marker file made.
func inertProblems(rec recorded, payload, marker string) []string {
	var out []string
	for _, c := range rec.Execs {
		if c != "/bin/sh -s" {
			out = append(out, fmt.Sprintf("exec request %q, want only %q", c, "/bin/sh -s"))
		}
	}
	for _, r := range rec.Requests {
		if strings.HasPrefix(r, "env ") || strings.HasPrefix(r, "shell ") || strings.HasPrefix(r, "subsystem ") {
			out = append(out, fmt.Sprintf("unexpected request %q", r))
		}
		if strings.Contains(r, payload) || strings.Contains(r, marker) {
			out = append(out, fmt.Sprintf("request %q carries the hostile value", r))
		}
	}
	for _, u := range rec.Users {
		if strings.Contains(u, payload) {
			out = append(out, fmt.Sprintf("logged in as the hostile value %q", u))
		}
	}
	for _, s := range rec.Stdin {
		if bytes.Contains(s, []byte(payload)) || bytes.Contains(s, []byte(marker)) {
			out = append(out, "the script sent on stdin contains the hostile value")
		}
	}
	if _, err := os.Lstat(marker); err == nil {
		out = append(out, "the marker file "+marker+" was created: a value was run as a command")
	}
	return out
}

// rejectionProblems says how a rejection fell short: not exit 2, no
// file:line, or a control character from the value echoed raw into the
// message, where a newline forges a line of output of its own and an escape
// sequence rewrites the user's terminal.
func rejectionProblems(code int, stderr, file string, line int, payload string) []string {
	var out []string
	if code != int(exitUsage) {
		out = append(out, fmt.Sprintf("exit %d, want %d", code, exitUsage))
	}
	if want := fmt.Sprintf("%s:%d:", file, line); !strings.Contains(stderr, want) {
		out = append(out, fmt.Sprintf("error does not name %q", want))
	}
	if _, rest, ok := strings.Cut(payload, "\n"); ok {
		for _, l := range strings.Split(stderr, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), rest) {
				out = append(out, fmt.Sprintf("the value's raw newline starts a line of output of its own: %q", l))
				break
			}
		}
	}
	for _, c := range stderr {
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			out = append(out, fmt.Sprintf("error echoes the control character %U raw", c))
			break
		}
	}
	return out
}

type kv struct{ k, v string }

// writeInjectionInventory writes an inventory of one host, in group when
// that is not "", whose settings are fields, in order and one per line, and
// returns its path and the line of each field ("host" and "group" are the
// lines of their keys).
func writeInjectionInventory(t *testing.T, dir, group, host string, fields []kv) (string, map[string]int) {
	t.Helper()
	q := func(s string) string {
		b, err := json.Marshal(s) // a JSON string is a YAML double-quoted scalar
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	lines := map[string]int{}
	doc := []string{"name: injection"}
	indent := "  "
	if group != "" {
		doc = append(doc, "groups:", "  "+q(group)+":")
		lines["group"] = len(doc)
		doc = append(doc, "    hosts:")
		indent = "      "
	} else {
		doc = append(doc, "hosts:")
	}
	doc = append(doc, indent+q(host)+":")
	lines["host"] = len(doc)
	for _, f := range fields {
		if strings.HasPrefix(f.v, "[") || strings.Trim(f.v, "0123456789") == "" {
			doc = append(doc, indent+"  "+f.k+": "+f.v) // a list or a number, already YAML
		} else {
			doc = append(doc, indent+"  "+f.k+": "+q(f.v))
		}
		lines[f.k] = len(doc)
	}
	p := filepath.Join(dir, "inventory.yaml")
	if err := os.WriteFile(p, []byte(strings.Join(doc, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p, lines
}

// TestInjectionRejectedOrInert feeds hostile host names, addresses and users
// (and proxy_jump and become_user once the inventory has them), through the
// inventory and through ssh_config, to `inventory` and `run`. Each must be
// rejected with exit 2 and the inventory's file:line, or reach the node as
// nothing but `/bin/sh -s` with the value nowhere in what was sent; and no
// marker file may appear. ssh_config directives that run commands
// (LocalCommand, KnownHostsCommand, Match exec) must be ignored while the
// audit still reaches the node. ProxyCommand is the exception: ssh runs it
// to reach the node and so does fleet-audit (a command the user wrote in
// their own ssh_config, as in ssh); what must never happen is a value from
// the inventory spliced into it, which inventory's expandProxyCommand
// refuses (TestExpandProxyCommandRefusesShellText).
func TestInjectionRejectedOrInert(t *testing.T) {
	testtools.SkipShort(t, "audits fleets end to end")
	t.Parallel()
	home := t.TempDir()
	cli := func(t *testing.T, args ...string) (int, string, string) {
		t.Helper()
		return runProcess(context.Background(), t, home, nil, args...)
	}
	dir := t.TempDir()
	marker := filepath.Join(t.TempDir(), "PWNED")
	touch := "touch " + marker

	_, clientPub, clientPEM := newEd25519(t, "")
	key := filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(key, clientPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "node")
	if err := nodesim.Build(root, nodesim.Clean(1)[0].State); err != nil {
		t.Fatal(err)
	}
	node := startRecordingNode(t, root, clientPub)
	known := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(known, []byte(node.knownHostsLine()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(node.port)

	// Each payload starts with a loopback address, so that a value cut
	// short at its first metacharacter could only ever dial this machine.
	payloads := map[string]string{
		"semicolon":     "127.0.0.1;" + touch,
		"substitution":  "$(" + touch + ")",
		"backticks":     "`" + touch + "`",
		"single quotes": "127.0.0.1'; " + touch + "; '",
		"double quotes": "127.0.0.1\"; " + touch + "; \"",
		"newline":       "127.0.0.1\n" + touch,
		"leading dash":  "-oProxyCommand=" + touch,
		"percent":       "%h%C%d%u;" + touch,
		"escape":        "127.0.0.1\x1b]0;" + touch + "\x07\x1b[2J",
		"carriage ret":  "127.0.0.1\r" + touch,
	}
	fields := []string{"host", "group", "address", "user", "roles"}
	if inventoryKnows(t, "hosts:\n  h: {address: 127.0.0.1, proxy_jump: bastion}\n") {
		fields = append(fields, "proxy_jump")
	} else {
		t.Log("the inventory has no proxy_jump yet: not tested")
	}
	if inventoryKnows(t, "hosts:\n  h: {address: 127.0.0.1, become: sudo, become_user: root}\n") {
		fields = append(fields, "become_user")
	} else {
		t.Log("the inventory has no become_user yet: not tested")
	}

	type tc struct {
		name    string
		group   string
		host    string
		fields  []kv
		config  string // ssh_config text; the inventory names it when set
		payload string
		// lines are the fields whose line a rejection may name: the
		// hostile one, or for ssh_config values the host (or the
		// ssh_config key, when the file as a whole is unusable).
		lines []string
		reach bool // the audit must reach the node
	}
	idFiles, knownHosts := kv{"identity_files", fmt.Sprintf("[%q]", key)}, kv{"known_hosts", fmt.Sprintf("[%q]", known)}
	direct := func() []kv {
		return []kv{{"address", "127.0.0.1"}, {"port", port}, {"user", me.Username}, idFiles, knownHosts}
	}
	hostBlock := "Host h1\n  HostName 127.0.0.1\n  Port " + port + "\n  User " + me.Username + "\n"
	var cases []tc
	for _, pn := range slices.Sorted(maps.Keys(payloads)) {
		p := payloads[pn]
		for _, f := range fields {
			c := tc{name: f + "/" + pn, host: "h1", fields: direct(), payload: p, lines: []string{f}}
			switch f {
			case "host":
				c.host = p
			case "group":
				c.group = p
			case "roles":
				list, err := json.Marshal([]string{p})
				if err != nil {
					t.Fatal(err)
				}
				c.fields = append(c.fields, kv{f, string(list)})
			case "address", "user":
				for i := range c.fields {
					if c.fields[i].k == f {
						c.fields[i].v = p
					}
				}
			case "become_user":
				c.fields = append(c.fields, kv{"become", "sudo"}, kv{f, p})
			default:
				c.fields = append(c.fields, kv{f, p})
			}
			cases = append(cases, c)
		}
		// The same values from ssh_config, for a bare host name.
		for kw, good := range map[string]string{"HostName": "127.0.0.1", "User": me.Username} {
			cases = append(cases, tc{name: "ssh_config " + kw + "/" + pn, host: "h1", payload: p, lines: []string{"host", "ssh_config"},
				config: strings.Replace(hostBlock, "  "+kw+" "+good+"\n", "  "+kw+" "+p+"\n", 1), fields: []kv{idFiles, knownHosts}})
		}
	}
	// Values that only name local files are accepted, and stay local.
	sub := "$(" + touch + ")"
	cases = append(cases,
		tc{name: "identity file path", host: "h1", payload: sub, reach: true, lines: []string{"identity_files"},
			fields: append(direct()[:3], kv{"identity_files", fmt.Sprintf("[%q, %q]", filepath.Join(dir, sub), key)}, knownHosts)},
		tc{name: "known_hosts path", host: "h1", payload: sub, lines: []string{"known_hosts"},
			fields: append(direct()[:4], kv{"known_hosts", fmt.Sprintf("[%q, %q]", filepath.Join(dir, sub), known)})},
		tc{name: "ssh_config IdentityFile", host: "h1", payload: sub, reach: true, lines: []string{"host", "ssh_config"}, fields: []kv{knownHosts},
			config: hostBlock + "  IdentityFile " + filepath.Join(dir, sub) + "\n  IdentityFile " + key + "\n"},
	)
	// ssh_config directives that make OpenSSH run a command or send more
	// than the command: all must be ignored, and the audit still done.
	directives := map[string]string{
		"ProxyJump":         "  ProxyJump " + sub,
		"LocalCommand":      "  PermitLocalCommand yes\n  LocalCommand " + touch,
		"KnownHostsCommand": "  KnownHostsCommand /bin/sh -c '" + touch + "'",
		"RemoteCommand":     "  RemoteCommand " + touch,
		"SetEnv":            "  SetEnv FA_INJECT=" + sub + "\n  SendEnv FA_INJECT",
		"Match exec":        "Match exec \"" + touch + "\"\n  HostName 127.0.0.2",
	}
	for _, name := range slices.Sorted(maps.Keys(directives)) {
		c := tc{name: "ssh_config " + name, host: "h1", payload: touch, reach: true, lines: []string{"host", "ssh_config"}, fields: []kv{knownHosts},
			config: hostBlock + "  IdentityFile " + key + "\n" + directives[name] + "\n"}
		if name == "ProxyJump" {
			// Honouring ProxyJump is allowed; running it as a command is not.
			c.payload, c.reach = sub, false
		}
		cases = append(cases, c)
	}

	rejected, inert := 0, 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if len(c.lines) == 0 {
				t.Fatal("the case names no field a rejection may point at")
			}
			cdir := t.TempDir()
			fields := c.fields
			if c.config != "" {
				cfgPath := filepath.Join(cdir, "ssh_config")
				if err := os.WriteFile(cfgPath, []byte(c.config), 0o600); err != nil {
					t.Fatal(err)
				}
				fields = append(slices.Clone(fields), kv{"ssh_config", cfgPath})
			}
			inv, lines := writeInjectionInventory(t, cdir, c.group, c.host, fields)
			node.take()
			icode, istdout, istderr := cli(t, "inventory", "-i", inv)
			results := filepath.Join(cdir, "results.json")
			code, stdout, stderr := cli(t, "run", "-i", inv, "--connect-timeout", "5s", "--node-timeout", "60s", "--json", results)
			rec := node.take()
			defer os.Remove(marker) // so one failure does not fail every later case
			if icode == int(exitUsage) {
				rejected++
				t.Logf("rejected: %s", strings.TrimSpace(istderr))
				var problems []string
				for _, r := range []struct {
					cmd    string
					code   int
					stderr string
				}{{"inventory", icode, istderr}, {"run", code, stderr}} {
					var best []string
					for i, f := range c.lines {
						ps := rejectionProblems(r.code, r.stderr, inv, lines[f], c.payload)
						if i == 0 || len(ps) < len(best) {
							best = ps
						}
					}
					for _, p := range best {
						problems = append(problems, r.cmd+": "+p)
					}
				}
				if len(rec.Users)+len(rec.Requests) > 0 {
					problems = append(problems, fmt.Sprintf("a rejected inventory contacted the node: %+v", rec))
				}
				if _, err := os.Lstat(marker); err == nil {
					problems = append(problems, "the marker file was created")
				}
				if len(problems) > 0 {
					t.Errorf("rejected, but:\n  %s\ninventory stderr:\n%s\nrun stderr:\n%s", strings.Join(problems, "\n  "), istderr, stderr)
				}
				return
			}
			if icode != 0 {
				t.Fatalf("inventory: exit %d, want 0 or %d\nstderr:\n%s", icode, exitUsage, istderr)
			}
			inert++
			t.Logf("accepted by the inventory, run exit %d", code)
			if problems := inertProblems(rec, c.payload, marker); len(problems) > 0 {
				t.Errorf("accepted, but not inert:\n  %s\ninventory:\n%s\nrun stdout:\n%s\nrun stderr:\n%s", strings.Join(problems, "\n  "), istdout, stdout, stderr)
			}
			if !c.reach {
				return
			}
			if len(rec.Execs) == 0 {
				t.Fatalf("the audit never reached the node (exit %d)\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			r := readResults(t, results)
			if len(r.Nodes) != 1 || r.Nodes[0].Status != result.StatusOK || r.Nodes[0].Address != "127.0.0.1" {
				t.Errorf("node not audited at 127.0.0.1: %+v", r.Nodes)
			}
		})
	}
	t.Logf("%d cases rejected, %d accepted and inert", rejected, inert)
	if rejected == 0 || inert == 0 {
		t.Errorf("want both rejected and accepted cases, got %d and %d", rejected, inert)
	}

	// Negative controls: each check fails on what it exists to catch.
	t.Run("negative controls", func(t *testing.T) {
		if err := exec.Command("/bin/sh", "-c", "echo "+payloads["substitution"]).Run(); err != nil {
			t.Fatal(err)
		}
		if got := inertProblems(recorded{}, payloads["substitution"], marker); len(got) == 0 {
			t.Error("a value spliced into shell text made the marker, and inertProblems did not notice")
		}
		if err := os.Remove(marker); err != nil {
			t.Errorf("the spliced value did not create the marker: %v", err)
		}
		sess := dialRecording(t, node, clientPEM)
		_ = sess.Setenv("FA_INJECT", payloads["semicolon"]) // refused, and recorded
		_ = sess.Run("printf %s '" + payloads["semicolon"] + "' >/dev/null")
		rec := node.take()
		if len(rec.Execs) != 1 || len(inertProblems(rec, payloads["semicolon"], marker)) < 3 {
			t.Errorf("a foreign command, an env request and the value in them should all be flagged: %v → %v", rec, inertProblems(rec, payloads["semicolon"], marker))
		}
		if got := rejectionProblems(int(exitUsage), "fleet-audit: error: host name is bad", "inv.yaml", 3, "a\nb"); len(got) != 1 {
			t.Errorf("a rejection without file:line should be flagged once: %v", got)
		}
		if got := rejectionProblems(1, "inv.yaml:3: hosts.a\n  b: bad", "inv.yaml", 3, "a\nb"); len(got) != 2 {
			t.Errorf("a wrong exit and a raw newline should be flagged: %v", got)
		}
		if got := rejectionProblems(int(exitUsage), "inv.yaml:3: hosts.a\x1b[2J: bad", "inv.yaml", 3, "a\x1b[2J"); len(got) != 1 {
			t.Errorf("a raw escape should be flagged: %v", got)
		}
	})
}

// dialRecording opens a plain session on the recording node, for the
// negative controls.
func dialRecording(t *testing.T, n *recordingNode, keyPEM []byte) *ssh.Session {
	t.Helper()
	signer, err := ssh.ParsePrivateKey(keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ssh.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", n.port), &ssh.ClientConfig{
		User: "control", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(n.hostKey), Timeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
