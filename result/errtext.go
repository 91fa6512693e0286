package result

import "strings"

// chainSep separates the links of an error chain as fmt.Errorf("%s: %w")
// writes them.
const chainSep = ": "

// minRepeat is how long a repeated run of links must be to be dropped: a
// short one ("not found", "exit 1") can honestly say two different things
// in one chain.
const minRepeat = 12

// ErrorText joins the parts of a node's explanation (its message, its
// error) into one chain for a person, with each run of links said once:
// where a run of ": "-separated links (at least minRepeat characters) comes
// again later, the earlier one is dropped, since an error chain ends with
// its root cause and the later one stands in its context. So
// "cannot run: busybox: not found" and "ssh node-1 (…): exit 127: busybox:
// not found" read "cannot run: ssh node-1 (…): exit 127: busybox: not
// found". Empty parts are left out.
func ErrorText(parts ...string) string {
	var links []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			links = append(links, strings.Split(p, chainSep)...)
		}
	}
	for {
		i, n := repeatedRun(links)
		if n == 0 {
			return strings.Join(links, chainSep)
		}
		links = append(links[:i], links[i+n:]...)
	}
}

// repeatedRun finds the longest run of links that occurs again after its
// end, returning its start and length (0 when there is none).
func repeatedRun(links []string) (start, length int) {
	for n := len(links) / 2; n > 0; n-- {
		for i := 0; i+2*n <= len(links); i++ {
			run := strings.Join(links[i:i+n], chainSep)
			if len(run) < minRepeat {
				continue
			}
			for j := i + n; j+n <= len(links); j++ {
				if strings.Join(links[j:j+n], chainSep) == run {
					return i, n
				}
			}
		}
	}
	return 0, 0
}
