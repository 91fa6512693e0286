//go:build !unix

package nodesim

import "errors"

func mksock(string) error { return errors.New("no Unix domain sockets on this system") }
