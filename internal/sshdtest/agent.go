package sshdtest

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// hostKeyAgent is a read-only ssh-agent holding one signer. sshd's
// HostKeyAgent uses it to sign with a host key it has only as a public key.
type hostKeyAgent struct {
	signer ssh.Signer
}

var _ agent.ExtendedAgent = hostKeyAgent{}

var errReadOnly = errors.New("sshdtest: the host key agent is read-only")

func (a hostKeyAgent) List() ([]*agent.Key, error) {
	pub := a.signer.PublicKey()
	return []*agent.Key{{Format: pub.Type(), Blob: pub.Marshal(), Comment: "sshdtest host key"}}, nil
}

func (a hostKeyAgent) Sign(key ssh.PublicKey, data []byte) (*ssh.Signature, error) {
	return a.SignWithFlags(key, data, 0)
}

// SignWithFlags honours the RSA SHA-2 flags, without which sshd could only
// offer the SHA-1 ssh-rsa algorithm for an RSA host key.
func (a hostKeyAgent) SignWithFlags(key ssh.PublicKey, data []byte, flags agent.SignatureFlags) (*ssh.Signature, error) {
	if !bytes.Equal(key.Marshal(), a.signer.PublicKey().Marshal()) {
		return nil, errors.New("sshdtest: the host key agent does not hold that key")
	}
	algo := ""
	switch {
	case flags&agent.SignatureFlagRsaSha512 != 0:
		algo = ssh.KeyAlgoRSASHA512
	case flags&agent.SignatureFlagRsaSha256 != 0:
		algo = ssh.KeyAlgoRSASHA256
	}
	if as, ok := a.signer.(ssh.AlgorithmSigner); ok && algo != "" {
		return as.SignWithAlgorithm(rand.Reader, data, algo)
	}
	return a.signer.Sign(rand.Reader, data)
}

func (a hostKeyAgent) Signers() ([]ssh.Signer, error) { return []ssh.Signer{a.signer}, nil }
func (hostKeyAgent) Add(agent.AddedKey) error         { return errReadOnly }
func (hostKeyAgent) Remove(ssh.PublicKey) error       { return errReadOnly }
func (hostKeyAgent) RemoveAll() error                 { return errReadOnly }
func (hostKeyAgent) Lock([]byte) error                { return errReadOnly }
func (hostKeyAgent) Unlock([]byte) error              { return errReadOnly }
func (hostKeyAgent) Extension(string, []byte) ([]byte, error) {
	return nil, agent.ErrExtensionUnsupported
}

// serveHostKeyAgent serves the agent on a unix socket until the test ends
// and returns the socket path. The socket lives in a short directory of its
// own because t.TempDir paths can pass the 108-byte limit of socket names.
func serveHostKeyAgent(t testing.TB, signer ssh.Signer) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sshdtest-agent-")
	if err != nil {
		t.Fatalf("sshdtest: agent dir: %v", err)
	}
	sock := filepath.Join(dir, "agent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		_ = os.RemoveAll(dir)
		t.Fatalf("sshdtest: listen for host key agent: %v", err)
	}
	a := hostKeyAgent{signer: signer}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns = map[net.Conn]struct{}{}
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = struct{}{}
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = agent.ServeAgent(a, c)
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
				_ = c.Close()
			}()
		}
	}()
	// Registered before sshd starts, so it runs after sshd has stopped.
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		done := make(chan struct{})
		go func() {
			wg.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(stopTimeout):
			t.Errorf("sshdtest: host key agent goroutines still running %s after close", stopTimeout)
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("sshdtest: %v", fmt.Errorf("remove agent dir: %w", err))
		}
	})
	return sock
}
