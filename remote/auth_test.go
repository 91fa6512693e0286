package remote_test

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	//lint:ignore SA1019 OpenSSH's bcrypt_pbkdf key format is built on blowfish; the test writes keys in that format
	"golang.org/x/crypto/blowfish"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fleet-audit/fleet-audit/internal/sshdtest"
	"github.com/fleet-audit/fleet-audit/remote"
)

// authServer is an SSH server that only authenticates: it records every
// public key a client offers and accepts those accept allows. Dial needs no
// more, and the record shows what was offered, not just what worked.
type authServer struct {
	Host       string
	Port       int
	knownHosts string

	mu      sync.Mutex
	offered []ssh.PublicKey
}

func startAuthServer(t *testing.T, accept func(meta ssh.ConnMetadata, key ssh.PublicKey) error) *authServer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	hostKey, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tcp := ln.Addr().(*net.TCPAddr)
	s := &authServer{Host: tcp.IP.String(), Port: tcp.Port}
	s.knownHosts = writeFile(t, t.TempDir(), "known_hosts", []byte(knownhosts.Line([]string{tcp.String()}, hostKey.PublicKey())+"\n"))
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(meta ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			s.mu.Lock()
			s.offered = append(s.offered, key)
			s.mu.Unlock()
			if err := accept(meta, key); err != nil {
				return nil, err
			}
			return &ssh.Permissions{}, nil
		},
	}
	cfg.AddHostKey(hostKey)

	var (
		wg    sync.WaitGroup
		cmu   sync.Mutex
		conns []net.Conn
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			cmu.Lock()
			conns = append(conns, c)
			cmu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				_, chans, reqs, err := ssh.NewServerConn(c, cfg)
				if err != nil {
					return
				}
				_ = c.SetDeadline(time.Time{})
				go ssh.DiscardRequests(reqs)
				for nc := range chans {
					_ = nc.Reject(ssh.Prohibited, "authentication only")
				}
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		cmu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		cmu.Unlock()
		wg.Wait()
	})
	return s
}

// wasOffered reports whether k, or a certificate over it, was offered.
func (s *authServer) wasOffered(k ssh.PublicKey) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.offered {
		if bytes.Equal(o.Marshal(), k.Marshal()) {
			return true
		}
		if c, ok := o.(*ssh.Certificate); ok && bytes.Equal(c.Key.Marshal(), k.Marshal()) {
			return true
		}
	}
	return false
}

func (s *authServer) target(files ...string) remote.Target {
	return remote.Target{Address: s.Host, Port: s.Port, User: "tester", IdentityFiles: files, KnownHostsFiles: []string{s.knownHosts}}
}

func acceptKeys(keys ...ssh.PublicKey) func(ssh.ConnMetadata, ssh.PublicKey) error {
	return func(_ ssh.ConnMetadata, key ssh.PublicKey) error {
		for _, k := range keys {
			if bytes.Equal(k.Marshal(), key.Marshal()) {
				return nil
			}
		}
		return errors.New("key not authorized")
	}
}

// testKey is a fresh ed25519 key with its private half at hand, so tests
// can check no error ever shows it.
type testKey struct {
	priv   ed25519.PrivateKey
	signer ssh.Signer
	pub    ssh.PublicKey
}

func newTestKey(t *testing.T) testKey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return testKey{priv: priv, signer: s, pub: s.PublicKey()}
}

// write stores the key in dir as an OpenSSH private key file, encrypted
// with one bcrypt round when passphrase is not empty, and returns its path.
func (k testKey) write(t *testing.T, dir, name, passphrase string) string {
	t.Helper()
	block, err := ssh.MarshalPrivateKey(k.priv, "test")
	if err != nil {
		t.Fatal(err)
	}
	if passphrase != "" {
		block = lightlyEncrypted(t, block, passphrase)
	}
	return writeFile(t, dir, name, pem.EncodeToMemory(block))
}

// writeAsSSHKeygen stores the key encrypted as ssh-keygen does, with 16
// bcrypt rounds: a quarter second to decrypt, seconds under the race
// detector, which is why the other tests use write.
func (k testKey) writeAsSSHKeygen(t *testing.T, dir, name, passphrase string) string {
	t.Helper()
	block, err := ssh.MarshalPrivateKeyWithPassphrase(k.priv, "test", []byte(passphrase))
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, dir, name, pem.EncodeToMemory(block))
}

// lightlyEncrypted re-encrypts an unencrypted OpenSSH ed25519 key as
// ssh-keygen -a 1 would: the real format, aes256-ctr under bcrypt_pbkdf,
// with the cheapest KDF cost.
func lightlyEncrypted(t *testing.T, block *pem.Block, passphrase string) *pem.Block {
	t.Helper()
	const magic = "openssh-key-v1\x00"
	var w struct {
		CipherName, KdfName, KdfOpts string
		NumKeys                      uint32
		PubKey, PrivKeyBlock         []byte
		Rest                         []byte `ssh:"rest"`
	}
	if err := ssh.Unmarshal(block.Bytes[len(magic):], &w); err != nil {
		t.Fatal(err)
	}
	var pk struct {
		Check1, Check2 uint32
		Keytype        string
		Pub, Priv      []byte
		Comment        string
		Pad            []byte `ssh:"rest"`
	}
	if err := ssh.Unmarshal(w.PrivKeyBlock, &pk); err != nil {
		t.Fatal(err)
	}
	pk.Pad = nil
	plain := ssh.Marshal(pk)
	for i := 0; len(plain)%aes.BlockSize != 0; i++ {
		plain = append(plain, byte(i+1))
	}
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		t.Fatal(err)
	}
	k := bcryptPBKDF([]byte(passphrase), salt, 1, 32+aes.BlockSize)
	c, err := aes.NewCipher(k[:32])
	if err != nil {
		t.Fatal(err)
	}
	cipher.NewCTR(c, k[32:]).XORKeyStream(plain, plain)
	w.CipherName, w.KdfName, w.PrivKeyBlock = "aes256-ctr", "bcrypt", plain
	w.KdfOpts = string(ssh.Marshal(struct {
		Salt   []byte
		Rounds uint32
	}{salt, 1}))
	return &pem.Block{Type: block.Type, Bytes: append([]byte(magic), ssh.Marshal(w)...)}
}

// bcryptPBKDF is OpenBSD's bcrypt_pbkdf, which x/crypto keeps internal.
func bcryptPBKDF(password, salt []byte, rounds, keyLen int) []byte {
	const blockSize = 32
	numBlocks := (keyLen + blockSize - 1) / blockSize
	key := make([]byte, numBlocks*blockSize)
	shapass := sha512.Sum512(password)
	tmp := make([]byte, blockSize)
	for block := 1; block <= numBlocks; block++ {
		h := sha512.New()
		h.Write(salt)
		h.Write([]byte{byte(block >> 24), byte(block >> 16), byte(block >> 8), byte(block)})
		bcryptHash(tmp, shapass[:], h.Sum(nil))
		out := bytes.Clone(tmp)
		for i := 2; i <= rounds; i++ {
			shasalt := sha512.Sum512(tmp)
			bcryptHash(tmp, shapass[:], shasalt[:])
			for j := range out {
				out[j] ^= tmp[j]
			}
		}
		for i, v := range out {
			key[i*numBlocks+(block-1)] = v
		}
	}
	return key[:keyLen]
}

func bcryptHash(out, shapass, shasalt []byte) {
	c, err := blowfish.NewSaltedCipher(shapass, shasalt)
	if err != nil {
		panic(err)
	}
	for range 64 {
		blowfish.ExpandKey(shasalt, c)
		blowfish.ExpandKey(shapass, c)
	}
	copy(out, "OxychromaticBlowfishSwatDynamite")
	for i := 0; i < 32; i += 8 {
		for range 64 {
			c.Encrypt(out[i:i+8], out[i:i+8])
		}
	}
	for i := 0; i < 32; i += 4 {
		out[i+3], out[i+2], out[i+1], out[i] = out[i], out[i+1], out[i+2], out[i+3]
	}
}

func userCert(t *testing.T, key ssh.PublicKey, ca ssh.Signer, principal string) *ssh.Certificate {
	t.Helper()
	c := &ssh.Certificate{
		Key: key, CertType: ssh.UserCert, KeyId: "tester@ci",
		ValidPrincipals: []string{principal}, ValidBefore: ssh.CertTimeInfinity,
	}
	if err := c.SignCert(rand.Reader, ca); err != nil {
		t.Fatal(err)
	}
	return c
}

// kdfTimeout bounds dials that decrypt a key: OpenSSH's bcrypt KDF takes
// a quarter second, and seconds under the race detector on a busy machine.
const kdfTimeout = 2 * time.Minute

// envName returns a variable name no other test uses.
func envName(t *testing.T) string {
	return "FA_TEST_PASSPHRASE_" + strings.ToUpper(hex.EncodeToString([]byte(t.Name()))[:16]) + fmt.Sprint(time.Now().UnixNano())
}

func TestEncryptedKeys(t *testing.T) {
	key := newTestKey(t)
	srv := startAuthServer(t, acceptKeys(key.pub))
	const pass = "correct horse"
	tests := []struct {
		name      string
		env       string // value of the passphrase variable; "" leaves it unset
		noEnvName bool
		sshKeygen bool   // 16 bcrypt rounds, as ssh-keygen writes
		ask       string // what ask answers; "" means no ask
		wantErr   error
		wantInMsg []string
		wantAsked bool
	}{
		{name: "passphrase from the environment", env: pass},
		{name: "ssh-keygen's format", env: pass, sshKeygen: true},
		{name: "environment wins over asking", env: pass, ask: "wrong"},
		{name: "asked", noEnvName: true, ask: pass, wantAsked: true},
		{name: "asked, variable unset", ask: pass, wantAsked: true},
		{name: "wrong passphrase from the environment", env: "wrong", wantErr: remote.ErrAuthFailed,
			wantInMsg: []string{"wrong passphrase from $", "key skipped"}},
		{name: "wrong passphrase asked", ask: "wrong", wantAsked: true, wantErr: remote.ErrAuthFailed,
			wantInMsg: []string{"wrong passphrase as entered"}},
		{name: "no passphrase source", noEnvName: true, wantErr: remote.ErrAuthFailed,
			wantInMsg: []string{"passphrase-protected", "set passphrase_env", "ssh-add "}},
		{name: "variable empty", wantErr: remote.ErrAuthFailed, wantInMsg: []string{"is empty", "ssh-agent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Each case has its own copy of the key: decrypted keys are
			// kept per file for the process.
			file := key.write(t, t.TempDir(), "id_ed25519", pass)
			if tt.sshKeygen {
				file = key.writeAsSSHKeygen(t, t.TempDir(), "id_ed25519", pass)
			}
			tgt := srv.target(file)
			if !tt.noEnvName {
				tgt.PassphraseEnv = envName(t)
				if tt.env != "" {
					t.Setenv(tgt.PassphraseEnv, tt.env)
				}
			}
			var asked atomic.Int32
			var opts remote.SSHOptions
			if tt.ask != "" {
				opts.Passphrase = func(string) ([]byte, error) {
					asked.Add(1)
					return []byte(tt.ask), nil
				}
			}
			opts.ConnectTimeout = kdfTimeout
			c, err := testDialer(opts).Dial(t.Context(), tgt)
			if got := asked.Load() > 0; got != tt.wantAsked {
				t.Errorf("asked %d times, want asked %v", asked.Load(), tt.wantAsked)
			}
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("dial: %v", err)
				}
				_ = c.Close()
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("dial = %v, want %v", err, tt.wantErr)
			}
			t.Logf("dial error: %v", err)
			for _, s := range tt.wantInMsg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

// TestPassphraseAskedOnce dials from ten dialers at once with one
// encrypted key: the passphrase is asked once and the key kept for the
// process, and a wrong answer is not asked for again either.
func TestPassphraseAskedOnce(t *testing.T) {
	t.Parallel()
	key := newTestKey(t)
	srv := startAuthServer(t, acceptKeys(key.pub))
	for _, answer := range []string{"right", "wrong"} {
		t.Run(answer, func(t *testing.T) {
			t.Parallel()
			file := key.write(t, t.TempDir(), "id", "right")
			var asked atomic.Int32
			ask := func(string) ([]byte, error) {
				asked.Add(1)
				return []byte(answer), nil
			}
			var wg sync.WaitGroup
			errs := make([]error, 10)
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// A dialer each: a dialer may remember answers
					// itself, and the process must not depend on it.
					c, err := testDialer(remote.SSHOptions{Passphrase: ask, ConnectTimeout: kdfTimeout}).Dial(t.Context(), srv.target(file))
					if err == nil {
						_ = c.Close()
					}
					errs[i] = err
				}()
			}
			wg.Wait()
			if n := asked.Load(); n != 1 {
				t.Errorf("asked %d times, want once", n)
			}
			for _, err := range errs {
				if answer == "right" && err != nil {
					t.Errorf("dial: %v", err)
				}
				if answer == "wrong" && (!errors.Is(err, remote.ErrAuthFailed) || !strings.Contains(err.Error(), "wrong passphrase")) {
					t.Errorf("dial = %v, want an auth failure naming the wrong passphrase", err)
				}
			}
		})
	}
}

// TestUserCertificate authenticates to a server that trusts only a user
// CA, with the certificate next to the identity file as OpenSSH names it.
func TestUserCertificate(t *testing.T) {
	t.Parallel()
	ca := newTestKey(t)
	checker := &ssh.CertChecker{IsUserAuthority: func(auth ssh.PublicKey) bool { return bytes.Equal(auth.Marshal(), ca.pub.Marshal()) }}
	srv := startAuthServer(t, func(meta ssh.ConnMetadata, key ssh.PublicKey) error {
		_, err := checker.Authenticate(meta, key)
		return err
	})
	tests := []struct {
		name      string
		certFor   string // principal; "" writes no certificate
		otherKey  bool   // certificate over another key
		encrypted bool   // key file encrypted, the key in the agent
		wantErr   error
	}{
		{name: "certificate", certFor: "tester"},
		{name: "certificate with the key in the agent", certFor: "tester", encrypted: true},
		{name: "no certificate", wantErr: remote.ErrAuthFailed},
		{name: "certificate for another user", certFor: "root", wantErr: remote.ErrAuthFailed},
		{name: "certificate over another key", certFor: "tester", otherKey: true, wantErr: remote.ErrAuthFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			key := newTestKey(t)
			dir := t.TempDir()
			pass := ""
			if tt.encrypted {
				pass = "unknown to the dialer"
			}
			file := key.write(t, dir, "id_ed25519", pass)
			if tt.certFor != "" {
				certified := key.pub
				if tt.otherKey {
					certified = newTestKey(t).pub
				}
				writeFile(t, dir, "id_ed25519-cert.pub", ssh.MarshalAuthorizedKey(userCert(t, certified, ca.signer, tt.certFor)))
			}
			var opts remote.SSHOptions
			if tt.encrypted {
				keyring := agent.NewKeyring()
				if err := keyring.Add(agent.AddedKey{PrivateKey: key.priv}); err != nil {
					t.Fatal(err)
				}
				opts.AgentSocket = serveAgent(t, keyring)
			}
			tgt := srv.target(file)
			tgt.IdentitiesOnly = true
			c, err := testDialer(opts).Dial(t.Context(), tgt)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("dial: %v", err)
				}
				_ = c.Close()
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("dial = %v, want %v", err, tt.wantErr)
			}
			t.Logf("dial error: %v", err)
		})
	}
}

// TestIdentitiesOnly serves an agent holding an authorized key and a
// stranger: with IdentitiesOnly the agent offers only what matches an
// identity file.
func TestIdentitiesOnly(t *testing.T) {
	t.Parallel()
	authorized, stranger, fileKey := newTestKey(t), newTestKey(t), newTestKey(t)
	srv := startAuthServer(t, acceptKeys(authorized.pub))
	keyring := agent.NewKeyring()
	for _, k := range []testKey{stranger, authorized} {
		if err := keyring.Add(agent.AddedKey{PrivateKey: k.priv}); err != nil {
			t.Fatal(err)
		}
	}
	sock := serveAgent(t, keyring)
	tests := []struct {
		name           string
		identitiesOnly bool
		files          func(t *testing.T, dir string) []string
		wantErr        error
		wantInMsg      []string
		offered        []ssh.PublicKey
		notOffered     []ssh.PublicKey
	}{
		{
			name: "without IdentitiesOnly every agent key goes", identitiesOnly: false,
			files:   func(t *testing.T, dir string) []string { return []string{fileKey.write(t, dir, "id", "")} },
			offered: []ssh.PublicKey{authorized.pub},
		},
		{
			name: "another identity hides the agent's keys", identitiesOnly: true,
			files:   func(t *testing.T, dir string) []string { return []string{fileKey.write(t, dir, "id", "")} },
			wantErr: remote.ErrAuthFailed, wantInMsg: []string{"IdentitiesOnly: 2 ssh-agent key(s)"},
			offered: []ssh.PublicKey{fileKey.pub}, notOffered: []ssh.PublicKey{authorized.pub, stranger.pub},
		},
		{
			name: "the identity's key from the agent", identitiesOnly: true,
			files:   func(t *testing.T, dir string) []string { return []string{authorized.write(t, dir, "id", "")} },
			offered: []ssh.PublicKey{authorized.pub}, notOffered: []ssh.PublicKey{stranger.pub},
		},
		{
			name: "encrypted identity, no passphrase: its agent key", identitiesOnly: true,
			files:   func(t *testing.T, dir string) []string { return []string{authorized.write(t, dir, "id", "secret")} },
			offered: []ssh.PublicKey{authorized.pub}, notOffered: []ssh.PublicKey{stranger.pub},
		},
		{
			name: "only the public key file: its agent key", identitiesOnly: true,
			files: func(t *testing.T, dir string) []string {
				writeFile(t, dir, "id.pub", ssh.MarshalAuthorizedKey(authorized.pub))
				return []string{filepath.Join(dir, "id")}
			},
			offered: []ssh.PublicKey{authorized.pub}, notOffered: []ssh.PublicKey{stranger.pub},
		},
		{
			name: "no identity at all", identitiesOnly: true,
			files:   func(*testing.T, string) []string { return nil },
			wantErr: remote.ErrAuthFailed, wantInMsg: []string{"no usable key", "IdentitiesOnly"},
			notOffered: []ssh.PublicKey{authorized.pub, stranger.pub},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Not parallel: the server's record of offered keys is shared.
			srv.mu.Lock()
			srv.offered = nil
			srv.mu.Unlock()
			tgt := srv.target(tt.files(t, t.TempDir())...)
			tgt.IdentitiesOnly = tt.identitiesOnly
			c, err := testDialer(remote.SSHOptions{AgentSocket: sock}).Dial(t.Context(), tgt)
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("dial: %v", err)
			case tt.wantErr == nil:
				_ = c.Close()
			case !errors.Is(err, tt.wantErr):
				t.Fatalf("dial = %v, want %v", err, tt.wantErr)
			}
			for _, s := range tt.wantInMsg {
				if !strings.Contains(fmt.Sprint(err), s) {
					t.Errorf("error %v does not mention %q", err, s)
				}
			}
			for _, k := range tt.offered {
				if !srv.wasOffered(k) {
					t.Errorf("%s not offered", ssh.FingerprintSHA256(k))
				}
			}
			for _, k := range tt.notOffered {
				if srv.wasOffered(k) {
					t.Errorf("%s offered, want it hidden", ssh.FingerprintSHA256(k))
				}
			}
		})
	}
}

// TestNoSecretsInErrors fails dials in every way a passphrase, a private
// key or an agent takes part in, and checks that no error shows any of
// them.
func TestNoSecretsInErrors(t *testing.T) {
	const planted = "fa-planted-passphrase-7d3f"
	key, agentKey := newTestKey(t), newTestKey(t)
	srv := startAuthServer(t, acceptKeys()) // accepts nothing
	keyring := agent.NewKeyring()
	if err := keyring.Add(agent.AddedKey{PrivateKey: agentKey.priv, Comment: "agent-comment"}); err != nil {
		t.Fatal(err)
	}
	sock := serveAgent(t, keyring)
	env := envName(t)

	secrets := []string{planted, base64.StdEncoding.EncodeToString([]byte(planted))}
	for _, k := range []testKey{key, agentKey} {
		seed := k.priv.Seed()
		secrets = append(secrets, hex.EncodeToString(seed), base64.StdEncoding.EncodeToString(seed), base64.RawStdEncoding.EncodeToString(seed)[:20])
	}
	dir := t.TempDir()
	plain := key.write(t, dir, "plain", "")
	rightFile := newTestKey(t).write(t, dir, "right", planted)
	askFailsFile := newTestKey(t).write(t, dir, "ask-fails", planted)
	wrongFile := newTestKey(t).write(t, dir, "wrong", "other passphrase")
	garbage := writeFile(t, dir, "garbage", []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n"+base64.StdEncoding.EncodeToString([]byte(planted+planted))+"\n-----END OPENSSH PRIVATE KEY-----\n"))
	for _, f := range []string{plain, rightFile, wrongFile} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// Any line of the key file's body would be a leak.
		for _, line := range strings.Split(string(data), "\n") {
			if len(line) > 20 && !strings.HasPrefix(line, "-----") {
				secrets = append(secrets, line[:20])
			}
		}
	}
	askPlanted := func(string) ([]byte, error) { return []byte(planted), nil }
	askFails := func(string) ([]byte, error) { return nil, errors.New("no terminal") }

	// want proves each error carries the notes that are scanned.
	cases := []struct {
		name  string
		opts  remote.SSHOptions
		env   string
		files []string
		want  []string
	}{
		{"rejected keys from files and agent", remote.SSHOptions{AgentSocket: sock}, planted, []string{plain, rightFile, wrongFile, garbage},
			[]string{"agent ssh-ed25519", rightFile + " ssh-ed25519", wrongFile + ": wrong passphrase", garbage + ": not a usable"}},
		{"wrong passphrase from the environment", remote.SSHOptions{}, planted, []string{wrongFile}, []string{"wrong passphrase from $" + env}},
		{"wrong passphrase asked", remote.SSHOptions{Passphrase: askPlanted}, "", []string{wrongFile}, []string{"wrong passphrase as entered"}},
		{"ask fails", remote.SSHOptions{Passphrase: askFails}, "", []string{askFailsFile}, []string{"no terminal"}},
		{"garbage key", remote.SSHOptions{}, planted, []string{garbage}, []string{"not a usable private key"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.env != "" {
				t.Setenv(env, c.env)
			}
			tgt := srv.target(c.files...)
			tgt.PassphraseEnv = env
			c.opts.ConnectTimeout = kdfTimeout
			conn, err := testDialer(c.opts).Dial(t.Context(), tgt)
			if err == nil {
				_ = conn.Close()
				t.Fatal("dial succeeded against a server that accepts nothing")
			}
			msg := fmt.Sprintf("%v %+v", err, err)
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
			for _, s := range secrets {
				if strings.Contains(msg, s) {
					t.Errorf("error shows secret %q: %s", s, msg)
				}
			}
			t.Logf("dial error: %v", err)
		})
	}
}

// TestUnlockAhead: a key unlocked before the dials is used by a dial that
// has no passphrase source of its own, and a slow answer is bounded by
// Unlock's context, not by a connect timeout.
func TestUnlockAhead(t *testing.T) {
	key := newTestKey(t)
	srv := startAuthServer(t, acceptKeys(key.pub))
	file := key.write(t, t.TempDir(), "id", "right")
	slow := func(string) ([]byte, error) { time.Sleep(300 * time.Millisecond); return []byte("right"), nil }
	if err := remote.Unlock(t.Context(), file, "", slow); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	c, err := testDialer(remote.SSHOptions{ConnectTimeout: kdfTimeout}).Dial(t.Context(), srv.target(file))
	if err != nil {
		t.Fatalf("dial after Unlock, with no passphrase source: %v", err)
	}
	_ = c.Close()

	// Negative control: without Unlock the same dial has no passphrase.
	other := newTestKey(t)
	file2 := other.write(t, t.TempDir(), "id", "right")
	if _, err := testDialer(remote.SSHOptions{ConnectTimeout: kdfTimeout}).Dial(t.Context(), srv.target(file2)); !errors.Is(err, remote.ErrAuthFailed) {
		t.Errorf("dial without Unlock = %v, want an auth failure", err)
	}
	wrong := other.write(t, t.TempDir(), "id", "right")
	if err := remote.Unlock(t.Context(), wrong, "", func(string) ([]byte, error) { return []byte("nope"), nil }); err == nil || !strings.Contains(err.Error(), "wrong passphrase") {
		t.Errorf("Unlock with a wrong passphrase = %v", err)
	}
	if err := remote.Unlock(t.Context(), filepath.Join(t.TempDir(), "absent"), "", nil); err != nil {
		t.Errorf("Unlock of a missing file = %v, want nil (the dial reports it)", err)
	}
}

// TestAuthFailedListsTriedKeys dials real OpenSSH sshd with more keys than
// its MaxAuthTries lets a client try. sshd counts every rejected key and,
// at MaxAuthTries failures, disconnects with "Too many authentication
// failures" (openssh-portable auth2.c userauth_finish,
// auth.c auth_maxtries_exceeded). The error must list as offered exactly
// the keys sshd logged as tried, say that sshd cut the attempt short, and
// name the keys that were never offered, among them here the authorized
// one.
func TestAuthFailedListsTriedKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		maxAuthTries int
		rejected     int  // keys sshd does not accept, offered first
		authorized   bool // one more key, last, that sshd accepts
		wantTried    int
		wantCutShort bool
	}{
		{name: "MaxAuthTries 3, nine keys", maxAuthTries: 3, rejected: 8, authorized: true, wantTried: 3, wantCutShort: true},
		{name: "MaxAuthTries 1, four keys", maxAuthTries: 1, rejected: 4, wantTried: 1, wantCutShort: true},
		{name: "every key tried", maxAuthTries: 10, rejected: 4, wantTried: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			var keys []testKey
			var files []string
			for i := range tc.rejected + 1 {
				k := newTestKey(t)
				keys = append(keys, k)
				files = append(files, k.write(t, dir, fmt.Sprintf("id_%d", i), ""))
			}
			var authorized []ssh.PublicKey
			if tc.authorized {
				authorized = append(authorized, keys[tc.rejected].pub)
			} else {
				keys, files = keys[:tc.rejected], files[:tc.rejected]
			}
			// A key sshd accepts only matters when reached; without one,
			// authorized_keys holds a stranger.
			if len(authorized) == 0 {
				authorized = append(authorized, newTestKey(t).pub)
			}
			srv := sshdtest.Start(t, sshdtest.Options{
				AuthorizedKeys: authorized,
				// VERBOSE logs every rejected key with its fingerprint.
				Config: []string{"MaxAuthTries " + strconv.Itoa(tc.maxAuthTries), "LogLevel VERBOSE"},
			})
			known := writeFile(t, dir, "known_hosts", []byte(srv.KnownHostsLine()+"\n"))
			d := testDialer(remote.SSHOptions{})
			t.Cleanup(func() { _ = d.Close() })
			_, err := d.Dial(t.Context(), remote.Target{
				Name: "sshd", Address: srv.Host, Port: srv.Port, User: srv.User,
				IdentityFiles: files, KnownHostsFiles: []string{known},
			})
			if !errors.Is(err, remote.ErrAuthFailed) {
				t.Fatalf("dial: got %v, want %v", err, remote.ErrAuthFailed)
			}
			msg := err.Error()

			// What sshd saw: one "Failed publickey" line per key.
			var seen []string
			deadline := time.Now().Add(5 * time.Second)
			for {
				log, rerr := os.ReadFile(srv.LogFile)
				if rerr != nil {
					t.Fatal(rerr)
				}
				seen = seen[:0]
				for _, line := range strings.Split(string(log), "\n") {
					if i := strings.Index(line, "Failed publickey for "); i >= 0 {
						f := strings.Fields(line)
						seen = append(seen, f[len(f)-1])
					}
				}
				if len(seen) >= tc.wantTried || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if len(seen) != tc.wantTried {
				t.Fatalf("sshd logged %d rejected keys %v, the test expects %d", len(seen), seen, tc.wantTried)
			}

			start := strings.Index(msg, "(offered ")
			if start < 0 {
				t.Fatalf("error lists no offered key: %s", msg)
			}
			offered := msg[start:]
			offered = offered[:strings.IndexAny(offered, ";)")]
			for i, k := range keys {
				fp := ssh.FingerprintSHA256(k.pub)
				wasSeen := slices.Contains(seen, fp)
				if listed := strings.Contains(offered, fp); listed != wasSeen {
					t.Errorf("key %d (%s): listed as offered %t, sshd saw it %t", i, fp, listed, wasSeen)
				}
				if !wasSeen && !strings.Contains(msg, fp) {
					t.Errorf("key %d (%s), never offered, is not named as such", i, fp)
				}
			}
			cutShort := strings.Contains(msg, "closed the connection after too many authentication failures (sshd's MaxAuthTries)")
			if cutShort != tc.wantCutShort {
				t.Errorf("error says the server stopped after too many authentication failures: %t, want %t", cutShort, tc.wantCutShort)
			}
			if t.Failed() || testing.Verbose() {
				t.Logf("error: %s", msg)
			}
		})
	}
}
