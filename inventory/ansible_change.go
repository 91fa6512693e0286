package inventory

import (
	"maps"
	"slices"
	"strings"
)

// An Ansible inventory names the change ticket of a run (Inventory.Change)
// with fleet_audit_change_id, fleet_audit_change_title and
// fleet_audit_change_requested_by: the change keys of fleet-audit's own
// format behind a prefix, named like fleet_audit_roles. A ticket is one per
// run, so these are read from the all group alone. Set on a host or on any
// other group they are an error: Ansible would give that value to some
// hosts only, and taking one host's value for the whole run would
// misreport the change.

// ansibleChangePrefix followed by a change key (changeKeys) is a change
// variable.
const ansibleChangePrefix = "fleet_audit_change_"

// changeKeyOf is the change key the variable name sets, when it is a
// change variable.
func changeKeyOf(name string) (string, bool) {
	key, ok := strings.CutPrefix(name, ansibleChangePrefix)
	return key, ok && slices.Contains(changeKeys, key)
}

// changeHome is where a change variable belongs, in each source's words.
const changeHome = "set it for all ([all:vars], all: vars: or group_vars/all.yml)"

// ansibleChange reads the change variables of a and reports those set
// anywhere but all. It runs after every host was resolved, so vf holds
// every vars file the hosts read.
func (p *parser) ansibleChange(a *ansibleInventory, vf *varsFiles) Change {
	vf.level("group_vars", "all")
	// all's levels, least precedent first, merged by name as Ansible's
	// combine_vars does: the inventory's own vars, then group_vars/all
	// (VARIABLE_PRECEDENCE: all_inventory before all_plugins_inventory),
	// then what a --list JSON gave every host alike.
	var c Change
	for _, vars := range []ansibleVars{a.groups["all"].vars, vf.raw["group_vars/all"], p.flatChange(a)} {
		for _, v := range changeVars(vars) {
			key, _ := changeKeyOf(v.name)
			// Null is Ansible's None: it overrides a lower level with no
			// value, so the field is empty.
			s, _ := vf.conv.str(v)
			s, err := changeValue(v.name, s)
			if err != nil {
				p.addIn(v.file, v.line, v.path, err)
				continue
			}
			*c.field(key) = s
		}
	}

	// Every level, all's own first (where ""), each other one named as
	// an operator would look for it.
	type varsLevel struct {
		vars  ansibleVars
		where string
	}
	levels := []varsLevel{{vars: a.groups["all"].vars}, {vars: vf.raw["group_vars/all"]}}
	for _, name := range slices.Sorted(maps.Keys(a.groups)) {
		if name != "all" {
			levels = append(levels, varsLevel{a.groups[name].vars, "on group " + name})
		}
	}
	for _, name := range a.hostOrder {
		levels = append(levels, varsLevel{a.hosts[name].vars, "on host " + name})
	}
	for _, key := range slices.Sorted(maps.Keys(vf.raw)) {
		switch kind, name, _ := strings.Cut(key, "/"); {
		case key == "group_vars/all":
		case kind == "host_vars":
			levels = append(levels, varsLevel{vf.raw[key], "for host " + name + " (host_vars/)"})
		default:
			levels = append(levels, varsLevel{vf.raw[key], "for group " + name + " (group_vars/)"})
		}
	}
	valid := make([]string, len(changeKeys))
	for i, k := range changeKeys {
		valid[i] = ansibleChangePrefix + k
	}
	for _, l := range levels {
		for _, name := range slices.Sorted(maps.Keys(l.vars)) {
			v := l.vars[name]
			_, known := changeKeyOf(name)
			switch {
			case !strings.HasPrefix(name, ansibleChangePrefix):
			case !known:
				// A misspelt change variable would leave its field out of
				// every report without a word.
				hint := ""
				if s := suggestion(name, valid); s != "" {
					hint = " (did you mean " + s + "?)"
				}
				p.addIn(v.file, v.line, v.path, kindf(ErrUnknownKey, "unknown change variable %q%s; valid: %s", name, hint, strings.Join(valid, ", ")))
			case l.where != "" && !v.flat:
				p.addIn(v.file, v.line, v.path, kindf(ErrInvalidValue, "%s is set %s: a change ticket is one per run, not per host or group; %s", name, l.where, changeHome))
			}
		}
	}
	return c
}

// flatChange is the change variables of a --list JSON's _meta.hostvars,
// where ansible-inventory writes every variable a host has, all's
// included (lib/ansible/cli/inventory.py json_inventory: without --export
// each host's vars are VariableManager.get_vars, and groups get no vars).
// A variable every host has with one value is all's, as far as the JSON
// can tell; one that hosts lack or disagree on was set per host or group,
// and each host's definition is reported.
func (p *parser) flatChange(a *ansibleInventory) ansibleVars {
	type def struct {
		host string
		v    ansibleVar
	}
	byName := map[string][]def{}
	for _, h := range a.hostOrder {
		for _, v := range changeVars(a.hosts[h].vars) {
			if v.flat {
				byName[v.name] = append(byName[v.name], def{h, v})
			}
		}
	}
	out := ansibleVars{}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		defs := byName[name]
		alike := len(defs) == len(a.hostOrder)
		for _, d := range defs {
			alike = alike && d.v.value.equal(defs[0].v.value)
		}
		if alike {
			out.set(defs[0].v)
			continue
		}
		for _, d := range defs {
			p.addIn(d.v.file, d.v.line, d.v.path, kindf(ErrInvalidValue, "%s is set on host %s and not alike on every host of _meta.hostvars: a change ticket is one per run; %s", name, d.host, changeHome))
		}
	}
	return out
}

// changeVars are the change variables of vars, sorted by name.
func changeVars(vars ansibleVars) []ansibleVar {
	var out []ansibleVar
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		if _, ok := changeKeyOf(name); ok {
			out = append(out, vars[name])
		}
	}
	return out
}
