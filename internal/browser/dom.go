package browser

import (
	"fmt"
	"html"
	"strings"
)

// DOM is a page as Chromium serialized it with --dump-dom: its elements in
// document order and its text. The serializer's output is regular (every
// attribute value double-quoted with ", <, > and & escaped, every text
// node escaped except inside raw-text elements), which is what lets this
// small reader be exact without an HTML parser: markup that came from node
// data and was rendered inert is text here, never an element.
type DOM struct {
	Elements []*Element
	// Text is the unescaped text of the page outside <style> and
	// <script>, with each element boundary as a space.
	Text string
}

// Element is one element of the page.
type Element struct {
	Tag    string            // lower case
	Attrs  map[string]string // names lower case, values unescaped
	Parent *Element          // nil for the root
	// Text is the unescaped text inside the element, as in DOM.Text.
	Text string
}

// void elements have no end tag and no content.
var void = map[string]bool{"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true, "img": true, "input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true}

// rawText are the elements whose content the serializer writes unescaped.
var rawText = map[string]bool{"style": true, "script": true, "xmp": true, "iframe": true, "noembed": true, "noframes": true, "plaintext": true, "noscript": true}

// ParseDOM reads the output of DumpDOM.
func ParseDOM(s string) (*DOM, error) {
	d := &DOM{}
	var text strings.Builder
	type open struct {
		el    *Element
		start int // offset in text
	}
	var stack []open
	closeTo := func(tag string) error {
		for j := len(stack) - 1; j >= 0; j-- {
			if stack[j].el.Tag == tag {
				for k := len(stack) - 1; k >= j; k-- {
					stack[k].el.Text = text.String()[stack[k].start:]
				}
				stack = stack[:j]
				return nil
			}
		}
		return fmt.Errorf("</%s> without <%s>", tag, tag)
	}
	for i := 0; i < len(s); {
		lt := strings.IndexByte(s[i:], '<')
		if lt < 0 {
			text.WriteString(html.UnescapeString(s[i:]))
			break
		}
		text.WriteString(html.UnescapeString(s[i : i+lt]))
		i += lt
		switch {
		case strings.HasPrefix(s[i:], "<!--"):
			end := strings.Index(s[i:], "-->")
			if end < 0 {
				return nil, fmt.Errorf("offset %d: unterminated comment", i)
			}
			i += end + len("-->")
			continue
		case strings.HasPrefix(s[i:], "<!"):
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				return nil, fmt.Errorf("offset %d: unterminated doctype", i)
			}
			i += end + 1
			continue
		case strings.HasPrefix(s[i:], "</"):
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				return nil, fmt.Errorf("offset %d: unterminated end tag", i)
			}
			text.WriteByte(' ')
			if err := closeTo(strings.ToLower(strings.TrimSpace(s[i+2 : i+end]))); err != nil {
				return nil, fmt.Errorf("offset %d: %w", i, err)
			}
			i += end + 1
			continue
		}
		el, n, err := readTag(s[i:])
		if err != nil {
			return nil, fmt.Errorf("offset %d: %w", i, err)
		}
		i += n
		text.WriteByte(' ')
		if len(stack) > 0 {
			el.Parent = stack[len(stack)-1].el
		}
		d.Elements = append(d.Elements, el)
		if !void[el.Tag] {
			stack = append(stack, open{el, text.Len()})
		}
		if rawText[el.Tag] {
			end := strings.Index(strings.ToLower(s[i:]), "</"+el.Tag)
			if end < 0 {
				return nil, fmt.Errorf("offset %d: <%s> not closed", i, el.Tag)
			}
			i += end
		}
	}
	if len(stack) > 0 {
		return nil, fmt.Errorf("<%s> not closed", stack[len(stack)-1].el.Tag)
	}
	d.Text = text.String()
	return d, nil
}

// readTag reads the start tag at the beginning of s and returns its length.
func readTag(s string) (*Element, int, error) {
	el := &Element{Attrs: map[string]string{}}
	i := 1
	name := func() string {
		start := i
		for i < len(s) && !strings.ContainsRune(" \t\n\f\r/>=", rune(s[i])) {
			i++
		}
		return strings.ToLower(s[start:i])
	}
	el.Tag = name()
	if el.Tag == "" {
		return el, 0, fmt.Errorf("'<' not starting a tag")
	}
	for {
		for i < len(s) && strings.ContainsRune(" \t\n\f\r/", rune(s[i])) {
			i++
		}
		if i >= len(s) {
			return el, 0, fmt.Errorf("<%s> not terminated", el.Tag)
		}
		if s[i] == '>' {
			return el, i + 1, nil
		}
		key := name()
		if key == "" {
			return el, 0, fmt.Errorf("<%s>: unexpected %q", el.Tag, s[i])
		}
		val := ""
		if i < len(s) && s[i] == '=' {
			if i+1 >= len(s) || s[i+1] != '"' {
				return el, 0, fmt.Errorf("<%s %s=>: value not double-quoted", el.Tag, key)
			}
			end := strings.IndexByte(s[i+2:], '"')
			if end < 0 {
				return el, 0, fmt.Errorf("<%s %s=>: value not terminated", el.Tag, key)
			}
			val = html.UnescapeString(s[i+2 : i+2+end])
			i += 2 + end + 1
		}
		el.Attrs[key] = val
	}
}

// Find returns the elements with tag.
func (d *DOM) Find(tag string) []*Element {
	var out []*Element
	for _, e := range d.Elements {
		if e.Tag == tag {
			out = append(out, e)
		}
	}
	return out
}

// WithClass returns the elements with tag ("" for any) whose class list has
// class.
func (d *DOM) WithClass(tag, class string) []*Element {
	var out []*Element
	for _, e := range d.Elements {
		if (tag == "" || e.Tag == tag) && e.HasClass(class) {
			out = append(out, e)
		}
	}
	return out
}

// HasClass reports whether the class attribute lists class.
func (e *Element) HasClass(class string) bool {
	for _, c := range strings.Fields(e.Attrs["class"]) {
		if c == class {
			return true
		}
	}
	return false
}

// Within reports whether e is inside an element with tag and class ("" for
// any class).
func (e *Element) Within(tag, class string) bool {
	for p := e.Parent; p != nil; p = p.Parent {
		if p.Tag == tag && (class == "" || p.HasClass(class)) {
			return true
		}
	}
	return false
}
