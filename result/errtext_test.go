package result

import "testing"

func TestErrorText(t *testing.T) {
	for _, tc := range []struct {
		name  string
		parts []string
		want  string
	}{
		{"the message repeats the error's root cause",
			[]string{"probe bundle failed: busybox: not found", "ssh node-1 (root@10.0.0.1:22): exit 127: busybox: not found"},
			"probe bundle failed: ssh node-1 (root@10.0.0.1:22): exit 127: busybox: not found"},
		{"the message is the whole error",
			[]string{"ssh node-1 (root@10.0.0.1:22): connection refused", "ssh node-1 (root@10.0.0.1:22): connection refused"},
			"ssh node-1 (root@10.0.0.1:22): connection refused"},
		{"a cause and a distinct error are both kept",
			[]string{"cannot connect (refused, no route or unknown name)", "ssh node-1 (root@10.0.0.1:22): unreachable: connection refused"},
			"cannot connect (refused, no route or unknown name): ssh node-1 (root@10.0.0.1:22): unreachable: connection refused"},
		{"a short link may repeat", []string{"a: not found", "b: not found"}, "a: not found: b: not found"},
		{"one chain repeating itself", []string{"sudo: a password is required: exit 1: sudo: a password is required"},
			"exit 1: sudo: a password is required"},
		{"empty parts are left out", []string{"", "only the error", " "}, "only the error"},
		{"nothing", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ErrorText(tc.parts...); got != tc.want {
				t.Errorf("ErrorText(%q)\n got %q\nwant %q", tc.parts, got, tc.want)
			}
		})
	}
}
