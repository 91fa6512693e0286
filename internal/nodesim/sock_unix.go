//go:build unix

package nodesim

import "syscall"

func mksock(path string) error {
	return syscall.Mknod(path, syscall.S_IFSOCK|0o660, 0)
}
