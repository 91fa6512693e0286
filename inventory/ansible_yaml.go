package inventory

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// ansibleGroupKeys are the keys of a group in Ansible's YAML inventory
// (lib/ansible/plugins/inventory/yaml.py) and in the JSON of
// ansible-inventory --list or an inventory script.
var ansibleGroupKeys = []string{"hosts", "children", "vars"}

// looksAnsible says whether a YAML or JSON root is an Ansible inventory
// rather than a native one: native inventories have name, defaults, groups
// and hosts at the top, Ansible ones group names (all, or groups whose
// values hold only hosts, children and vars) and, from --list, _meta.
func looksAnsible(root *yaml.Node) bool {
	root = deref(root)
	if root == nil || root.Kind != yaml.MappingNode {
		return false
	}
	sawGroup := false
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := deref(root.Content[i]), deref(root.Content[i+1])
		if k == nil || v == nil {
			return false
		}
		switch k.Value {
		case "name", "defaults", "groups", "hosts":
			return false
		case "all", "_meta":
			sawGroup = true
			continue
		}
		if isNull(v) {
			continue
		}
		if v.Kind != yaml.MappingNode {
			return false
		}
		for j := 0; j < len(v.Content); j += 2 {
			if !slices.Contains(ansibleGroupKeys, v.Content[j].Value) {
				return false
			}
			sawGroup = true
		}
	}
	return sawGroup
}

// parseAnsibleYAML reads the YAML inventory plugin's format, and the JSON
// of ansible-inventory --list (where hosts and children are lists and
// _meta.hostvars holds each host's variables).
func (p *parser) parseAnsibleYAML(a *ansibleInventory, root *yaml.Node) {
	var meta *yaml.Node
	for _, e := range p.entries(root, "", "the inventory") {
		if e.key == "_meta" {
			meta = e.v
			continue
		}
		p.ansibleGroup(a, e.key, e.v, e.path, e.k.Line)
	}
	if meta == nil {
		return
	}
	for _, e := range p.entries(meta, "_meta", "_meta") {
		if e.key != "hostvars" {
			continue
		}
		for _, he := range p.entries(e.v, e.path, "_meta.hostvars") {
			vars := p.ansibleVarsOf(he.v, he.path, p.file)
			for i := range vars {
				vars[i].flat = true
			}
			// hostvars names hosts that may be in no group: Ansible adds
			// them to ungrouped.
			a.host("", he.key, p.file, he.k.Line, he.path, vars)
		}
	}
}

func (p *parser) ansibleGroup(a *ansibleInventory, name string, n *yaml.Node, path string, line int) {
	g := a.group(name, p.file, line)
	for _, e := range p.entries(n, path, "a group") {
		switch e.key {
		case "vars":
			for _, v := range p.ansibleVarsOf(e.v, e.path, p.file) {
				g.vars.set(v)
			}
		case "hosts":
			p.ansibleHosts(a, name, e.v, e.path)
		case "children":
			v := deref(e.v)
			if v != nil && v.Kind == yaml.SequenceNode {
				for _, c := range v.Content {
					if c = deref(c); c != nil && c.Kind == yaml.ScalarNode {
						a.group(c.Value, p.file, c.Line)
						a.child(name, c.Value)
					}
				}
				continue
			}
			for _, ce := range p.entries(e.v, e.path, "children") {
				a.group(ce.key, p.file, ce.k.Line)
				a.child(name, ce.key)
				p.ansibleGroup(a, ce.key, ce.v, ce.path, ce.k.Line)
			}
		default:
			p.unknownKeyOf(e, ansibleGroupKeys, "an Ansible group")
		}
	}
}

func (p *parser) ansibleHosts(a *ansibleInventory, group string, n *yaml.Node, path string) {
	n = deref(n)
	if n != nil && n.Kind == yaml.SequenceNode {
		for i, h := range n.Content {
			if h = deref(h); h == nil || h.Kind != yaml.ScalarNode {
				p.add(n.Line, path, kindf(ErrWrongType, "hosts[%d] must be a host name", i))
				continue
			}
			p.ansibleHostPattern(a, group, h.Value, h.Line, joinPath(path, h.Value), nil)
		}
		return
	}
	for _, e := range p.entries(n, path, "hosts") {
		p.ansibleHostPattern(a, group, e.key, e.k.Line, e.path, p.ansibleVarsOf(e.v, e.path, p.file))
	}
}

func (p *parser) ansibleHostPattern(a *ansibleInventory, group, pattern string, line int, path string, vars []ansibleVar) {
	names, port, err := expandHostPattern(pattern)
	if err != nil {
		p.add(line, path, err)
		return
	}
	if port != "" {
		vars = append([]ansibleVar{{name: "ansible_port", value: ansibleValue{kind: valueInt, s: port}, file: p.file, line: line, path: path}}, vars...)
	}
	for _, name := range names {
		a.host(group, name, p.file, line, path, vars)
	}
}

// ansibleVarsOf reads a mapping of variables; file is where n was read.
func (p *parser) ansibleVarsOf(n *yaml.Node, path, file string) []ansibleVar {
	var out []ansibleVar
	for _, e := range p.entries(n, path, "vars") {
		out = append(out, ansibleVar{name: e.key, value: yamlValue(e.v), file: file, line: e.v.Line, path: e.path})
	}
	return out
}

// yamlValue reduces a YAML node to what a connection setting can be.
func yamlValue(n *yaml.Node) ansibleValue {
	n = deref(n)
	switch {
	case n == nil || isNull(n):
		return ansibleValue{kind: valueNull}
	case n.Kind == yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!bool":
			return ansibleValue{kind: valueBool, s: n.Value}
		case "!!int":
			return ansibleValue{kind: valueInt, s: n.Value}
		case "!!str", "!!float":
			return ansibleValue{kind: valueString, s: n.Value}
		}
		// !vault and other tags: not a value fleet-audit can use.
		return ansibleValue{kind: valueOther}
	case n.Kind == yaml.SequenceNode:
		v := ansibleValue{kind: valueList}
		for _, c := range n.Content {
			c = deref(c)
			if c == nil || c.Kind != yaml.ScalarNode {
				return ansibleValue{kind: valueOther}
			}
			v.list = append(v.list, c.Value)
		}
		return v
	}
	return ansibleValue{kind: valueOther}
}

// unknownKeyOf reports an unknown key with a suggestion, for formats
// other than the native one.
func (p *parser) unknownKeyOf(e entry, allowed []string, what string) {
	hint := ""
	if s := suggestion(e.key, allowed); s != "" {
		hint = " (did you mean " + s + "?)"
	}
	p.add(e.k.Line, e.path, kindf(ErrUnknownKey, "unknown key %q in %s%s; valid keys: %s", e.key, what, hint, strings.Join(allowed, ", ")))
}

// varsFiles reads group_vars/ and host_vars/ next to the inventory, as
// Ansible's host_group_vars vars plugin does with DataLoader.find_vars_files:
// NAME, NAME.yml, NAME.yaml or NAME.json (the first that exists), or a
// directory NAME/ whose files (recursively, sorted, skipping hidden files,
// backups ending in ~ and other extensions) are merged in order.
type varsFiles struct {
	p      *parser
	conv   *ansibleConverter
	dir    string
	levels map[string]*level
	// raw are the variables of each kind/name read, for what is checked
	// by level rather than resolved per host (the change variables).
	raw map[string]ansibleVars
}

var varsExtensions = []string{"", ".yml", ".yaml", ".json"}

func (vf *varsFiles) level(kind, name string) *level {
	if vf.dir == "" {
		return nil
	}
	key := kind + "/" + name
	if l, ok := vf.levels[key]; ok {
		return l
	}
	vf.levels[key] = nil
	base := filepath.Join(vf.dir, kind, name)
	var files []string
	label := ""
	for _, ext := range varsExtensions {
		st, err := os.Stat(base + ext)
		if err != nil {
			continue
		}
		label = filepath.Join(kind, name+ext)
		if st.IsDir() {
			files = varsDirFiles(base + ext)
			label += "/"
		} else {
			files = []string{base + ext}
		}
		break
	}
	if len(files) == 0 {
		return nil
	}
	vars := ansibleVars{}
	for _, f := range files {
		for _, v := range vf.read(f) {
			vars.set(v)
		}
	}
	vf.raw[key] = vars
	l := &level{label: label, s: vf.conv.settings(vars)}
	vf.levels[key] = l
	return l
}

func varsDirFiles(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || strings.HasSuffix(name, "~") {
			continue
		}
		full := filepath.Join(dir, name)
		ext := filepath.Ext(name)
		switch {
		case e.IsDir() && ext == "":
			out = append(out, varsDirFiles(full)...)
		case !e.IsDir() && slices.Contains(varsExtensions, ext):
			out = append(out, full)
		}
	}
	return out
}

// read parses one vars file; problems are reported against that file.
func (vf *varsFiles) read(file string) []ansibleVar {
	p := vf.p
	data, err := readFile(file, maxInventorySize)
	if err != nil {
		p.addIn(file, 0, "", kindf(ErrInvalidValue, "cannot read vars file: %v", err))
		return nil
	}
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("$ANSIBLE_VAULT;")) {
		vf.conv.vaulted = append(vf.conv.vaulted, vf.rel(file))
		return nil
	}
	root, err := decodeYAML(data)
	if err != nil {
		line, _, e := syntaxError(data, err)
		p.addIn(file, line, "", e)
		return nil
	}
	if root == nil {
		return nil
	}
	saved := p.curFile
	p.curFile = file
	defer func() { p.curFile = saved }()
	return p.ansibleVarsOf(root, "", file)
}

func (vf *varsFiles) rel(file string) string {
	if r, err := filepath.Rel(vf.dir, file); err == nil {
		return r
	}
	return file
}
