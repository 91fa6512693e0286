// Package shquote writes strings as POSIX sh words: the one spelling of
// single-quoting that the probe bundle (text a node's shell runs) and the
// commands printed for an operator to paste share.
package shquote

import "strings"

// Quote is s as one single-quoted sh word: every byte is literal inside
// single quotes, and a single quote itself is written '\”.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// plain are the bytes a word may hold unquoted in any sh context, so
// Readable leaves the usual host names, paths and ports as they are.
const plain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-"

// Readable is s unquoted when every byte of it is plain, else Quote(s): for
// commands a person reads before pasting.
func Readable(s string) string {
	if s != "" && strings.Trim(s, plain) == "" {
		return s
	}
	return Quote(s)
}
