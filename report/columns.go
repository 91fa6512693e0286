package report

import (
	"strings"
	"unicode/utf8"

	"github.com/clipperhouse/displaywidth"
)

// The column engine: every table and wrapped paragraph fleet-audit prints
// to a terminal is fitted here, the report's lists and the probes,
// inventory and --help listings alike, so that one style and one notion
// of width serve every command.

// DefaultWidth is the width fitted to when the output is not a terminal
// and COLUMNS does not say: the classic terminal's, which a pipe or a CI
// log viewer shows without wrapping.
const DefaultWidth = 80

// DisplayWidth is how many terminal columns s takes: wide runes count two,
// combining marks none.
func DisplayWidth(s string) int { return displaywidth.String(s) }

// Column modes say how a cell too wide for its column is fitted. Wrapping
// modes break at their first tier of separators, fall back to the next tier
// for a piece still too wide, and cut a piece only as a last resort.
const (
	// modeTrunc cuts each line with "…": short values where a wrapped half
	// reads worse than a cut one.
	modeTrunc = iota
	// modeWords wraps prose at spaces.
	modeWords
	// modeList wraps node sets after commas (and "value: " before them),
	// so that no node name is split while a comma will do.
	modeList
	// modeIdent wraps identifiers (check ids, fact names) after . - _ /,
	// because a cut check id cannot be looked up.
	modeIdent
	// modeParts wraps a line of parts joined by " · " between parts, then
	// as prose.
	modeParts
)

var wrapTiers = map[int][][]string{
	modeWords: {{" "}, {"/", "-", ".", "_", ",", ";"}},
	modeList:  {{",", ": "}, {".", "-", "_", "/"}},
	modeIdent: {{".", "-", "_", "/"}},
	modeParts: {{" · "}, {" "}, {"/", "-", ".", "_", ",", ";"}},
}

type column struct {
	title string
	// min is the narrowest the column is squeezed to before the list is
	// allowed to exceed the width. The floors of each list add up to less
	// than minWidth, so no list ever does.
	min    int
	mode   int
	indent int
	// paint returns the SGR for one line of a cell, "" for none.
	paint func(line string) string
}

// softCap bounds how wide a column may insist on being to avoid breaking
// its longest piece.
const softCap = 24

// gap is the space between two columns of an aligned list.
const gap = 2

// layout is a fitted list: where it starts and how wide each column is.
type layout struct {
	cols   []column
	indent int
	widths []int
}

// fitColumns fits the columns of rows to width, starting at column
// indent. The list is borderless, like the output of kubectl get or goss:
// borders cost a tenth of the width and three lines a table. Wrapping is
// done here so that node sets break after commas and identifiers at dots.
func fitColumns(width int, cols []column, indent int, header bool, rows [][]string) *layout {
	widths := make([]int, len(cols))
	soft := make([]int, len(cols))
	for i, c := range cols {
		if header {
			widths[i] = DisplayWidth(c.title)
		}
		soft[i] = max(c.min, widths[i])
		for _, row := range rows {
			for _, l := range strings.Split(row[i], "\n") {
				w := DisplayWidth(l)
				widths[i] = max(widths[i], w)
				if c.mode == modeTrunc {
					soft[i] = max(soft[i], w)
					continue
				}
				for _, u := range splitAfterAny(l, wrapTiers[c.mode][0]) {
					soft[i] = max(soft[i], min(softCap, DisplayWidth(strings.TrimRight(u, " "))+c.indent))
				}
			}
		}
		soft[i] = min(soft[i], widths[i])
	}
	budget := width - indent - gap*(len(cols)-1)
	fitWidths(widths, soft, budget)
	mins := make([]int, len(cols))
	for i, c := range cols {
		mins[i] = min(c.min, widths[i])
	}
	fitWidths(widths, mins, budget)
	return &layout{cols: cols, indent: indent, widths: widths}
}

// titleLine is the column titles, which are ours and never wider than
// their column.
func (t *layout) titleLine() string {
	titles := make([]string, len(t.cols))
	for i, c := range t.cols {
		titles[i] = c.title
	}
	return strings.TrimRight(strings.Repeat(" ", t.indent)+padJoin(titles, t.widths), " ")
}

// padJoin pads each cell to its width and joins them with the gap.
func padJoin(cells []string, widths []int) string {
	var b strings.Builder
	for i, c := range cells {
		if i > 0 {
			b.WriteString(strings.Repeat(" ", gap))
		}
		b.WriteString(c)
		if i < len(cells)-1 {
			b.WriteString(strings.Repeat(" ", max(0, widths[i]-DisplayWidth(c))))
		}
	}
	return b.String()
}

// rowLines are one row of t, as many lines as its tallest cell; color
// paints the cells of columns that have a paint function.
func (t *layout) rowLines(row []string, color bool) []string {
	cells := make([][]string, len(t.cols))
	height := 0
	for i, c := range t.cols {
		var lines []string
		for _, l := range strings.Split(row[i], "\n") {
			switch {
			case DisplayWidth(l) <= t.widths[i]:
				lines = append(lines, l)
			case c.mode == modeTrunc:
				lines = append(lines, truncateWidth(l, t.widths[i]))
			default:
				lines = append(lines, wrapUnits(l, t.widths[i], c.indent, wrapTiers[c.mode])...)
			}
		}
		cells[i] = lines
		height = max(height, len(lines))
	}
	pad := strings.Repeat(" ", t.indent)
	out := make([]string, 0, height)
	for j := 0; j < height; j++ {
		var b strings.Builder
		b.WriteString(pad)
		for i, c := range t.cols {
			l := ""
			if j < len(cells[i]) {
				l = cells[i][j]
			}
			if i > 0 {
				b.WriteString(strings.Repeat(" ", gap))
			}
			// Painted after measuring: an SGR sequence has no width.
			if c.paint != nil && color && strings.TrimSpace(l) != "" {
				if sgr := c.paint(l); sgr != "" {
					b.WriteString(sgr + l + sgrReset)
				} else {
					b.WriteString(l)
				}
			} else {
				b.WriteString(l)
			}
			if i < len(t.cols)-1 {
				b.WriteString(strings.Repeat(" ", max(0, t.widths[i]-DisplayWidth(l))))
			}
		}
		out = append(out, strings.TrimRight(b.String(), " "))
	}
	return out
}

// fitWidths shrinks the widest column one cell at a time until the list
// fits the budget or every column is at its floor.
func fitWidths(widths, floor []int, budget int) {
	for {
		sum, widest := 0, -1
		for i, w := range widths {
			sum += w
			if w > floor[i] && (widest < 0 || w > widths[widest]) {
				widest = i
			}
		}
		if sum <= budget || widest < 0 {
			return
		}
		widths[widest]--
	}
}

// splitAfterAny splits s after every occurrence of any separator, keeping
// the separators: "a,b,c" → "a,", "b,", "c". Nothing inside [...] is split,
// so a nodeset range such as worker-[2,4] stays whole.
func splitAfterAny(s string, seps []string) []string {
	var out []string
	start, depth := 0, 0
	for i := 0; i < len(s); {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth = max(0, depth-1)
		}
		matched := 0
		for _, sep := range seps {
			if depth == 0 && strings.HasPrefix(s[i:], sep) {
				matched = len(sep)
				break
			}
		}
		if matched > 0 {
			i += matched
			out = append(out, s[start:i])
			start = i
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// wrapUnits wraps s to width, breaking at the separators of the first tier,
// then of the next tier for a piece still too wide, and cutting a piece
// only when no separator is left. Continuation lines get indent spaces.
func wrapUnits(s string, width, indent int, tiers [][]string) []string {
	width = max(width, 1)
	pad := strings.Repeat(" ", indent)
	if indent >= width {
		pad = ""
	}
	var lines []string
	cur := ""
	flush := func() {
		if strings.TrimSpace(cur) != "" {
			lines = append(lines, strings.TrimRight(cur, " "))
		}
		cur = ""
	}
	// fits: a trailing space may hang over the edge; it is trimmed.
	fits := func(s string) bool { return DisplayWidth(strings.TrimRight(s, " ")) <= width }
	var place func(u string, tier int)
	place = func(u string, tier int) {
		if cur != "" && !fits(cur+u) {
			flush()
		}
		if cur == "" && len(lines) > 0 {
			cur = pad
			u = strings.TrimLeft(u, " ")
		}
		if fits(cur + u) {
			cur += u
			return
		}
		if tier < len(tiers) {
			parts := splitAfterAny(u, tiers[tier])
			if len(parts) == 1 {
				place(u, tier+1)
				return
			}
			for _, part := range parts {
				place(part, tier+1)
			}
			return
		}
		for !fits(cur + u) {
			room := width - DisplayWidth(cur)
			if room < 1 {
				flush()
				cur = pad
				continue
			}
			head := cutWidth(u, room)
			cur += head
			u = u[len(head):]
			flush()
			cur = pad
		}
		cur += u
	}
	place(s, 0)
	flush()
	if len(lines) == 0 {
		lines = []string{""}
	}
	return lines
}

// cutWidth returns the longest prefix of s that is at most width columns
// wide (at least one rune, so callers always make progress).
func cutWidth(s string, width int) string {
	w := 0
	for i, r := range s {
		rw := DisplayWidth(string(r))
		if w+rw > width && i > 0 {
			return s[:i]
		}
		w += rw
	}
	return s
}

// truncateWidth cuts s to width columns, the last one being "…".
func truncateWidth(s string, width int) string {
	if DisplayWidth(s) <= width {
		return s
	}
	if width <= 1 {
		return "…"
	}
	return cutWidth(s, width-1) + "…"
}

// Fit says how a Column fits a cell too wide for it.
type Fit int

const (
	// Truncate cuts the cell with "…".
	Truncate Fit = modeTrunc
	// Words wraps prose at spaces.
	Words Fit = modeWords
	// List wraps node sets and comma lists after commas.
	List Fit = modeList
	// Ident wraps identifiers after . - _ /.
	Ident Fit = modeIdent
)

// Column is one column of a Table.
type Column struct {
	// Title is printed in the title line; a table whose columns all have
	// an empty title has none.
	Title string
	// Min is the narrowest the column is squeezed to before the table
	// may exceed the width (never narrower than the title).
	Min int
	Fit Fit
}

// Table fits rows (one cell a column, "\n" breaking a cell into lines) to
// width columns from column indent, in the style of the terminal report's
// lists, and returns its lines: the titles, dimmed by nothing, then the
// rows. Cells are printed as given: escaping text that came from elsewhere
// (report.OneLine) is the caller's business.
func Table(width, indent int, cols []Column, rows [][]string) []string {
	cs := make([]column, len(cols))
	header := false
	for i, c := range cols {
		// A title is never cut: the floor is at least its width.
		cs[i] = column{title: c.Title, min: max(c.Min, DisplayWidth(c.Title)), mode: int(c.Fit)}
		header = header || c.Title != ""
	}
	t := fitColumns(max(width, minWidth), cs, indent, header, rows)
	var out []string
	if header {
		out = append(out, t.titleLine())
	}
	for _, row := range rows {
		out = append(out, t.rowLines(row, false)...)
	}
	return out
}

// Wrap wraps prose s at spaces to width columns; continuation lines are
// indented by hang spaces. A word longer than the width is broken at - / .
// _ , ; and cut only as a last resort.
func Wrap(s string, width, hang int) []string {
	return wrapUnits(s, width, hang, wrapTiers[modeWords])
}
