package inventory

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// ansibleConverter turns the connection variables of one level into
// settings, and remembers the variables it does not honour so they are
// listed once as a warning instead of silently ignored.
type ansibleConverter struct {
	p           *parser
	unsupported map[string]int // variable name → levels setting it
	sshOptions  map[string]int // ssh option in *_ssh_*_args → levels setting it
	vaulted     []string       // vars files encrypted with ansible-vault, not read
}

// fleetAuditRolesVar lists a host's or group's roles explicitly, for groups
// no role map covers; it adds to the roles that group membership gives.
const fleetAuditRolesVar = "fleet_audit_roles"

// ansibleIgnoredVars are ansible_ variables the loader reads for itself,
// so they are not "unused".
var ansibleIgnoredVars = map[string]bool{
	"ansible_group_priority": true, // the merge order itself reads it
}

// settings converts the variables of one level. Variables that are not
// Ansible's (rke2_config, node_labels...) are the playbook's business and
// are left alone; an ansible_ variable fleet-audit does not use is counted
// for the warning.
func (c *ansibleConverter) settings(vars ansibleVars) *settings {
	s := &settings{}
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		v := vars[name]
		c.one(s, v)
	}
	// The explicit variables win over what the ssh arguments say.
	for _, name := range []string{"ansible_ssh_common_args", "ansible_ssh_extra_args"} {
		if v, ok := vars[name]; ok {
			c.sshArgs(s, v)
		}
	}
	return s
}

func (c *ansibleConverter) one(s *settings, v ansibleVar) {
	p := c.p
	report := func(err error) { p.addIn(v.file, v.line, v.path, err) }
	str := func() (string, bool) { return c.str(v) }
	switch v.name {
	case "ansible_host", "ansible_ssh_host":
		if val, ok := str(); ok {
			if err := checkAddress(val); err != nil {
				report(err)
				s.address = fieldAt(v, "", bad)
				return
			}
			s.address = fieldAt(v, val, set)
		}
	case "ansible_port", "ansible_ssh_port":
		val, ok := str()
		if !ok {
			return
		}
		n, err := strconv.Atoi(val)
		if err != nil || n < 1 || n > 65535 {
			report(kindf(ErrInvalidValue, "%s must be from 1 to 65535, got %q", v.name, val))
			s.port = fieldAt(v, 0, bad)
			return
		}
		s.port = fieldAt(v, n, set)
	case "ansible_user", "ansible_ssh_user":
		if val, ok := str(); ok {
			if err := checkUser(val); err != nil {
				report(err)
				s.user = fieldAt(v, "", bad)
				return
			}
			s.user = fieldAt(v, val, set)
		}
	case "ansible_ssh_private_key_file", "ansible_private_key_file":
		if val, ok := str(); ok {
			// Ansible hands the path to ssh, so a relative one is relative
			// to the directory it runs in, not to the inventory.
			path, err := expandPath(val, p.home, p.workDir)
			if err != nil {
				report(err)
				s.identityFiles = fieldAt[[]string](v, nil, bad)
				return
			}
			s.identityFiles = fieldAt(v, []string{path}, set)
		}
	case "ansible_become":
		b, ok := ansibleBool(v.value)
		if !ok {
			report(kindf(ErrInvalidValue, "ansible_become must be a boolean (true/false, yes/no), got %s", v.value.describe()))
			s.become = fieldAt(v, "", bad)
			return
		}
		s.become = fieldAt(v, map[bool]string{true: "sudo", false: ""}[b], set)
	case "ansible_become_user":
		if val, ok := str(); ok {
			if err := checkBecomeUser(val); err != nil {
				report(err)
				return
			}
			// Ansible's default is root, which is what "" means here.
			if val == "root" {
				val = ""
			}
			s.becomeUser = fieldAt(v, val, set)
		}
	case "ansible_become_method":
		if val, ok := str(); ok && val != "sudo" {
			report(becomeMethodError("ansible_become_method", val))
		}
	case "ansible_connection":
		val, ok := str()
		if !ok {
			return
		}
		switch val {
		case "local":
			s.connection = fieldAt(v, "local", set)
		case "ssh", "smart", "paramiko", "paramiko_ssh", "ansible.builtin.ssh", "ansible.builtin.paramiko_ssh":
			s.connection = fieldAt(v, "ssh", set)
		default:
			report(kindf(ErrInvalidValue, "ansible_connection %q is not supported: fleet-audit reaches nodes over ssh or runs locally (local)", val))
			s.connection = fieldAt(v, "", bad)
		}
	case "ansible_ssh_common_args", "ansible_ssh_extra_args":
		// settings reads these after every other variable.
	case fleetAuditRolesVar:
		var roles []string
		switch v.value.kind {
		case valueList:
			roles = v.value.list
		case valueString:
			for _, r := range strings.Split(v.value.s, ",") {
				if r = strings.TrimSpace(r); r != "" {
					roles = append(roles, r)
				}
			}
		default:
			report(kindf(ErrWrongType, "%s must be a list of roles or a comma-separated string, got %s", v.name, v.value.describe()))
			return
		}
		for _, r := range roles {
			if err := checkRole(r); err != nil {
				report(err)
				return
			}
		}
		s.roles = fieldAt(v, roles, set)
	default:
		if strings.HasPrefix(v.name, "ansible_") && !ansibleIgnoredVars[v.name] {
			c.unsupported[v.name]++
		}
	}
}

// str is v as a string setting: false, reported, when v is a Jinja
// template or not a scalar; false, silently, when v is null.
func (c *ansibleConverter) str(v ansibleVar) (string, bool) {
	switch v.value.kind {
	case valueString, valueInt:
		if strings.Contains(v.value.s, "{{") || strings.Contains(v.value.s, "{%") {
			// A host's own file is the usual home of a value a template
			// computed per host; the change ticket has no per-host home.
			fix := " (or set it with a host_vars/ file)"
			if _, ok := changeKeyOf(v.name); ok {
				fix = ""
			}
			c.p.addIn(v.file, v.line, v.path, kindf(ErrInvalidValue, "%s is a Jinja template; fleet-audit does not evaluate templates, write the value itself%s", v.name, fix))
			return "", false
		}
		return v.value.s, true
	case valueNull:
		return "", false
	}
	c.p.addIn(v.file, v.line, v.path, kindf(ErrWrongType, "%s must be a string, got %s", v.name, v.value.describe()))
	return "", false
}

// ansibleBool is Ansible's boolean() filter over the values it accepts
// (module_utils/parsing/convert_bool.py BOOLEANS_TRUE/BOOLEANS_FALSE).
func ansibleBool(v ansibleValue) (bool, bool) {
	switch strings.ToLower(v.s) {
	case "y", "yes", "on", "1", "true", "t", "1.0":
		return true, v.kind != valueList && v.kind != valueOther
	case "n", "no", "off", "0", "false", "f", "0.0":
		return false, v.kind != valueList && v.kind != valueOther
	}
	return false, false
}

func (v ansibleValue) describe() string {
	switch v.kind {
	case valueNull:
		return "null"
	case valueList:
		return "a list"
	case valueOther:
		return "a mapping or nested list"
	case valueBool:
		return "boolean " + v.s
	case valueInt:
		return "integer " + v.s
	}
	return fmt.Sprintf("%q", v.s)
}

// warnings are the lines the loader reports once for the whole inventory.
func (c *ansibleConverter) warnings() []string {
	var out []string
	if len(c.unsupported) > 0 {
		out = append(out, "inventory: ignored Ansible variables fleet-audit does not use: "+strings.Join(slices.Sorted(maps.Keys(c.unsupported)), ", "))
	}
	if len(c.sshOptions) > 0 {
		out = append(out, "inventory: ignored ssh options fleet-audit does not use: "+strings.Join(slices.Sorted(maps.Keys(c.sshOptions)), ", "))
	}
	if len(c.vaulted) > 0 {
		out = append(out, "inventory: skipped vars files encrypted with ansible-vault (fleet-audit cannot read them; connection variables in them are not applied): "+strings.Join(c.vaulted, ", "))
	}
	return out
}

// fieldAt is a setting read from v, stamped with where v was written.
func fieldAt[T any](v ansibleVar, val T, st state) field[T] {
	return field[T]{v: val, state: st, file: v.file, line: v.line, path: v.path}
}
