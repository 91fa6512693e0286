package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// visible replaces everything in s that a terminal, a Markdown renderer or
// an XML parser would act on or hide with a visible escape: C0 and C1
// control characters (so ESC, CSI, OSC, BEL, \r and \b cannot move the
// cursor, recolour, retitle the window or overwrite what came before), DEL,
// bytes that are not UTF-8, Unicode bidi overrides (which can make a value
// read differently from what it is), every other format character (Unicode
// category Cf: zero-width spaces and joiners, the word joiner, the BOM, soft
// hyphens, tag characters...) and the line and paragraph separators (which
// render as nothing, or as a break no escaping of \n catches, so that
// "in\u200bactive" would read as "inactive"), and the non-characters XML 1.0
// forbids.
// Newlines become `\n`, tabs `\t`, unless listed in keep.
//
// A backslash in the input is left alone, so a value that literally contains
// `\x1b` reads the same as an escaped ESC; this is a display, not an encoding,
// and JSON keeps the exact bytes.
func visible(s, keep string) string {
	clean := utf8.ValidString(s)
	for _, r := range s {
		if !clean {
			break
		}
		clean = !needsEscape(r) || strings.ContainsRune(keep, r)
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case strings.ContainsRune(keep, r) || !needsEscape(r):
			b.WriteString(s[i : i+size])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.String()
}

func needsEscape(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	case r == 0xfffe, r == 0xffff:
		return true
	case unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp):
		return true
	}
	return false
}

// oneLine is visible(s) with every line break escaped, for table cells and
// attributes.
func oneLine(s string) string { return visible(s, "") }

// OneLine is the escaping every report gives a one-line value, for the
// commands that print user text outside a report (the probes listing): a
// terminal shows control characters, bidi overrides and bad UTF-8 as
// visible escapes instead of acting on them.
func OneLine(s string) string { return oneLine(s) }

// truncate cuts s to at most max runes, ending in "…" when it cut. It works
// on runes, not bytes, so it never splits a UTF-8 sequence.
func truncate(s string, max int) string {
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	if max == 1 {
		return "…"
	}
	n := 0
	for i := range s {
		if n == max-1 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// compressNodes folds node names into clush/ClusterShell nodeset notation:
// cluster-a-etcd-1, cluster-a-etcd-2, cluster-a-worker-2, cluster-a-worker-4
// becomes "cluster-a-etcd-[1-2],cluster-a-worker-[2,4]". Names are grouped
// by the text around their last run of digits; zero-padded numbers keep
// their width and are only folded with numbers of the same width. The
// result is for reading, not for feeding back to clush: a name that itself
// contains "[" or "," is passed through as is.
func compressNodes(names []string) string {
	type key struct {
		prefix, suffix string
		width          int // 0: not zero-padded
	}
	groups := map[key][]int{}
	var keys []key
	var plain []string
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		end := strings.LastIndexAny(n, "0123456789")
		if end < 0 || strings.ContainsAny(n, "[],") {
			plain = append(plain, n)
			continue
		}
		start := end
		for start > 0 && n[start-1] >= '0' && n[start-1] <= '9' {
			start--
		}
		digits := n[start : end+1]
		v, err := strconv.Atoi(digits)
		if err != nil || len(digits) > 9 {
			plain = append(plain, n)
			continue
		}
		k := key{prefix: n[:start], suffix: n[end+1:]}
		if len(digits) > 1 && digits[0] == '0' {
			k.width = len(digits)
		}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], v)
	}
	type part struct{ sortKey, text string }
	var parts []part
	for _, k := range keys {
		nums := groups[k]
		sort.Ints(nums)
		format := func(v int) string { return fmt.Sprintf("%0*d", k.width, v) }
		if len(nums) == 1 {
			parts = append(parts, part{k.prefix + format(nums[0]) + k.suffix, k.prefix + format(nums[0]) + k.suffix})
			continue
		}
		var ranges []string
		for i := 0; i < len(nums); {
			j := i
			for j+1 < len(nums) && nums[j+1] == nums[j]+1 {
				j++
			}
			if i == j {
				ranges = append(ranges, format(nums[i]))
			} else {
				ranges = append(ranges, format(nums[i])+"-"+format(nums[j]))
			}
			i = j + 1
		}
		parts = append(parts, part{k.prefix + format(nums[0]) + k.suffix, k.prefix + "[" + strings.Join(ranges, ",") + "]" + k.suffix})
	}
	for _, p := range plain {
		parts = append(parts, part{p, p})
	}
	sort.SliceStable(parts, func(i, j int) bool { return parts[i].sortKey < parts[j].sortKey })
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = p.text
	}
	return strings.Join(out, ",")
}
