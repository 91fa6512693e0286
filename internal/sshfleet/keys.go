package sshfleet

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"

	"golang.org/x/crypto/ssh"
)

// NewClientKey returns a fresh ed25519 client key as a signer and as an
// unencrypted OpenSSH private key file, ready for Target.IdentityFiles.
func NewClientKey() (ssh.Signer, []byte, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate client key: %w", err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, nil, fmt.Errorf("client key signer: %w", err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "sshfleet client key")
	if err != nil {
		return nil, nil, fmt.Errorf("marshal client key: %w", err)
	}
	return signer, pem.EncodeToMemory(block), nil
}

func newHostKey() (ssh.Signer, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate host key: %w", err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, fmt.Errorf("host key signer: %w", err)
	}
	return signer, nil
}
