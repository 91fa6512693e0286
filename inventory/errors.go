package inventory

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Error is one problem found in an inventory. Load and Parse return every
// Error of a file at once, joined with errors.Join, sorted by line.
type Error struct {
	// File is the inventory file as passed to Load or Parse.
	File string
	// Line is 1-based; 0 when the problem belongs to the whole file.
	Line int
	// Field is the dotted path of the offending key, such as
	// "groups.etcd.hosts.etcd-1.port"; empty when no key is to blame (a
	// syntax error, an unreadable file).
	Field string
	// Err wraps one of the Err* sentinels of this package, or the
	// underlying I/O error (so errors.Is(err, fs.ErrNotExist) works).
	Err error
}

// Error formats as "FILE:LINE: FIELD: msg", leaving out the parts that are
// unknown, so editors and terminals can jump to the line.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	} else if e.Line > 0 {
		b.WriteString("line " + strconv.Itoa(e.Line) + ": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	if e.Err == nil {
		b.WriteString("invalid inventory")
	} else {
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// The kinds of problem an *Error can wrap, for callers that react to one kind
// (errors.Is). The message of an Error says more than the sentinel does.
var (
	ErrSyntax        = errors.New("invalid YAML")
	ErrUnknownKey    = errors.New("unknown key")
	ErrDuplicateKey  = errors.New("duplicate key")
	ErrDuplicateHost = errors.New("duplicate host")
	ErrWrongType     = errors.New("wrong type")
	ErrInvalidValue  = errors.New("invalid value")
	ErrNoAddress     = errors.New("no address")
	ErrNoHosts       = errors.New("no hosts")
	ErrSSHConfig     = errors.New("unusable ssh_config")
)

// kindError gives a message its own wording while errors.Is still finds the
// sentinel it belongs to.
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

func kindf(kind error, format string, args ...any) error {
	return &kindError{kind: kind, msg: fmt.Sprintf(format, args...)}
}
