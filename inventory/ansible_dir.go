package inventory

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fleet-audit/fleet-audit/internal/shquote"
)

// ignoredInDir is what Ansible skips when a directory is the inventory
// source (lib/ansible/inventory/manager.py, IGNORED): hidden names, the
// vars directories host_vars, group_vars and vars_plugins, and names ending
// in an extension of INVENTORY_IGNORE_EXTS, whose default
// (lib/ansible/config/base.yml) is REJECT_EXTS (lib/ansible/constants.py)
// plus .orig, .cfg and .retry. ansible-core dropped .ini from that list in
// ansible/ansible#84001 (2024): an INI file in the directory is a source,
// as in current Ansible; releases before (2.14 among them) skip it.
// INVENTORY_IGNORE_PATTERNS is empty by default.
var ignoredInDir = regexp.MustCompile(`^\.|^host_vars$|^group_vars$|^vars_plugins$|(` +
	strings.Join(quoteAll(".pyc", ".pyo", ".swp", ".bak", "~", ".rpm", ".md", ".txt", ".rst", ".orig", ".cfg", ".retry"), "|") + `)$`)

func quoteAll(s ...string) []string {
	for i := range s {
		s[i] = regexp.QuoteMeta(s[i])
	}
	return s
}

// dirSources lists the inventory sources of dir as Ansible's parse_source
// walks it: the entries of each directory sorted by name (Python's sorted
// on the byte names, as Go's sort.Strings), those ignoredInDir skipped,
// subdirectories descended into in place.
func dirSources(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	var out []string
	for _, e := range entries { // os.ReadDir sorts by name
		if ignoredInDir.MatchString(e.Name()) {
			continue
		}
		full := filepath.Join(dir, e.Name())
		st, err := os.Stat(full)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", full, unwrapPathError(err))
		}
		if st.IsDir() {
			sub, err := dirSources(full)
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
			continue
		}
		out = append(out, full)
	}
	return out, nil
}

// loadDir reads a directory given as the inventory as Ansible does: every
// source in it (dirSources) into one inventory, a host declared in two
// files being one host, with the group_vars/ and host_vars/ of the
// directory itself (the vars plugin's basedir is the source when it is a
// directory: lib/ansible/plugins/vars/host_group_vars.py, and
// get_vars_from_inventory_sources in lib/ansible/vars/plugins.py).
func loadDir(dir string, opts LoadOptions) (*Inventory, error) {
	sources, err := dirSources(dir)
	if err != nil {
		return nil, errors.Join(&Error{File: dir, Err: fmt.Errorf("cannot read inventory directory: %w", err)})
	}
	p := newParser(dir, opts)
	if abs, err := filepath.Abs(dir); err == nil {
		p.baseDir = abs
	}
	a := newAnsibleInventory()
	read := 0
	for _, file := range sources {
		p.file = file
		data, err := readFile(file, maxInventorySize)
		if err != nil {
			p.add(0, "", fmt.Errorf("cannot read inventory: %w", err))
			continue
		}
		if p.dirSource(a, data) {
			read++
		}
	}
	p.file = dir
	if len(p.errs) == 0 && read == 0 {
		p.add(0, "", kindf(ErrNoHosts, "no inventory source in the directory (Ansible skips hidden files, host_vars/, group_vars/ and names ending in %s)",
			strings.Join(quoteAll(".orig", ".cfg", ".retry", ".md", ".txt", ".rst", ".bak", ".swp", "~"), ", ")))
	}
	if len(p.errs) > 0 {
		return p.result(nil)
	}
	a.dir = p.baseDir
	inv := p.fromAnsible(a, opts.RoleMap)
	if inv != nil {
		inv.Format = "ansible-dir"
	}
	return p.result(inv)
}

// dirSource parses one file of an inventory directory into a, as the
// first of Ansible's default plugins (INVENTORY_ENABLED: host_list,
// script, auto, yaml, ini) that takes it would; false when it holds no
// inventory (an empty file).
func (p *parser) dirSource(a *ansibleInventory, data []byte) bool {
	ext := strings.ToLower(filepath.Ext(p.file))
	yamlName := ext == ".yaml" || ext == ".yml" || ext == ".json"
	// The script plugin takes an executable file or one with a shebang
	// (lib/ansible/plugins/inventory/script.py, verify_file); fleet-audit
	// runs no program an inventory names.
	if st, err := os.Stat(p.file); (err == nil && st.Mode()&0o111 != 0) || bytes.HasPrefix(data, []byte("#!")) {
		p.add(0, "", kindf(ErrInvalidValue, "an inventory script, which fleet-audit does not run: %s", listHint(p.file)))
		return false
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return false
	}
	root, err := decodeYAML(data)
	mapping := err == nil && root != nil && deref(root) != nil && deref(root).Kind == yaml.MappingNode
	switch {
	case mapping && p.refusePlugin(root):
	case mapping && looksAnsible(root):
		p.parseAnsibleYAML(a, root)
	case mapping:
		p.add(0, "", kindf(ErrInvalidValue, "not an Ansible inventory: an inventory directory holds Ansible sources only (give a fleet-audit inventory alone with -i FILE)"))
	case yamlName && err != nil:
		line, _, e := syntaxError(data, err)
		p.add(line, "", e)
	case yamlName:
		p.add(0, "", kindf(ErrWrongType, "not an Ansible inventory: the top level is not a mapping of groups"))
	default:
		p.parseINI(a, data)
	}
	return true
}

// listHint is the one way into fleet-audit for an inventory only Ansible
// can produce: let ansible-inventory resolve it, and read its JSON.
func listHint(file string) string {
	return fmt.Sprintf("run ansible-inventory -i %s --list | fleet-audit run -i -", shquote.Readable(file))
}

// refusePlugin reports a YAML file whose top level has a plugin key: the
// configuration of an inventory plugin (aws_ec2, gcp_compute, constructed),
// which Ansible's auto plugin hands to the plugin it names
// (lib/ansible/plugins/inventory/auto.py, parse). Only Ansible can run
// it; its hosts come out of ansible-inventory --list, which fleet-audit
// reads. One line, in place of the native format's errors about every
// key of a file that was never meant as one.
func (p *parser) refusePlugin(root *yaml.Node) bool {
	root = deref(root)
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := deref(root.Content[i]), deref(root.Content[i+1])
		if k == nil || v == nil || k.Value != "plugin" || v.Kind != yaml.ScalarNode {
			continue
		}
		p.add(k.Line, "plugin", kindf(ErrInvalidValue, "an Ansible inventory plugin configuration (%s), which only Ansible can run: %s",
			v.Value, listHint(p.file)))
		return true
	}
	return false
}
