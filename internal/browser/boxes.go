package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// csp is the Content-Security-Policy meta element a report carries; the
// probe page drops it, since it forbids the probe's own script.
var csp = regexp.MustCompile(`<meta http-equiv="Content-Security-Policy"[^>]*>`)

// boxProbe measures, for each selector, the largest bottom edge (CSS px
// from the top of the page) of the elements it matches, -1 for none, and
// posts them to the frame.
const boxProbe = `<script>
(function () {
  var sels = %s, out = {vh: window.innerHeight};
  sels.forEach(function (s, i) {
    var b = -1;
    document.querySelectorAll(s).forEach(function (e) {
      b = Math.max(b, Math.ceil(e.getBoundingClientRect().bottom + window.scrollY));
    });
    out["s" + i] = b;
  });
  parent.postMessage(out, "*");
})();
</script>`

// boxFrame shows the probed page in a frame of the given size, so the
// viewport is exactly that (headless Chromium lays a window out at least
// 500 px wide whatever --window-size says), and copies what the probe
// posts onto its <body> for the DOM dump.
const boxFrame = `<!DOCTYPE html><html><body style="margin:0">
<iframe src="probed.html" style="border:0; width:%dpx; height:%dpx"></iframe>
<script>window.addEventListener("message", function (e) {
  for (var k in e.data) document.body.setAttribute("data-" + k, e.data[k]);
});</script></body></html>`

// Bottoms loads page in a width×height viewport and returns, for each CSS
// selector, the bottom edge of the lowest element it matches in CSS pixels
// from the top of the page (-1 when it matches none): an element whose
// bottom is at most height is on the first screen. The page is probed in a
// copy with its CSP removed and a script added; the file itself is not
// changed.
func (b *Browser) Bottoms(ctx context.Context, page string, width, height int, selectors []string) ([]int, error) {
	html, err := os.ReadFile(page)
	if err != nil {
		return nil, fmt.Errorf("box probe: %w", err)
	}
	sels, err := json.Marshal(selectors)
	if err != nil {
		return nil, fmt.Errorf("box probe: %w", err)
	}
	probed := csp.ReplaceAll(html, nil)
	probed = bytes.Replace(probed, []byte("</body>"), fmt.Appendf(nil, boxProbe+"</body>", sels), 1)
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "probed.html"), probed, 0o644); err != nil {
		return nil, fmt.Errorf("box probe: %w", err)
	}
	frame := filepath.Join(dir, "frame.html")
	if err := os.WriteFile(frame, fmt.Appendf(nil, boxFrame, width, height), 0o644); err != nil {
		return nil, fmt.Errorf("box probe: %w", err)
	}
	d, err := b.LoadDOM(ctx, frame)
	if err != nil {
		return nil, err
	}
	bodies := d.Find("body")
	if len(bodies) == 0 {
		return nil, fmt.Errorf("box probe: no <body> in the frame")
	}
	attrs := bodies[0].Attrs
	if vh, err := strconv.Atoi(attrs["data-vh"]); err != nil || vh != height {
		return nil, fmt.Errorf("box probe: viewport %q px high, want %d (did the probe run?)", attrs["data-vh"], height)
	}
	out := make([]int, len(selectors))
	for i := range selectors {
		n, err := strconv.Atoi(attrs["data-s"+strconv.Itoa(i)])
		if err != nil {
			return nil, fmt.Errorf("box probe: %s: %w", selectors[i], err)
		}
		out[i] = n
	}
	return out, nil
}
