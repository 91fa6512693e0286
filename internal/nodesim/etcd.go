package nodesim

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// etcdSnapshotDir is where RKE2 keeps local etcd snapshots:
// filepath.Join(<data-dir>/server, "db", "snapshots") (k3s
// pkg/etcd/snapshot.go snapshotDir; rke2-docs
// docs/datastore/backup_restore.md).
const etcdSnapshotDir = "var/lib/rancher/rke2/server/db/snapshots/"

// EtcdMetrics is what etcd's metrics listener answers, the series the etcd
// probe reads (etcd server/etcdserver/metrics.go, server/storage/mvcc/
// metrics.go).
type EtcdMetrics struct {
	HasLeader     bool
	LeaderChanges int
	DBSize        int64
	// Quota is etcd's backend quota: DefaultQuotaBytes, 2 GiB (etcd
	// server/storage/quota.go), which RKE2 leaves as it is unless etcd-arg
	// sets quota-backend-bytes (k3s executor.ETCDConfig has no quota).
	Quota int64
}

// HealthyEtcd is a member with a leader, one leader change since it
// started, and a 24 MiB database under the default quota.
func HealthyEtcd() EtcdMetrics {
	return EtcdMetrics{HasLeader: true, LeaderChanges: 1, DBSize: 24 << 20, Quota: 2 << 30}
}

// Render is the /metrics answer, in the Prometheus text format as
// client_golang writes it: floats by strconv 'g' -1 (2.147483648e+09).
func (m EtcdMetrics) Render() string {
	leader := 0
	if m.HasLeader {
		leader = 1
	}
	var b strings.Builder
	series := []struct{ name, typ, help, value string }{
		{"etcd_mvcc_db_total_size_in_bytes", "gauge", "Total size of the underlying database physically allocated in bytes.", promFloat(float64(m.DBSize))},
		{"etcd_server_has_leader", "gauge", "Whether or not a leader exists. 1 is existence, 0 is not.", fmt.Sprint(leader)},
		{"etcd_server_is_leader", "gauge", "Whether or not this member is a leader. 1 if is, 0 otherwise.", "0"},
		{"etcd_server_leader_changes_seen_total", "counter", "The number of leader changes seen.", fmt.Sprint(m.LeaderChanges)},
		{"etcd_server_quota_backend_bytes", "gauge", "Current backend storage quota size in bytes.", promFloat(float64(m.Quota))},
	}
	for _, s := range series {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n%s %s\n", s.name, s.help, s.name, s.typ, s.name, s.value)
	}
	return b.String()
}

func promFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// etcdHealth is etcd's /health answer: 200 {"health":"true"} or 503
// {"health":"false"} with the reason, e.g. "RAFT NO LEADER" without a
// leader (etcd server/etcdserver/api/etcdhttp health.go; the body is
// {"health":"true","reason":""} in 3.5).
func etcdHealth(m EtcdMetrics) HTTP {
	switch {
	case !m.HasLeader:
		return HTTP{Code: 503, Body: `{"health":"false","reason":"RAFT NO LEADER"}`}
	case m.Quota > 0 && m.DBSize >= m.Quota:
		return HTTP{Code: 503, Body: `{"health":"false","reason":"ALARM NOSPACE"}`}
	}
	return HTTP{Code: 200, Body: `{"health":"true","reason":""}`}
}

// healthyEtcdSnapshotAges are the ages of the local snapshots of a server
// that has run a while: the default schedule "0 */12 * * *" and retention
// 5 (k3s pkg/cli/cmds/server.go), the newest 2 h old.
var healthyEtcdSnapshotAges = []time.Duration{2 * time.Hour, 14 * time.Hour, 26 * time.Hour, 38 * time.Hour, 50 * time.Hour}

// healthyEtcd adds what a server running RKE2's embedded etcd shows: its
// metrics listener on 127.0.0.1:2381 (k3s pkg/etcd/etcd.go
// listenMetricsURLs), healthy, and five scheduled snapshots. RKE2 keeps
// its server directory 0700 root (k3s pkg/daemons/control).
func healthyEtcd(s *State) {
	s.Listening = append(append([]int{}, s.Listening...), 2381)
	setEtcdMetrics(s, HealthyEtcd())
	setEtcdSnapshots(s, s.Hostname, healthyEtcdSnapshotAges)
	s.Files[etcdNameFile] = etcdMemberName(s.Hostname, "")
	s.DirModes = copyDirModes(s.DirModes)
	s.DirModes["var/lib/rancher/rke2/server"] = 0o700
	s.DirModes["var/lib/rancher/rke2/server/db/etcd"] = 0o700
}

// etcdNameFile holds the member's name, written 0600 in a 0700 directory
// (k3s pkg/etcd/etcd.go setName, nameFile: <data-dir>/server/db/etcd/name).
const etcdNameFile = "var/lib/rancher/rke2/server/db/etcd/name"

// etcdMemberName is the name k3s gives a server's member when it first
// starts etcd, or again at a cluster-reset: <node name>-<first 8 of a
// random UUID> (pkg/etcd/etcd.go setName). Here the 8 hex come from the
// node and the start, so a state built twice is the same.
func etcdMemberName(hostname, start string) string {
	h := fnv.New32a()
	h.Write([]byte(hostname + "/" + start))
	return fmt.Sprintf("%s-%08x", K8sNodeName(hostname), h.Sum32())
}

// etcdMember is etcdserverpb.Member as encoding/json writes it, its json
// tags (etcd api/etcdserverpb/rpc.pb.go Member): every field omitempty,
// the ID a JSON number.
type etcdMember struct {
	ID         uint64   `json:"ID,omitempty"`
	Name       string   `json:"name,omitempty"`
	PeerURLs   []string `json:"peerURLs,omitempty"`
	ClientURLs []string `json:"clientURLs,omitempty"`
	IsLearner  bool     `json:"isLearner,omitempty"`
}

// memberID stands in for the random 64-bit ID etcd gives a member.
func memberID(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// etcdMemberLists answers GET /db/info on the supervisor port 9345 of every
// fleet server running etcd and RKE2: k3s's Members, {"members": [...]},
// written by json.NewEncoder (a trailing newline) from the MemberList of
// the node's own etcd (k3s pkg/etcd/etcd.go infoHandler). etcd lists its
// members ordered by ID (server/etcdserver/api/membership/cluster.go
// Members: sort.Sort(MembersByID)). The members of a cluster are the
// servers whose data is of it (State.EtcdCluster), under the name in their
// name file; the fleet's cluster ("") also keeps the member a reset server
// had before (its first name: a reset gives it a new one), and each of
// its servers' EtcdStaleMembers.
func etcdMemberLists(fleet []Member) {
	clusters := map[string][]etcdMember{}
	member := func(name, ip string, learner bool) etcdMember {
		return etcdMember{ID: memberID(name), Name: name, PeerURLs: []string{"https://" + ip + ":2380"}, ClientURLs: []string{"https://" + ip + ":2379"}, IsLearner: learner}
	}
	for i, m := range fleet {
		s := m.State
		if !runsEtcd(s) {
			continue
		}
		clusters[s.EtcdCluster] = append(clusters[s.EtcdCluster], member(s.Files[etcdNameFile], nodeIP(i), s.EtcdLearner))
		if s.EtcdCluster != "" {
			clusters[""] = append(clusters[""], member(etcdMemberName(s.Hostname, ""), nodeIP(i), false))
		}
		for j, stale := range s.EtcdStaleMembers {
			clusters[""] = append(clusters[""], member(stale, fmt.Sprintf("10.0.9.%d", j+1), false))
		}
	}
	for i := range fleet {
		s := fleet[i].State
		if !runsEtcd(s) || s.Units["rke2-server"].Active != "active" {
			continue
		}
		ms := slices.Clone(clusters[s.EtcdCluster])
		slices.SortFunc(ms, func(a, b etcdMember) int {
			switch {
			case a.ID < b.ID:
				return -1
			case a.ID > b.ID:
				return 1
			}
			return 0
		})
		b, err := json.Marshal(struct {
			Members []etcdMember `json:"members"`
		}{ms})
		if err != nil {
			panic(err) // plain data always marshals
		}
		h := make(map[string]HTTP, len(s.HTTP)+1)
		for k, v := range s.HTTP {
			h[k] = v
		}
		h["9345/db/info"] = HTTP{Code: 200, Body: string(b) + "\n"}
		s.HTTP = h
		fleet[i].State = s
	}
}

// WithEtcdClusterReset is a server on which rke2 server --cluster-reset was
// run alone, its peers left as they were: it starts a new one-member
// cluster under a new member name (k3s pkg/etcd/etcd.go Reset: setName(true),
// newCluster), while the others keep its old member, now unreachable.
func WithEtcdClusterReset(s State) State {
	s.Files = hostFiles(s)
	s.Files[etcdNameFile] = etcdMemberName(s.Hostname, "cluster-reset")
	s.EtcdCluster = "reset-" + s.Hostname
	return s
}

// WithEtcdStaleMember is a server whose cluster still lists the member of
// a server removed without its member (name) being removed.
func WithEtcdStaleMember(s State, name string) State {
	s.EtcdStaleMembers = append(slices.Clone(s.EtcdStaleMembers), name)
	return s
}

func setEtcdMetrics(s *State, m EtcdMetrics) {
	h := make(map[string]HTTP, len(s.HTTP)+2)
	for k, v := range s.HTTP {
		h[k] = v
	}
	h["2381/health"] = etcdHealth(m)
	h["2381/metrics"] = HTTP{Code: 200, Body: m.Render()}
	s.HTTP = h
}

// setEtcdSnapshots replaces the local snapshots with scheduled ones of the
// given ages, named as (*ETCD).Snapshot names them:
// etcd-snapshot-<node>-<unix time> (k3s pkg/etcd/snapshot.go).
func setEtcdSnapshots(s *State, node string, ages []time.Duration) {
	s.Files = hostFiles(*s)
	ft := make(map[string]time.Duration, len(s.FileAges)+len(ages))
	for p, a := range s.FileAges {
		if !strings.HasPrefix(p, etcdSnapshotDir) {
			ft[p] = a
		}
	}
	for p := range s.Files {
		if strings.HasPrefix(p, etcdSnapshotDir) {
			delete(s.Files, p)
		}
	}
	// Named against the hour, as the certificates are made (certs.go): two
	// states built a second apart keep the same files. The probe reads
	// the ages from the mtimes Build sets, never from the names.
	now := time.Now().Truncate(time.Hour).Unix()
	for _, a := range ages {
		p := fmt.Sprintf("%setcd-snapshot-%s-%d", etcdSnapshotDir, node, now-int64(a/time.Second))
		// The content stands in for a bbolt database; no probe may read it.
		s.Files[p] = "etcd snapshot: never read by a probe\n"
		ft[p] = a
	}
	s.FileAges = ft
	if len(ages) == 0 {
		// The directory exists once a snapshot was taken and pruned.
		s.DirModes = copyDirModes(s.DirModes)
		s.DirModes[strings.TrimSuffix(etcdSnapshotDir, "/")] = 0o700
	}
}

// WithEtcdSnapshotsAged makes the newest local snapshot newest old, the
// others 12 h apart before it: scheduled snapshots that stopped.
func WithEtcdSnapshotsAged(s State, newest time.Duration) State {
	ages := make([]time.Duration, len(healthyEtcdSnapshotAges))
	for i := range ages {
		ages[i] = newest + time.Duration(i)*12*time.Hour
	}
	setEtcdSnapshots(&s, s.Hostname, ages)
	return s
}

// WithoutEtcdSnapshots is an etcd server whose snapshot directory is empty.
func WithoutEtcdSnapshots(s State) State {
	setEtcdSnapshots(&s, s.Hostname, nil)
	return s
}

// WithEtcdSnapshotsDisabled sets etcd-disable-snapshots: true in
// config.yaml: RKE2 starts no snapshot cron (k3s pkg/etcd/etcd.go Start),
// so the snapshots taken before it are left, ageing.
func WithEtcdSnapshotsDisabled(s State) State {
	s.Files = hostFiles(s)
	s.Files[rke2Config] += "etcd-disable-snapshots: true\n"
	return WithEtcdSnapshotsAged(s, 9*24*time.Hour)
}

// WithEtcdS3 sets etcd-s3: true (and a bucket) in a config.yaml.d drop-in,
// where k3s pkg/configfilearg reads after config.yaml. Each scheduled
// snapshot is uploaded once taken (k3s pkg/etcd/snapshot.go), so S3 holds
// copies of the local ones.
func WithEtcdS3(s State) State {
	s.Files = hostFiles(s)
	s.Files["etc/rancher/rke2/config.yaml.d/50-etcd-s3.yaml"] = "etcd-s3: true\netcd-s3-bucket: " + etcdS3Bucket + "\netcd-s3-secret-key: s3cr3t-s3-key\n"
	s.EtcdS3Ages = slices.Clone(healthyEtcdSnapshotAges)
	return s
}

// etcdS3Bucket is the bucket WithEtcdS3 configures.
const etcdS3Bucket = "rke2-snapshots"

// WithEtcdS3UploadsFailing is an S3 server whose uploads stopped newest ago
// while its local snapshots go on: the newest copy in S3 is that old.
func WithEtcdS3UploadsFailing(s State, newest time.Duration) State {
	s = WithEtcdS3(s)
	s.EtcdS3Ages = []time.Duration{newest, newest + 12*time.Hour}
	return s
}

// KubectlETCDSnapshotFiles is the cluster probe's read of the
// ETCDSnapshotFile objects.
const KubectlETCDSnapshotFiles = "* get etcdsnapshotfiles.k3s.cattle.io -o jsonpath=*"

// etcdSnapshotFileLines answers KubectlETCDSnapshotFiles: an object per
// snapshot of every etcd server, local and S3 (k3s pkg/apis/k3s.cattle.io/v1
// types.go ETCDSnapshotFile: spec.s3 set only on an S3 one, spec.location a
// file:// or s3:// URI, status.creationTime RFC 3339 in UTC as metav1.Time
// marshals it, status.readyToUse), in the probe's jsonpath columns:
// spec.nodeName (the server that took it), bucket, location, creationTime,
// readyToUse. Times are against now.
func etcdSnapshotFileLines(fleet []Member, now time.Time) string {
	var b strings.Builder
	for _, m := range fleet {
		s := m.State
		if !runsEtcd(s) {
			continue
		}
		node := K8sNodeName(s.Hostname)
		for _, p := range slices.Sorted(maps.Keys(s.FileAges)) {
			if strings.HasPrefix(p, etcdSnapshotDir) {
				fmt.Fprintf(&b, "%s\t\tfile:///%s\t%s\ttrue\n", node, p, now.Add(-s.FileAges[p]).UTC().Format(time.RFC3339))
			}
		}
		for i, a := range s.EtcdS3Ages {
			fmt.Fprintf(&b, "%s\t%s\ts3://%s/etcd-snapshot-%s-%d\t%s\ttrue\n", node, etcdS3Bucket, etcdS3Bucket, node, i, now.Add(-a).UTC().Format(time.RFC3339))
		}
	}
	return b.String()
}

// WithEtcdNoLeader is a member cut off from its peers: etcd_server_has_leader
// 0 and /health false with RAFT NO LEADER.
func WithEtcdNoLeader(s State) State {
	m := HealthyEtcd()
	m.HasLeader = false
	m.LeaderChanges = 7
	setEtcdMetrics(&s, m)
	return s
}

// WithEtcdDBUsed fills etcd's database to pct percent of its quota.
func WithEtcdDBUsed(s State, pct int) State {
	m := HealthyEtcd()
	m.DBSize = m.Quota * int64(pct) / 100
	setEtcdMetrics(&s, m)
	return s
}

// WithoutEtcd is a server started with disable-etcd (a control-plane-only
// server): RKE2 writes no etcd static pod manifest (rancher/rke2
// pkg/executor/staticpod), nothing listens on 2381 and no snapshot is taken.
func WithoutEtcd(s State) State {
	s.Files = hostFiles(s)
	for p := range s.Files {
		if strings.HasPrefix(p, etcdSnapshotDir) || p == podManifests+"etcd.yaml" || p == etcdNameFile {
			delete(s.Files, p)
		}
	}
	s.FileAges = nil
	h := make(map[string]HTTP, len(s.HTTP))
	for k, v := range s.HTTP {
		if !strings.HasPrefix(k, "2381/") {
			h[k] = v
		}
	}
	s.HTTP = h
	s.Listening = slices.DeleteFunc(slices.Clone(s.Listening), func(p int) bool { return p == 2379 || p == 2380 || p == 2381 })
	s.Files[rke2Config] += "disable-etcd: true\n"
	return s
}

// runsEtcd says whether RKE2 runs etcd on the node: its static pod manifest.
func runsEtcd(s State) bool {
	_, ok := s.Files[podManifests+"etcd.yaml"]
	return ok
}
