package inventory

import (
	"errors"
	"testing"
)

// TestExpandProxyCommandRefusesShellText: whatever reaches a token, only
// values that mean themselves in sh text are spliced into a ProxyCommand;
// the inventory's own checks keep such values out earlier, and this is the
// check that does not depend on them.
func TestExpandProxyCommandRefusesShellText(t *testing.T) {
	for _, tc := range []struct {
		name, address string
		ok            bool
	}{
		{"IPv4", "10.0.0.1", true},
		{"IPv6 with zone", "fe80::1%eth0", true},
		{"DNS name", "node-1.example.com", true},
		{"semicolon", "10.0.0.1;touch /tmp/x", false},
		{"substitution", "$(touch /tmp/x)", false},
		{"backticks", "`touch /tmp/x`", false},
		{"quote", "a'b", false},
		{"space", "a b", false},
		{"newline", "a\nb", false},
		{"leading dash", "-oProxyCommand=x", false},
		{"glob", "node*", false},
		{"empty", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := expandProxyCommand("nc %h %p", proxyCommandTokens("n1", tc.address, "core", 22))
			if tc.ok != (err == nil) {
				t.Fatalf("expand with %%h=%q: %q, %v; want ok=%v", tc.address, got, err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidValue) {
				t.Errorf("error %v does not wrap ErrInvalidValue", err)
			}
			if tc.ok && got != "nc "+tc.address+" 22" {
				t.Errorf("expanded to %q", got)
			}
		})
	}
}
