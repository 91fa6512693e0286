package inventory

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// INI inventories as Ansible's ini inventory plugin reads them
// (lib/ansible/plugins/inventory/ini.py): hosts outside any section are
// ungrouped; [g] lists hosts, [g:children] groups, [g:vars] one key=value
// per line; host lines are shlex-split with # comments, the first token a
// host pattern (name[:port], with [a:b] ranges), the rest key=value.
var (
	iniSection   = regexp.MustCompile(`^\[([^:\]\s]+)(?::(\w+))?\]\s*(?:[#;].*)?$`)
	iniGroupName = regexp.MustCompile(`^([^:\]\s]+)\s*(?:[#;].*)?$`)
)

func (p *parser) parseINI(a *ansibleInventory, data []byte) {
	type pending struct {
		line    int
		state   string
		parents []string
	}
	declared := map[string]bool{"all": true, "ungrouped": true}
	waiting := map[string]*pending{}
	group, state := "ungrouped", "hosts"
	for i, raw := range strings.Split(string(data), "\n") {
		line := i + 1
		text := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
		if text == "" || text[0] == '#' || text[0] == ';' {
			continue
		}
		if m := iniSection.FindStringSubmatch(text); m != nil {
			group, state = m[1], m[2]
			if state == "" {
				state = "hosts"
			}
			if state != "hosts" && state != "children" && state != "vars" {
				p.add(line, "["+group+":"+state+"]", kindf(ErrSyntax, "section [%s:%s] has unknown type %q (want children or vars)", group, state, state))
				state = "skip"
				continue
			}
			if !declared[group] && state != "vars" {
				declared[group] = true
				if w, ok := waiting[group]; ok && w.state == "children" {
					for _, parent := range w.parents {
						a.child(parent, group)
					}
				}
				delete(waiting, group)
			}
			if !declared[group] && state == "vars" {
				if _, ok := waiting[group]; !ok {
					waiting[group] = &pending{line: line, state: "vars"}
				}
			}
			a.group(group, p.file, line)
			continue
		}
		if strings.HasPrefix(text, "[") && strings.HasSuffix(text, "]") {
			p.add(line, "", kindf(ErrSyntax, "invalid section %q: no spaces or other characters are allowed around the group name", text))
			state = "skip"
			continue
		}
		switch state {
		case "skip":
		case "hosts":
			p.iniHostLine(a, group, text, line)
		case "vars":
			key, value, ok := strings.Cut(text, "=")
			if !ok {
				p.add(line, "["+group+":vars]", kindf(ErrSyntax, "expected key=value, got %q", text))
				continue
			}
			key = strings.TrimSpace(key)
			a.group(group, p.file, line).vars.set(ansibleVar{name: key, value: iniValue(strings.TrimSpace(value)), file: p.file, line: line, path: "[" + group + ":vars]." + key})
		case "children":
			m := iniGroupName.FindStringSubmatch(text)
			if m == nil {
				p.add(line, "["+group+":children]", kindf(ErrSyntax, "expected a group name, got %q", text))
				continue
			}
			child := m[1]
			if declared[child] {
				a.child(group, child)
				continue
			}
			w, ok := waiting[child]
			if !ok || w.state == "vars" {
				w = &pending{line: line, state: "children"}
				waiting[child] = w
			}
			w.parents = append(w.parents, group)
		}
	}
	for name, w := range waiting {
		if w.state == "vars" {
			p.add(w.line, "["+name+":vars]", kindf(ErrInvalidValue, "section [%s:vars] is for a group declared nowhere: add [%s] or list it under some [group:children]", name, name))
		} else {
			p.add(w.line, "["+w.parents[len(w.parents)-1]+":children]", kindf(ErrInvalidValue, "child group %q is declared nowhere: add a [%s] section", name, name))
		}
	}
}

// iniHostLine reads "pattern [key=value ...]" into group.
func (p *parser) iniHostLine(a *ansibleInventory, group, text string, line int) {
	tokens, err := shlexSplit(text, true)
	if err != nil {
		p.add(line, "", kindf(ErrSyntax, "host line %q: %v", text, err))
		return
	}
	if len(tokens) == 0 {
		return
	}
	names, port, err := expandHostPattern(tokens[0])
	if err != nil {
		p.add(line, tokens[0], err)
		return
	}
	var vars []ansibleVar
	for _, t := range tokens[1:] {
		key, value, ok := strings.Cut(t, "=")
		if !ok {
			p.add(line, tokens[0], kindf(ErrSyntax, "expected key=value host variable, got %q", t))
			return
		}
		vars = append(vars, ansibleVar{name: key, value: iniValue(value), file: p.file, line: line, path: tokens[0] + "." + key})
	}
	if port != "" {
		vars = append([]ansibleVar{{name: "ansible_port", value: ansibleValue{kind: valueInt, s: port}, file: p.file, line: line, path: tokens[0]}}, vars...)
	}
	for _, name := range names {
		a.host(group, name, p.file, line, name, vars)
	}
}

// iniValue types an INI value the way Ansible's _parse_value does with
// ast.literal_eval, as far as a connection setting can tell: integers,
// Python booleans, quoted strings (quotes removed); anything else is the
// string as written.
func iniValue(s string) ansibleValue {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return ansibleValue{kind: valueString, s: s[1 : len(s)-1]}
	}
	if _, err := strconv.Atoi(s); err == nil {
		return ansibleValue{kind: valueInt, s: s}
	}
	switch s {
	case "True", "False":
		return ansibleValue{kind: valueBool, s: s}
	case "None":
		return ansibleValue{kind: valueNull}
	}
	if (strings.HasPrefix(s, "[") || strings.HasPrefix(s, "{")) && !strings.HasPrefix(s, "{{") {
		return ansibleValue{kind: valueOther, s: s}
	}
	return ansibleValue{kind: valueString, s: s}
}

// expandHostPattern splits "name[:port]" and expands the [a:b] ranges of
// name, as Ansible's parse_address(allow_ranges=True) and
// expand_hostname_range (lib/ansible/plugins/inventory/__init__.py) do.
func expandHostPattern(pattern string) ([]string, string, error) {
	name, port := pattern, ""
	switch {
	case strings.HasPrefix(pattern, "[") && strings.Contains(pattern, "]:") && strings.Count(pattern, ":") > 2:
		// [IPv6]:port
		end := strings.LastIndex(pattern, "]:")
		name, port = pattern[1:end], pattern[end+2:]
	case strings.Count(stripRanges(pattern), ":") == 1:
		i := strings.LastIndex(pattern, ":")
		name, port = pattern[:i], pattern[i+1:]
		if port == "" {
			return nil, "", kindf(ErrInvalidValue, "host pattern %q ends in ':', which is reserved for a port", pattern)
		}
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, "", kindf(ErrInvalidValue, "host pattern %q: port must be from 1 to 65535, got %q", pattern, port)
		}
	}
	if name == "---" {
		return nil, "", kindf(ErrSyntax, "host pattern %q is a YAML document marker: is this a YAML inventory with a syntax error?", pattern)
	}
	hosts, err := expandRanges(name)
	if err != nil {
		return nil, "", fmt.Errorf("host pattern %q: %w", pattern, err)
	}
	return hosts, port, nil
}

// stripRanges removes the [..] parts, whose colons are not a port's.
func stripRanges(s string) string {
	var b strings.Builder
	depth := 0
	for _, c := range s {
		switch {
		case c == '[':
			depth++
		case c == ']':
			depth--
		case depth == 0:
			b.WriteRune(c)
		}
	}
	return b.String()
}

const maxRangeHosts = 100000

// expandRanges is expand_hostname_range: the first [beg:end(:step)] is
// expanded (numbers, zero-padded when beg has a leading zero and the same
// width as end, or single letters), then the rest of each result in turn.
func expandRanges(s string) ([]string, error) {
	open := strings.IndexByte(s, '[')
	if open < 0 {
		return []string{s}, nil
	}
	closeAt := strings.IndexByte(s[open:], ']')
	if closeAt < 0 {
		return nil, kindf(ErrInvalidValue, "unclosed [ in host range")
	}
	head, spec, tail := s[:open], s[open+1:open+closeAt], s[open+closeAt+1:]
	bounds := strings.Split(spec, ":")
	if len(bounds) != 2 && len(bounds) != 3 {
		return nil, kindf(ErrInvalidValue, "host range must be begin:end or begin:end:step, got [%s]", spec)
	}
	beg, end, step := bounds[0], bounds[1], 1
	if len(bounds) == 3 {
		n, err := strconv.Atoi(bounds[2])
		if err != nil || n < 1 {
			return nil, kindf(ErrInvalidValue, "host range step must be a positive integer, got %q", bounds[2])
		}
		step = n
	}
	if beg == "" {
		beg = "0"
	}
	if end == "" {
		return nil, kindf(ErrInvalidValue, "host range must specify an end value")
	}
	var seq []string
	if isLetter(beg) && isLetter(end) {
		b, e := letterIndex(beg), letterIndex(end)
		if b > e {
			return nil, kindf(ErrInvalidValue, "host range must have begin <= end")
		}
		for i := b; i <= e; i += step {
			seq = append(seq, string(asciiLetters[i]))
		}
	} else {
		width := 0
		if beg[0] == '0' && len(beg) > 1 {
			width = len(beg)
			if width != len(end) {
				return nil, kindf(ErrInvalidValue, "host range must specify equal-length begin and end formats, got [%s]", spec)
			}
		}
		b, err1 := strconv.Atoi(beg)
		e, err2 := strconv.Atoi(end)
		if err := errors.Join(err1, err2); err != nil {
			return nil, kindf(ErrInvalidValue, "host range [%s] is neither numbers nor single letters", spec)
		}
		if b > e {
			return nil, kindf(ErrInvalidValue, "host range must have begin <= end")
		}
		if (e-b)/step+1 > maxRangeHosts {
			return nil, kindf(ErrInvalidValue, "host range [%s] names more than %d hosts", spec, maxRangeHosts)
		}
		for i := b; i <= e; i += step {
			seq = append(seq, fmt.Sprintf("%0*d", width, i))
		}
	}
	var out []string
	for _, mid := range seq {
		rest, err := expandRanges(tail)
		if err != nil {
			return nil, err
		}
		for _, r := range rest {
			out = append(out, head+mid+r)
			if len(out) > maxRangeHosts {
				return nil, kindf(ErrInvalidValue, "host ranges name more than %d hosts", maxRangeHosts)
			}
		}
	}
	return out, nil
}

// asciiLetters is Python's string.ascii_letters, whose order letter
// ranges follow ([a:C] runs through the lower case into the upper).
const asciiLetters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

func isLetter(s string) bool   { return len(s) == 1 && strings.Contains(asciiLetters, s) }
func letterIndex(s string) int { return strings.Index(asciiLetters, s) }

// shlexSplit splits s as Python's shlex.split(s, comments=comments) in
// POSIX mode: whitespace separates words, single quotes keep everything,
// double quotes keep all but \" \\ \$ \` escapes, a backslash outside
// quotes escapes the next character, and with comments a # at the start
// of a word ends the line.
func shlexSplit(s string, comments bool) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '#' && comments && !inWord:
			return words, nil
		case c == '\\':
			if i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			}
			inWord = true
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("no closing quotation")
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("no closing quotation")
			}
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
