package check

import (
	"strings"
	"testing"
)

func TestSelectChecks(t *testing.T) {
	all := []Check{{ID: "firewall.ufw-active"}, {ID: "firewall.firewalld-active"}, {ID: "sysctl.ip-forward"}, {ID: "kubeproxy.down"}}
	tests := []struct {
		name       string
		only, skip []string
		want       string // ids kept, in order
		err        []string
	}{
		{name: "nothing given keeps all", want: "firewall.ufw-active,firewall.firewalld-active,sysctl.ip-forward,kubeproxy.down"},
		{name: "skip glob", skip: []string{"firewall.*"}, want: "sysctl.ip-forward,kubeproxy.down"},
		{name: "skip exact", skip: []string{"kubeproxy.down"}, want: "firewall.ufw-active,firewall.firewalld-active,sysctl.ip-forward"},
		{name: "only", only: []string{"sysctl.*", "kubeproxy.down"}, want: "sysctl.ip-forward,kubeproxy.down"},
		{name: "only then skip", only: []string{"firewall.*"}, skip: []string{"firewall.firewalld-active"}, want: "firewall.ufw-active"},
		{name: "skip outside only is fine", only: []string{"sysctl.*"}, skip: []string{"firewall.*"}, want: "sysctl.ip-forward"},
		{name: "skip everything", skip: []string{"*"}, want: ""},
		{name: "glob does not cross the id", skip: []string{"firewall"}, err: []string{`--skip "firewall": matches no check`}},
		{name: "only matching nothing", only: []string{"fw.*"}, err: []string{`--only "fw.*": matches no check`}},
		{name: "skip an other id", skip: []string{"skew.*"}, want: "firewall.ufw-active,firewall.firewalld-active,sysctl.ip-forward,kubeproxy.down"},
		{name: "only an other id keeps no check", only: []string{"skew.servers"}, want: ""},
		{name: "a typo gets the id meant", skip: []string{"kubeproxy.dwon"}, err: []string{`--skip "kubeproxy.dwon": matches no check and no finding built in (did you mean kubeproxy.down?)`}},
		{name: "a family typo gets the family", only: []string{"firewal.*"}, err: []string{`(did you mean firewall.*?)`}},
		{name: "nothing near, no guess", only: []string{"zzz.*"}, err: []string{`--only "zzz.*": matches no check and no finding built in (see`}},
		{name: "bad glob", skip: []string{"firewall.["}, err: []string{`--skip "firewall.[": bad glob`}},
		{name: "every bad pattern named", only: []string{"a"}, skip: []string{"b", "sysctl.*"}, err: []string{`--only "a"`, `--skip "b"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SelectChecks(all, Selection{Only: tt.only, Skip: tt.skip}, []string{"skew.servers"})
			if tt.err != nil {
				if err == nil {
					t.Fatalf("no error, want %q", tt.err)
				}
				for _, e := range tt.err {
					if !strings.Contains(err.Error(), e) {
						t.Errorf("error %q lacks %q", err, e)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ids := strings.Join(IDs(got), ","); ids != tt.want {
				t.Errorf("kept %q, want %q", ids, tt.want)
			}
		})
	}
}
