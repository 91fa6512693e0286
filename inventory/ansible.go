package inventory

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// An Ansible inventory is read as Ansible reads it, into groups of hosts
// with variables at each level, and then resolved like a native one: the
// connection variables become settings, every other level of the chain is
// one level of the resolution (most specific first), and ssh_config fills
// what none of them sets.

// ansibleValue is one variable's value, whatever the source wrote it in
// (INI text, YAML or JSON), reduced to what a connection setting can be.
type ansibleValue struct {
	kind ansibleKind
	// s is the scalar as written (for a bool, its spelling).
	s    string
	list []string // kind == valueList
}

func (v ansibleValue) equal(w ansibleValue) bool {
	return v.kind == w.kind && v.s == w.s && slices.Equal(v.list, w.list)
}

type ansibleKind uint8

const (
	valueNull ansibleKind = iota
	valueString
	valueBool
	valueInt
	valueList
	valueOther // a mapping, or a list holding non-scalars
)

// ansibleVar is one variable as written at one level.
type ansibleVar struct {
	name  string
	value ansibleValue
	file  string
	line  int
	path  string // the field path in errors, e.g. "all.children.masters.vars.ansible_user"
	// flat is set on a host variable from a --list JSON's _meta.hostvars,
	// where ansible-inventory writes the variables of the host's groups
	// too: set there, a variable may be all's.
	flat bool
}

// ansibleVars are one level's variables; a later definition of a name in
// the same level replaces the earlier one, as Ansible's set_variable does.
type ansibleVars map[string]ansibleVar

func (v *ansibleVars) set(a ansibleVar) {
	if *v == nil {
		*v = ansibleVars{}
	}
	(*v)[a.name] = a
}

type ansibleGroup struct {
	name     string
	vars     ansibleVars
	children []string
	parents  []string
	file     string
	line     int
}

type ansibleHost struct {
	name   string
	vars   ansibleVars
	groups []string // the groups it is listed in directly, in file order
	file   string
	line   int
	path   string
}

// ansibleInventory is what an INI, YAML or JSON source declares.
type ansibleInventory struct {
	groups    map[string]*ansibleGroup
	hosts     map[string]*ansibleHost
	hostOrder []string
	// dir holds group_vars/ and host_vars/; "" when the source is not a
	// file (stdin, a host list).
	dir string
}

func newAnsibleInventory() *ansibleInventory {
	a := &ansibleInventory{groups: map[string]*ansibleGroup{}, hosts: map[string]*ansibleHost{}}
	a.group("all", "", 0)
	a.group("ungrouped", "", 0)
	a.child("all", "ungrouped")
	return a
}

// group returns the named group, declaring it at file:line the first time.
func (a *ansibleInventory) group(name, file string, line int) *ansibleGroup {
	g, ok := a.groups[name]
	if !ok {
		g = &ansibleGroup{name: name, file: file, line: line}
		a.groups[name] = g
	}
	return g
}

func (a *ansibleInventory) child(parent, child string) {
	p, c := a.group(parent, "", 0), a.group(child, "", 0)
	if !slices.Contains(p.children, child) {
		p.children = append(p.children, child)
		c.parents = append(c.parents, parent)
	}
}

// host adds name to group (declaring the host the first time) and merges
// vars into its own: a host listed twice keeps one set of variables, the
// later assignment of a name winning, as in Ansible.
func (a *ansibleInventory) host(group, name, file string, line int, path string, vars []ansibleVar) *ansibleHost {
	h, ok := a.hosts[name]
	if !ok {
		h = &ansibleHost{name: name, file: file, line: line, path: path}
		a.hosts[name] = h
		a.hostOrder = append(a.hostOrder, name)
	}
	if group != "" && !slices.Contains(h.groups, group) {
		h.groups = append(h.groups, group)
		a.group(group, file, line)
	}
	for _, v := range vars {
		h.vars.set(v)
	}
	return h
}

// finish puts every group that has no parent under all and every host in
// no group under ungrouped, as Ansible's InventoryData.reconcile_inventory
// does, and reports a group that contains itself.
func (a *ansibleInventory) finish(p *parser) {
	for _, name := range slices.Sorted(maps.Keys(a.groups)) {
		if g := a.groups[name]; name != "all" && len(g.parents) == 0 {
			a.child("all", name)
		}
	}
	for _, name := range a.hostOrder {
		if h := a.hosts[name]; len(h.groups) == 0 {
			h.groups = []string{"ungrouped"}
		}
	}
	// A cycle would make depth and ancestry endless; Ansible refuses it
	// too (Group.add_child: "Adding group ... would create a recursive
	// dependency loop").
	for _, name := range slices.Sorted(maps.Keys(a.groups)) {
		if a.reaches(name, name, map[string]bool{}) {
			g := a.groups[name]
			p.addIn(g.file, g.line, name, kindf(ErrInvalidValue, "group %q is its own descendant (children loop)", name))
			a.groups[name].children = nil
		}
	}
}

func (a *ansibleInventory) reaches(from, target string, seen map[string]bool) bool {
	for _, c := range a.groups[from].children {
		if c == target {
			return true
		}
		if !seen[c] {
			seen[c] = true
			if a.reaches(c, target, seen) {
				return true
			}
		}
	}
	return false
}

// depth is Ansible's Group.depth: all is 0, and a group is one deeper than
// its deepest parent.
func (a *ansibleInventory) depth(name string, memo map[string]int) int {
	if d, ok := memo[name]; ok {
		return d
	}
	memo[name] = 0 // a loop (already reported) ends here
	d := 0
	for _, p := range a.groups[name].parents {
		d = max(d, a.depth(p, memo)+1)
	}
	memo[name] = d
	return d
}

// hostGroups are every group h belongs to, directly or through children,
// except all, in Ansible's merge order (sort_groups: depth, then
// ansible_group_priority, then name), least specific first.
func (a *ansibleInventory) hostGroups(h *ansibleHost, memo map[string]int) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(g string) {
		if seen[g] {
			return
		}
		seen[g] = true
		for _, p := range a.groups[g].parents {
			walk(p)
		}
	}
	for _, g := range h.groups {
		walk(g)
	}
	delete(seen, "all")
	groups := slices.Collect(maps.Keys(seen))
	priority := func(g string) int {
		if v, ok := a.groups[g].vars["ansible_group_priority"]; ok {
			if n, err := strconv.Atoi(v.value.s); err == nil {
				return n
			}
		}
		return 1
	}
	slices.SortFunc(groups, func(x, y string) int {
		return cmp.Or(cmp.Compare(a.depth(x, memo), a.depth(y, memo)), cmp.Compare(priority(x), priority(y)), cmp.Compare(x, y))
	})
	return groups
}

// DefaultRoleMap maps the group names of the RKE2 layouts operators use to
// fleet-audit roles: rancherfederal/rke2-ansible (rke2_servers,
// rke2_agents), lablabs/ansible-role-rke2 (masters, workers) and the
// usual names of dedicated etcd and control-plane groups. A --role-map
// entry for the same group replaces its default.
var DefaultRoleMap = map[string]string{
	"rke2_servers":  "server",
	"rke2_agents":   "worker",
	"masters":       "server",
	"workers":       "worker",
	"etcd":          "etcd",
	"control_plane": "control-plane",
	"control-plane": "control-plane",
}

// ParseRoleMap reads "group=role,group=role" as --role-map takes it.
func ParseRoleMap(s string) (map[string]string, error) {
	m := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		group, role, ok := strings.Cut(part, "=")
		group, role = strings.TrimSpace(group), strings.TrimSpace(role)
		if !ok || group == "" {
			return nil, fmt.Errorf("role map entry %q: want GROUP=ROLE", part)
		}
		if err := checkRole(role); err != nil {
			return nil, fmt.Errorf("role map entry %q: %w", part, err)
		}
		m[group] = role
	}
	return m, nil
}

// fromAnsible resolves every host of a into the Inventory: each level of
// Ansible's variable precedence becomes one level of the chain resolve
// walks, so a value comes from where Ansible would take it, and says so.
func (p *parser) fromAnsible(a *ansibleInventory, roleMap map[string]string) *Inventory {
	a.finish(p)
	inv := &Inventory{File: p.file, Name: strings.TrimSuffix(filepath.Base(p.file), filepath.Ext(p.file))}
	if p.file == "" || p.file == stdinName {
		inv.Name = ""
	}
	roles := maps.Clone(DefaultRoleMap)
	maps.Copy(roles, roleMap)
	conv := p.conv
	vf := &varsFiles{p: p, conv: conv, dir: a.dir, levels: map[string]*level{}, raw: map[string]ansibleVars{}}

	// Each group's two levels are built once, so a bad value is reported
	// once, not once per host.
	groupLevel := map[string]*level{}
	for name, g := range a.groups {
		s := conv.settings(g.vars)
		if role, ok := roles[name]; ok {
			s.roles = field[[]string]{v: []string{role}, state: set, file: g.file, line: g.line, path: name}
		}
		groupLevel[name] = &level{label: "group:" + name, s: s}
	}
	memo := map[string]int{}
	if len(a.hostOrder) == 0 && len(p.errs) == 0 {
		p.add(0, "", kindf(ErrNoHosts, "the inventory lists no hosts"))
	}
	for _, name := range a.hostOrder {
		h := a.hosts[name]
		if err := checkName("host name", name); err != nil {
			p.addIn(h.file, h.line, h.path, err)
			continue
		}
		groups := a.hostGroups(h, memo)
		// Most specific first: host_vars/, the host's own variables,
		// group_vars/ for its groups (deepest first), group_vars/all,
		// then the inventory's own group variables in the same order and
		// all's last. This is VariableManager.get_vars with Ansible's
		// default VARIABLE_PRECEDENCE (all_inventory, groups_inventory,
		// all_plugins_inventory, ..., groups_plugins_inventory), host
		// vars and host_vars/ on top.
		var levels []level
		if l := vf.level("host_vars", name); l != nil {
			levels = append(levels, *l)
		}
		levels = append(levels, level{label: "host", s: conv.settings(h.vars)})
		for i := len(groups) - 1; i >= 0; i-- {
			if l := vf.level("group_vars", groups[i]); l != nil {
				levels = append(levels, *l)
			}
		}
		if l := vf.level("group_vars", "all"); l != nil {
			levels = append(levels, *l)
		}
		for i := len(groups) - 1; i >= 0; i-- {
			levels = append(levels, *groupLevel[groups[i]])
		}
		levels = append(levels, *groupLevel["all"])

		d := &hostDecl{name: name, line: h.line, path: h.path, file: h.file, levels: levels}
		host := p.resolve(d, nil)
		host.Groups = groups
		if len(h.groups) > 0 && h.groups[0] != "ungrouped" {
			host.Group = h.groups[0]
		}
		inv.Hosts = append(inv.Hosts, host)
	}
	inv.Change = p.ansibleChange(a, vf)
	inv.Warnings = conv.warnings()
	return inv
}
