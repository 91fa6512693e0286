package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"golang.org/x/term"

	"github.com/fleet-audit/fleet-audit/remote"
)

// ttyPassphrase asks for a key's passphrase on the controlling terminal, as
// ssh does: /dev/tty, not stdin, so a piped or absent stdin (CI) never
// blocks and simply has no terminal. Prompts are serialized: a hundred
// nodes dialling at once must not interleave them (remote asks once per
// key file and keeps the key).
func ttyPassphrase(prompt io.Writer) remote.PassphraseFunc {
	var mu sync.Mutex
	return func(keyFile string) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
		if err != nil {
			return nil, errors.New("no terminal to ask on; set passphrase_env in the inventory or load the key into ssh-agent")
		}
		defer tty.Close()
		if !term.IsTerminal(int(tty.Fd())) {
			return nil, errors.New("/dev/tty is not a terminal")
		}
		if prompt == nil {
			prompt = tty
		}
		fmt.Fprintf(prompt, "\rEnter passphrase for key %s: ", keyFile)
		pass, err := term.ReadPassword(int(tty.Fd()))
		fmt.Fprintln(prompt)
		if err != nil {
			return nil, fmt.Errorf("read passphrase: %w", err)
		}
		return pass, nil
	}
}
