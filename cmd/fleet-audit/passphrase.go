package main

import (
	"context"
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
// key file and keeps the key). The prompt ends with ctx (Ctrl-C), and the
// terminal is given back its echo however the prompt ends, also when a
// second Ctrl-C ends the process.
func ttyPassphrase(ctx context.Context, prompt io.Writer) remote.PassphraseFunc {
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
		fd := int(tty.Fd())
		state, err := term.GetState(fd)
		if err != nil {
			return nil, fmt.Errorf("read passphrase: %w", err)
		}
		restore := func() { _ = term.Restore(fd, state) }
		defer atExit(restore)()
		fmt.Fprintf(prompt, "\rEnter passphrase for key %s: ", keyFile)
		// term.ReadPassword blocks in read(2), which no context reaches:
		// on an interrupt it is abandoned and the echo it turned off is
		// turned back on here.
		pass, err := untilDone(ctx, func() ([]byte, error) { return term.ReadPassword(fd) })
		if ctx.Err() != nil {
			restore()
		}
		fmt.Fprintln(prompt)
		if err != nil {
			return nil, fmt.Errorf("read passphrase: %w", err)
		}
		return pass, nil
	}
}
