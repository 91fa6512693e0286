package report

import (
	"bytes"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The playbook (plan-ansible) is the one YAML report writes. It is encoded
// here, from structs, rather than with a YAML library, so that report
// stays a leaf over result (internal/archtest): block style, every string
// double-quoted with YAML's escapes, so that no value a node reported can
// end a scalar, start a comment or a mapping, or hold a character a YAML
// reader refuses. The subset: structs (fields named by a `yaml:"name"` tag,
// `,omitempty` skipping zero values, untagged fields skipped), pointers,
// slices, maps with string keys (in key order), strings, ints and bools.

// yamlTagged is a string type whose scalars carry a YAML tag (unsafeText:
// !unsafe).
type yamlTagged interface{ yamlTag() string }

var yamlTaggedType = reflect.TypeFor[yamlTagged]()

// yamlKey is a mapping key, unquoted when it is a name, as Ansible's
// keywords, variable names and module names (ansible.builtin.shell) are,
// and not one of the words YAML 1.1
// (PyYAML, which Ansible reads playbooks with: resolver.py) takes for a
// boolean or null.
func yamlKey(k string) string {
	switch k {
	case "y", "n", "yes", "no", "on", "off", "true", "false", "null":
		return yamlQuote(k)
	}
	if yamlName.MatchString(k) {
		return k
	}
	return yamlQuote(k)
}

var yamlName = regexp.MustCompile(`^[a-z_][a-z0-9_.]*$`)

// yamlEncode writes v as a YAML block document's content.
func yamlEncode(v any) ([]byte, error) {
	n, err := yamlNodeOf(reflect.ValueOf(v))
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	switch n.kind {
	case yamlSeq:
		yamlSeqAt(&b, n, 0)
	case yamlMap:
		yamlMapAt(&b, n, 0, false)
	default:
		b.WriteString(n.scalar + "\n")
	}
	return b.Bytes(), nil
}

type yamlKind int

const (
	yamlScalar yamlKind = iota
	yamlMap
	yamlSeq
)

type yamlNode struct {
	kind   yamlKind
	scalar string // rendered: quoted, tagged
	keys   []string
	items  []*yamlNode // a mapping's values, in keys' order, or a sequence's items
}

func yamlNodeOf(v reflect.Value) (*yamlNode, error) {
	if v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return &yamlNode{scalar: "null"}, nil
		}
		return yamlNodeOf(v.Elem())
	}
	switch v.Kind() {
	case reflect.String:
		s := yamlQuote(v.String())
		if v.Type().Implements(yamlTaggedType) {
			s = v.Interface().(yamlTagged).yamlTag() + " " + s
		}
		return &yamlNode{scalar: s}, nil
	case reflect.Bool:
		return &yamlNode{scalar: strconv.FormatBool(v.Bool())}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &yamlNode{scalar: strconv.FormatInt(v.Int(), 10)}, nil
	case reflect.Slice, reflect.Array:
		n := &yamlNode{kind: yamlSeq}
		for i := range v.Len() {
			item, err := yamlNodeOf(v.Index(i))
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, item)
		}
		return n, nil
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return nil, fmt.Errorf("yaml: map key type %s is not a string", v.Type().Key())
		}
		n := &yamlNode{kind: yamlMap}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		for _, k := range keys {
			item, err := yamlNodeOf(v.MapIndex(k))
			if err != nil {
				return nil, err
			}
			n.keys = append(n.keys, yamlKey(k.String()))
			n.items = append(n.items, item)
		}
		return n, nil
	case reflect.Struct:
		n := &yamlNode{kind: yamlMap}
		t := v.Type()
		for i := range t.NumField() {
			name, opts, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
			if name == "" || name == "-" {
				continue
			}
			f := v.Field(i)
			if opts == "omitempty" && f.IsZero() {
				continue
			}
			item, err := yamlNodeOf(f)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			n.keys = append(n.keys, yamlKey(name))
			n.items = append(n.items, item)
		}
		return n, nil
	}
	return nil, fmt.Errorf("yaml: cannot encode a %s", v.Kind())
}

// yamlMapAt writes a mapping whose keys are at indent; inline means its
// first key follows a sequence's "- " already written.
func yamlMapAt(b *bytes.Buffer, n *yamlNode, indent int, inline bool) {
	for i, k := range n.keys {
		if i > 0 || !inline {
			b.WriteString(strings.Repeat(" ", indent))
		}
		b.WriteString(k + ":")
		yamlValue(b, n.items[i], indent, false)
	}
}

// yamlSeqAt writes a sequence whose dashes are at indent.
func yamlSeqAt(b *bytes.Buffer, n *yamlNode, indent int) {
	for _, item := range n.items {
		b.WriteString(strings.Repeat(" ", indent) + "-")
		yamlValue(b, item, indent, true)
	}
}

// yamlValue writes v after its mapping key's "key:" or, inSeq, after its
// sequence's "-", both at indent: a scalar or an empty collection on the
// same line, a mapping or sequence below it, indented two more (a mapping
// under a dash starts on the dash's line).
func yamlValue(b *bytes.Buffer, v *yamlNode, indent int, inSeq bool) {
	switch {
	case v.kind == yamlScalar:
		b.WriteString(" " + v.scalar + "\n")
	case len(v.items) == 0 && v.kind == yamlMap:
		b.WriteString(" {}\n")
	case len(v.items) == 0:
		b.WriteString(" []\n")
	case v.kind == yamlMap && inSeq:
		b.WriteString(" ")
		yamlMapAt(b, v, indent+2, true)
	case v.kind == yamlMap:
		b.WriteString("\n")
		yamlMapAt(b, v, indent+2, false)
	default:
		b.WriteString("\n")
		yamlSeqAt(b, v, indent+2)
	}
}

// yamlQuote is s as a YAML double-quoted scalar. Printable characters
// stand as they are; the rest are escaped: YAML 1.1 and 1.2 define the
// same escapes used here (\\ \" \t \n \r \uXXXX; YAML 1.2 spec 5.7), and a
// reader refuses a character outside the printable set even quoted (spec
// 5.1: tab, line feed, carriage return, #x20-#x7E, #x85, #xA0-#xD7FF,
// #xE000-#xFFFD, #x10000-#x10FFFF; PyYAML, which Ansible reads playbooks
// with, checks it in reader.py, check_printable), so it must never reach
// the file raw. A byte that is not UTF-8 becomes U+FFFD.
func yamlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\uFFFD`)
		case r == 0x2028 || r == 0x2029 || r == 0xfeff:
			// Line and paragraph separators are line breaks to YAML 1.1
			// (PyYAML), which would fold them; a BOM marks a stream.
			fmt.Fprintf(&b, `\u%04X`, r)
		case r >= 0x20 && r <= 0x7e, r >= 0xa0 && r <= 0xd7ff, r >= 0xe000 && r <= 0xfffd, r >= 0x10000:
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, `\u%04X`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
