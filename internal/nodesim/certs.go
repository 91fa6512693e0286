package nodesim

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"time"
)

// RKE2's certificates as its k3s core writes them, real ones made with
// crypto/x509 so that the certs probe and fleet-audit's parsing see what a
// node holds:
//   - the files and who signs each: k3s pkg/daemons/control/deps deps.go
//     (CreateRuntimeCertFiles, genClientCerts, genServerCerts,
//     genRequestHeaderCerts, genETCDCerts) under server/tls, and k3s
//     pkg/agent/config get under agent (the CAs fetched from a server, the
//     kubelet's and kube-proxy's certificates signed by it);
//   - a leaf file holds the leaf, then its CA (deps.go createClientCertKey:
//     util.EncodeCertsPEM(cert, caCerts));
//   - ECDSA P-256 keys (rancher/dynamiclistener cert/io.go
//     LoadOrGenerateKeyFile: MakeEllipticPrivateKeyPEM), a CA valid 10
//     years from its start (cert.go NewSelfSignedCACert: notBefore.Add(
//     duration365d * 10)), a leaf 365 days (NewSignedCert: duration365d);
//   - each .crt beside its .key, which the probe must never read.
//
// Keys come from fixed seeds and ECDSA signs deterministically without a
// random source (crypto/ecdsa, RFC 6979), so a node's files are the same
// bytes whenever they are built within the same hour: certificate times are
// hours relative to the wall clock then, and the days left a run reads are
// whole (every NotAfter sits 12 hours past a whole day from that hour).

// simCA is one of RKE2's CAs: its CN prefix (deps.go createSigningCertKey:
// "<prefix>-ca@<unix>").
type simCA struct{ prefix string }

var (
	caServer        = simCA{"rke2-server"}
	caClient        = simCA{"rke2-client"}
	caRequestHeader = simCA{"rke2-request-header"}
	caETCDServer    = simCA{"etcd-server"}
	caETCDPeer      = simCA{"etcd-peer"}
)

// simCertFile is one certificate file: its CA (the issuer; for a CA file,
// the CA itself), whether it is the CA, and a leaf's CN and usage.
type simCertFile struct {
	path   string
	ca     simCA
	isCA   bool
	cn     string
	server bool // ExtKeyUsageServerAuth, else ClientAuth
}

const (
	tlsDir   = "var/lib/rancher/rke2/server/tls/"
	agentDir = "var/lib/rancher/rke2/agent/"
)

// serverCertFiles are a server's, deps.go's names with version.Program
// "rke2"; %s is the node's hostname.
var serverCertFiles = []simCertFile{
	{tlsDir + "server-ca.crt", caServer, true, "", false},
	{tlsDir + "client-ca.crt", caClient, true, "", false},
	{tlsDir + "request-header-ca.crt", caRequestHeader, true, "", false},
	{tlsDir + "client-admin.crt", caClient, false, "system:admin", false},
	{tlsDir + "client-supervisor.crt", caClient, false, "system:rke2-supervisor", false},
	{tlsDir + "client-controller.crt", caClient, false, "system:kube-controller-manager", false},
	{tlsDir + "client-scheduler.crt", caClient, false, "system:kube-scheduler", false},
	{tlsDir + "client-kube-apiserver.crt", caClient, false, "system:apiserver", false},
	{tlsDir + "client-kube-proxy.crt", caClient, false, "system:kube-proxy", false},
	{tlsDir + "client-rke2-controller.crt", caClient, false, "system:rke2-controller", false},
	{tlsDir + "client-rke2-cloud-controller.crt", caClient, false, "rke2-cloud-controller-manager", false},
	{tlsDir + "client-auth-proxy.crt", caRequestHeader, false, "system:auth-proxy", false},
	{tlsDir + "serving-kube-apiserver.crt", caServer, false, "kube-apiserver", true},
	{tlsDir + "etcd/server-ca.crt", caETCDServer, true, "", false},
	{tlsDir + "etcd/peer-ca.crt", caETCDPeer, true, "", false},
	{tlsDir + "etcd/client.crt", caETCDServer, false, "etcd-client", false},
	{tlsDir + "etcd/server-client.crt", caETCDServer, false, "etcd-server", true},
	{tlsDir + "etcd/peer-server-client.crt", caETCDPeer, false, "etcd-peer", true},
}

// agentCertFiles are every node's: servers run an agent too.
var agentCertFiles = []simCertFile{
	{agentDir + "server-ca.crt", caServer, true, "", false},
	{agentDir + "client-ca.crt", caClient, true, "", false},
	{agentDir + "client-kubelet.crt", caClient, false, "system:node:%s", false},
	{agentDir + "serving-kubelet.crt", caServer, false, "%s", true},
	{agentDir + "client-kube-proxy.crt", caClient, false, "system:kube-proxy", false},
	{agentDir + "client-rke2-controller.crt", caClient, false, "system:rke2-controller", false},
}

// Certificates is when a node's certificates expire, in whole days from
// the hour the state is built: the earliest a check reads, so each plant
// moves exactly what it names.
type Certificates struct {
	// LeafDaysLeft is every leaf's, unless Leaf names one file.
	LeafDaysLeft int
	// Leaf, a path among the node's certificate files, is the one leaf
	// that expires in LeafOneDaysLeft instead.
	Leaf            string
	LeafOneDaysLeft int
	// CADaysLeft is every CA's.
	CADaysLeft int
	// CAGeneration seeds the CA keys: a node that missed a CA rotation
	// (rke2 certificate rotate-ca) trusts another generation's.
	CAGeneration int
}

// HealthyCertificates are a fleet's whose CAs were made 400 days ago and
// whose leaves were renewed 65 days ago: far from RKE2's renewal window
// and from the CAs' end.
func HealthyCertificates() Certificates {
	return Certificates{LeafDaysLeft: 300, CADaysLeft: 3650 - 400}
}

// certClock is the hour the certificates are made against.
var certClock = func() time.Time { return time.Now().UTC().Truncate(time.Hour) }

// WithCertificates writes the node's certificate files as c says; a server
// (one with server/tls files already, or server true) gets both sets.
func WithCertificates(s State, server bool, c Certificates) State {
	files := make(map[string]string, len(s.Files))
	for p, v := range s.Files {
		if strings.HasPrefix(p, tlsDir) || (strings.HasPrefix(p, agentDir) && (strings.HasSuffix(p, ".crt") || strings.HasSuffix(p, ".key"))) {
			server = server || strings.HasPrefix(p, tlsDir)
			continue
		}
		files[p] = v
	}
	now := certClock()
	list := agentCertFiles
	if server {
		list = append(append([]simCertFile{}, serverCertFiles...), agentCertFiles...)
	}
	for _, f := range list {
		crt, key := c.make(f, s.Hostname, now)
		files[f.path] = crt
		files[strings.TrimSuffix(f.path, ".crt")+".key"] = key
	}
	s.Files = files
	return s
}

func isServerCerts(s State) bool {
	_, ok := s.Files[serverCertFiles[0].path]
	return ok
}

// WithCertificatesExpired is a node left off for longer than its leaves
// live: every leaf expired 3 days ago, so RKE2 renews them at its next
// start but nothing talks to it until then.
func WithCertificatesExpired(s State) State {
	c := HealthyCertificates()
	c.LeafDaysLeft = -3
	return WithCertificates(s, isServerCerts(s), c)
}

// WithCertificateInRenewWindow is a node whose kubelet serving certificate
// has 30 days left, inside RKE2's renewal window: the upgrade's restart
// renews it.
func WithCertificateInRenewWindow(s State) State {
	c := HealthyCertificates()
	c.Leaf, c.LeafOneDaysLeft = agentDir+"serving-kubelet.crt", 30
	return WithCertificates(s, isServerCerts(s), c)
}

// WithCANearExpiry is a node whose CAs end in 200 days: RKE2 never renews
// a CA (rke2-docs security/certificates.md), so the cluster needs rke2
// certificate rotate-ca before then.
func WithCANearExpiry(s State) State {
	c := HealthyCertificates()
	c.CADaysLeft = 200
	return WithCertificates(s, isServerCerts(s), c)
}

// WithMissedRotation is a node that missed the cluster's CA rotation
// (rke2 certificate rotate-ca, then a restart of every node: rke2-docs
// security/certificates.md): it still trusts the previous CAs and holds
// leaves they signed, with the same dates as its peers', so only the CA
// keys tell it apart.
func WithMissedRotation(s State) State {
	c := HealthyCertificates()
	c.CAGeneration = 1
	return WithCertificates(s, isServerCerts(s), c)
}

// make returns the PEM of file f (a leaf followed by its CA) and of its key.
func (c Certificates) make(f simCertFile, host string, now time.Time) (crt, key string) {
	ca, caKey := c.caCert(f.ca, now)
	if f.isCA {
		return pemOf("CERTIFICATE", ca.Raw), keyPEM(f.path)
	}
	left := c.LeafDaysLeft
	if c.Leaf == f.path {
		left = c.LeafOneDaysLeft
	}
	notAfter := now.Add(time.Duration(left)*24*time.Hour + 12*time.Hour)
	cn := f.cn
	if strings.Contains(cn, "%s") {
		cn = fmt.Sprintf(cn, host)
	}
	usage := x509.ExtKeyUsageClientAuth
	var dns []string
	if f.server {
		usage = x509.ExtKeyUsageServerAuth
		dns = []string{"localhost", host}
		if f.cn == "kube-apiserver" {
			// deps.go genServerCerts.
			dns = []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost", host}
		}
	}
	k := simKey("leaf " + f.path + " " + host)
	tmpl := &x509.Certificate{
		SerialNumber: serialOf(f.path + host),
		Subject:      pkix.Name{CommonName: cn},
		DNSNames:     dns,
		NotBefore:    notAfter.Add(-365 * 24 * time.Hour),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageKeyEncipherment | x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	der, err := x509.CreateCertificate(nil, tmpl, ca, &k.PublicKey, caKey)
	if err != nil {
		panic(fmt.Sprintf("nodesim: certificate %s: %v", f.path, err)) // a defect of the table, not input
	}
	return pemOf("CERTIFICATE", der) + pemOf("CERTIFICATE", ca.Raw), keyPEM(f.path)
}

// caCert is CA a as of c: the same certificate on every node of a fleet.
func (c Certificates) caCert(a simCA, now time.Time) (*x509.Certificate, *ecdsa.PrivateKey) {
	k := simKey(fmt.Sprintf("ca %s %d", a.prefix, c.CAGeneration))
	notAfter := now.Add(time.Duration(c.CADaysLeft)*24*time.Hour + 12*time.Hour)
	notBefore := notAfter.Add(-10 * 365 * 24 * time.Hour)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(0),
		Subject:               pkix.Name{CommonName: fmt.Sprintf("%s-ca@%d", a.prefix, notBefore.Unix())},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageKeyEncipherment | x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(nil, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		panic(fmt.Sprintf("nodesim: CA %s: %v", a.prefix, err))
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		panic(fmt.Sprintf("nodesim: CA %s: %v", a.prefix, err))
	}
	return cert, k
}

func simKey(seed string) *ecdsa.PrivateKey {
	d := sha256.Sum256([]byte("nodesim " + seed))
	k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d[:])
	if err != nil {
		panic(fmt.Sprintf("nodesim: key %q: %v", seed, err)) // a 1 in 2^128 seed
	}
	return k
}

func serialOf(s string) *big.Int {
	h := sha256.Sum256([]byte(s))
	return new(big.Int).SetBytes(h[:8])
}

func pemOf(typ string, der []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
}

// CertKeySecret is in every simulated *.key file: a test finding it in a
// probe's output or a report has caught a key leaving the node.
const CertKeySecret = "nodesim-private-key-never-leaves-the-node"

// keyPEM stands for a key file: the probe must never open it, so its
// content is a marker, not a key.
func keyPEM(path string) string {
	return "-----BEGIN EC PRIVATE KEY-----\n" + CertKeySecret + " " + path + "\n-----END EC PRIVATE KEY-----\n"
}
