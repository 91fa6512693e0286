package audit

import (
	"encoding/pem"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// pemFacts is what the certs probe prints for node state s, made in Go:
// each *.crt file's first PEM block, its body in pieces of whole lines of
// at most 1024 bytes, keyed certs.pem.<area>.<name>.<piece>.
func pemFacts(t *testing.T, s nodesim.State) map[string]string {
	t.Helper()
	areas := map[string]string{"var/lib/rancher/rke2/server/tls/etcd/": "etcd", "var/lib/rancher/rke2/server/tls/": "tls", "var/lib/rancher/rke2/agent/": "agent"}
	facts := map[string]string{}
	n := 0
	for path, content := range s.Files {
		dir, name := path[:strings.LastIndexByte(path, '/')+1], path[strings.LastIndexByte(path, '/')+1:]
		area, ok := areas[dir]
		if !ok || !strings.HasSuffix(name, ".crt") {
			continue
		}
		n++
		var b *pem.Block
		for rest := []byte(content); b == nil || b.Type != "CERTIFICATE"; {
			if b, rest = pem.Decode(rest); b == nil {
				t.Fatalf("%s: no certificate", path)
			}
		}
		body := strings.Split(strings.TrimSpace(string(pem.EncodeToMemory(b))), "\n")
		body = body[1 : len(body)-1]
		piece, cur := 0, ""
		for _, l := range body {
			if len(cur)+len(l) > 1024 {
				facts["certs.pem."+area+"."+strings.TrimSuffix(name, ".crt")+"."+strconv.Itoa(piece)] = cur
				piece, cur = piece+1, ""
			}
			cur += l
		}
		facts["certs.pem."+area+"."+strings.TrimSuffix(name, ".crt")+"."+strconv.Itoa(piece)] = cur
	}
	facts["certs.files"] = strconv.Itoa(n)
	facts["rke2.version"] = s.RKE2Version
	return facts
}

// TestDeriveCertFacts reads real certificates as nodesim makes them for
// each plant, as of a clock a few minutes after they were made, and holds
// what the checks and drift read.
func TestDeriveCertFacts(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Hour).Add(5 * time.Minute)
	server := nodesim.Healthy("s1", true)
	agent := nodesim.Healthy("w1", false)
	healthyPrint := func(s nodesim.State) string {
		f := pemFacts(t, s)
		deriveCertFacts(f, now)
		return f[catalog.CertsValidityFact]
	}(agent)
	for _, tc := range []struct {
		name  string
		facts map[string]string
		want  map[string]string
		// drift: the validity print differs from a healthy node's.
		drift bool
	}{
		{"healthy server", pemFacts(t, server), map[string]string{catalog.CertsLeafDaysLeftFact: "300", catalog.CertsCADaysLeftFact: "3250",
			catalog.CertsLeafRenewDaysFact: "90", catalog.CertsUnparsedFact: "none", catalog.CertsCAFileFact: "agent/client-ca.crt",
			catalog.CertsLeafFileFact: "agent/client-kube-proxy.crt", catalog.CertsLeafNotAfterFact: now.Add(300*24*time.Hour + 12*time.Hour).Format(time.DateOnly)}, false},
		{"healthy agent", pemFacts(t, agent), map[string]string{catalog.CertsLeafDaysLeftFact: "300", catalog.CertsCADaysLeftFact: "3250"}, false},
		{"release with the 120-day window", pemFacts(t, nodesim.WithRKE2Version(agent, "v1.33.1+rke2r1")), map[string]string{catalog.CertsLeafRenewDaysFact: "120"}, false},
		{"expired leaves", pemFacts(t, nodesim.WithCertificatesExpired(server)), map[string]string{catalog.CertsLeafDaysLeftFact: "-3"}, true},
		{"one leaf in the window", pemFacts(t, nodesim.WithCertificateInRenewWindow(agent)), map[string]string{catalog.CertsLeafDaysLeftFact: "30",
			catalog.CertsLeafFileFact: "agent/serving-kubelet.crt"}, true},
		{"CA near its end", pemFacts(t, nodesim.WithCANearExpiry(agent)), map[string]string{catalog.CertsCADaysLeftFact: "200", catalog.CertsLeafDaysLeftFact: "300"}, false},
		{"missed rotation", pemFacts(t, nodesim.WithMissedRotation(agent)), map[string]string{catalog.CertsLeafDaysLeftFact: "300", catalog.CertsCADaysLeftFact: "3250"}, true},
		{"missed rotation on a server", pemFacts(t, nodesim.WithMissedRotation(server)), map[string]string{catalog.CertsLeafDaysLeftFact: "300"}, true},
		{"not root", map[string]string{"certs.files": probe.NotRoot, "certs.pem.agent.client-ca.0": probe.NotRoot},
			map[string]string{catalog.CertsLeafDaysLeftFact: probe.NotRoot, catalog.CertsValidityFact: probe.NotRoot}, false},
		{"unreadable", map[string]string{"certs.files": "unreadable"}, map[string]string{catalog.CertsCADaysLeftFact: "unreadable"}, false},
		{"no RKE2", map[string]string{"certs.files": "0", "rke2.version": "absent"},
			map[string]string{catalog.CertsLeafDaysLeftFact: "absent", catalog.CertsValidityFact: "absent", catalog.CertsLeafRenewDaysFact: "unknown"}, false},
		{"a piece cut short", func() map[string]string {
			f := pemFacts(t, agent)
			f["certs.pem.agent.serving-kubelet.0"] = f["certs.pem.agent.serving-kubelet.0"][:100]
			return f
		}(), map[string]string{catalog.CertsUnparsedFact: "agent/serving-kubelet.crt", catalog.CertsLeafDaysLeftFact: "300"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := maps.Clone(tc.facts)
			deriveCertFacts(f, now)
			for k, v := range tc.want {
				if f[k] != v {
					t.Errorf("%s = %q, want %q", k, f[k], v)
				}
			}
			for k := range f {
				if strings.HasPrefix(k, certsPEMPrefix) {
					t.Errorf("%s kept: the pieces must not reach a report", k)
				}
			}
			if p, ok := f[catalog.CertsValidityFact]; ok && p != tc.facts["certs.files"] && p != "absent" {
				if (p != healthyPrint) != tc.drift {
					t.Errorf("validity %q, healthy %q: drift %v, want %v", p, healthyPrint, p != healthyPrint, tc.drift)
				}
			}
		})
	}
	if !strings.HasPrefix(healthyPrint, "leaf 365d valid; ca ") {
		t.Errorf("healthy validity = %q", healthyPrint)
	}
}

// TestCertRenewDays pins RKE2's window per release: 120 days from the May
// 2025 releases on each line, 90 before.
func TestCertRenewDays(t *testing.T) {
	for v, want := range map[string]int{
		"v1.29.15+rke2r1": 90, "v1.30.12+rke2r1": 90, "v1.30.13+rke2r1": 120, "v1.31.8+rke2r1": 90, "v1.31.9+rke2r1": 120,
		"v1.32.4+rke2r1": 90, "v1.32.5+rke2r1": 120, "v1.33.0+rke2r1": 90, "v1.33.1+rke2r1": 120, "v1.34.0+rke2r1": 120,
		"absent": 0, "unknown": 0,
	} {
		got, ok := certRenewDays(v)
		if got != want || ok != (want != 0) {
			t.Errorf("certRenewDays(%s) = %d, %v; want %d", v, got, ok, want)
		}
	}
}

// TestCertsProbe runs the probe under each shell on a server and an agent:
// it sends exactly the pieces pemFacts makes (the first certificate of
// each file), counts every *.crt, and never prints a key file's content.
func TestCertsProbe(t *testing.T) {
	shells := [][]string{{"dash"}, {"bash", "--posix"}, {"busybox", "sh"}}
	// A key pasted into a .crt file, before or after the certificate,
	// stays on the node: only the certificate's lines are printed.
	keyBlock := "-----BEGIN EC PRIVATE KEY-----\n" + nodesim.CertKeySecret + "\n-----END EC PRIVATE KEY-----\n"
	pasted := nodesim.WithCertificateInRenewWindow(nodesim.Healthy("w1", false))
	pasted.Files = maps.Clone(pasted.Files)
	for _, f := range []string{"client-kubelet.crt", "client-kube-proxy.crt"} {
		p := "var/lib/rancher/rke2/agent/" + f
		crt, _, _ := strings.Cut(pasted.Files[p], "-----END CERTIFICATE-----\n")
		crt += "-----END CERTIFICATE-----\n"
		if f == "client-kubelet.crt" {
			pasted.Files[p] = keyBlock + crt
		} else {
			pasted.Files[p] = strings.TrimSuffix(crt, "-----END CERTIFICATE-----\n") + keyBlock
		}
	}
	// The probe prints of each file what it prints of the file without
	// the key: the certificate, cut at the key's line where its END line
	// is missing.
	for _, c := range []struct{ s, clean nodesim.State }{{nodesim.Healthy("s1", true), nodesim.Healthy("s1", true)},
		{pasted, nodesim.WithCertificateInRenewWindow(nodesim.Healthy("w1", false))}} {
		s := c.s
		want := pemFacts(t, c.clean)
		delete(want, "rke2.version")
		for _, sh := range shells {
			t.Run(s.Hostname+"/"+sh[0], func(t *testing.T) {
				parsed, raw := runProbeUnder(t, sh, "certs", s)
				if strings.Contains(raw, nodesim.CertKeySecret) || strings.Contains(raw, "PRIVATE KEY") {
					t.Fatalf("a key file reached the output")
				}
				if !maps.Equal(parsed.Facts, want) {
					for _, k := range slices.Sorted(maps.Keys(want)) {
						if parsed.Facts[k] != want[k] {
							t.Errorf("%s = %.40q, want %.40q", k, parsed.Facts[k], want[k])
						}
					}
					t.Errorf("%d facts, want %d", len(parsed.Facts), len(want))
				}
			})
		}
	}
}

// TestCertsPlanted: each certificate problem planted on one node of a
// healthy fleet is found on exactly that node, at its severity, the missed
// rotation as drift of certs.validity, and the reports carry no piece.
func TestCertsPlanted(t *testing.T) {
	testtools.SkipShort(t, "runs the certs probe in a shell on planted nodes")
	fleet := nodesim.Clean(6)
	plants := map[string]func(nodesim.State) nodesim.State{
		"node-2": nodesim.WithCertificatesExpired,
		"node-3": nodesim.WithCertificateInRenewWindow,
		"node-4": nodesim.WithCANearExpiry,
		"node-5": nodesim.WithMissedRotation,
	}
	for i := range fleet {
		if p, ok := plants[fleet[i].Name]; ok {
			fleet[i].State = p(fleet[i].State)
		}
	}
	inv, tr := simulate(t, fleet)
	r := runSim(t, inv, tr)
	got := map[string][]string{}
	for _, f := range r.Findings {
		if strings.HasPrefix(f.Check, "certs.") {
			for _, n := range f.Nodes {
				got[n] = append(got[n], f.Severity.String()+" "+f.Check)
			}
		}
	}
	want := map[string][]string{
		"node-2": {"critical certs.leaf-expired"},
		"node-3": {"info certs.leaf-renews-at-restart"},
		"node-4": {"warning certs.ca-expires-soon"},
	}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("certificate findings by node = %v, want %v", got, want)
	}
	odd := map[string]bool{}
	for _, d := range r.Drift {
		if d.Fact == catalog.CertsValidityFact && d.Scope == result.ScopeFleet {
			for _, g := range d.Groups[1:] {
				for _, n := range g.Nodes {
					odd[n] = true
				}
			}
		}
		if strings.HasPrefix(d.Fact, "certs.") && d.Fact != catalog.CertsValidityFact {
			t.Errorf("drift of %s: a date or a count of days differs between healthy nodes by design", d.Fact)
		}
	}
	if wantOdd := map[string]bool{"node-2": true, "node-3": true, "node-5": true}; !maps.Equal(odd, wantOdd) {
		t.Errorf("nodes whose certs.validity differs from the majority: %v, want %v", odd, wantOdd)
	}
	for _, n := range r.Nodes {
		for k := range n.Facts {
			if strings.HasPrefix(k, certsPEMPrefix) {
				t.Fatalf("node %s keeps %s", n.Name, k)
			}
		}
		if n.Facts[catalog.CertsLeafDaysLeftFact] == "" {
			t.Errorf("node %s: no %s", n.Name, catalog.CertsLeafDaysLeftFact)
		}
	}
}
