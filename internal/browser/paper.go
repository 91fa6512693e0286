package browser

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
)

// Paper is a sheet size, in inches as the DevTools protocol takes it.
type Paper struct {
	Name          string
	Width, Height float64
}

// The two sheets change boards print on: ISO 216 A4 (210 × 297 mm) and US
// Letter (8.5 × 11 in).
var (
	A4     = Paper{"A4", 210 / 25.4, 297 / 25.4}
	Letter = Paper{"Letter", 8.5, 11}
)

// PrintOn loads page once and prints it, as the print dialog does with its
// defaults (margins, no header or footer, no background graphics), on each
// paper in turn: pdfs[i] gets papers[i]. The command line's --print-to-pdf
// always prints on Letter and takes no paper size, so this drives the
// browser over the DevTools protocol instead, on the pipe that
// --remote-debugging-pipe opens (fd 3 from us, fd 4 to us, each message
// JSON ended by a NUL byte: chromium content/browser/devtools/
// devtools_pipe_handler.cc), which needs no port and no WebSocket.
func (b *Browser) PrintOn(ctx context.Context, page string, papers []Paper, pdfs []string) error {
	if len(papers) != len(pdfs) {
		return fmt.Errorf("print: %d papers for %d files", len(papers), len(pdfs))
	}
	pageURL, err := fileURL(page)
	if err != nil {
		return err
	}
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()

	toBrowser, ours, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("print: %w", err)
	}
	fromBrowser, theirs, err := os.Pipe()
	if err != nil {
		toBrowser.Close()
		ours.Close()
		return fmt.Errorf("print: %w", err)
	}
	var stderr bytes.Buffer
	cmd, err := b.start(ctx, b.TempDir(), []string{"--remote-debugging-pipe", "about:blank"}, nil, &stderr, toBrowser, theirs)
	// The browser holds its ends now; ours must close so that its exit is
	// an EOF here, not a read that waits forever.
	toBrowser.Close()
	theirs.Close()
	if err != nil {
		ours.Close()
		fromBrowser.Close()
		return err
	}
	s := &devtools{w: ours, r: bufio.NewReader(fromBrowser)}
	// A context that ends kills the browser (start's Cancel), which ends
	// the reads; closing our ends makes sure of it.
	stop := context.AfterFunc(ctx, func() { ours.Close(); fromBrowser.Close() })
	defer stop()
	printErr := s.printAll(pageURL, papers, pdfs)
	if printErr == nil {
		// Browser.close ends the process; its answer may never come.
		_ = s.send("", "Browser.close", nil)
	}
	ours.Close()
	fromBrowser.Close()
	if printErr != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	waitErr := cmd.Wait()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	fail := func(err error) error {
		return fmt.Errorf("chromium print %s: %w\nstderr (last lines):\n%s", pageURL, err, tail(stderr.String(), 15))
	}
	switch {
	case ctx.Err() != nil:
		return fail(fmt.Errorf("no result before the deadline: %w", ctx.Err()))
	case printErr != nil:
		return fail(printErr)
	case waitErr != nil:
		return fail(waitErr)
	}
	return nil
}

// devtools is one DevTools protocol connection over the pipe.
type devtools struct {
	w    io.Writer
	r    *bufio.Reader
	next int
}

type devtoolsMessage struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    any             `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

func (s *devtools) send(session, method string, params any) error {
	s.next++
	msg, err := json.Marshal(devtoolsMessage{ID: s.next, Method: method, SessionID: session, Params: params})
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if _, err := s.w.Write(append(msg, 0)); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// receive reads messages until one of the session's with the given id
// (an answer) or method (an event), and returns its result or params.
func (s *devtools) receive(session string, id int, method string) (json.RawMessage, error) {
	for {
		line, err := s.r.ReadBytes(0)
		if err != nil {
			return nil, fmt.Errorf("waiting for %s: the browser closed the pipe: %w", orMethod(id, method), err)
		}
		var m struct {
			devtoolsMessage
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(bytes.TrimSuffix(line, []byte{0}), &m); err != nil {
			return nil, fmt.Errorf("waiting for %s: %w", orMethod(id, method), err)
		}
		if m.SessionID != session {
			continue
		}
		switch {
		case id != 0 && m.ID == id && m.Error != nil:
			return nil, fmt.Errorf("answer %d: %s", id, m.Error.Message)
		case id != 0 && m.ID == id:
			return m.Result, nil
		case method != "" && m.Method == method:
			return m.Params, nil
		}
	}
}

func orMethod(id int, method string) string {
	if method != "" {
		return method
	}
	return fmt.Sprintf("answer %d", id)
}

// call sends a command and waits for its answer, decoded into out.
func (s *devtools) call(session, method string, params, out any) error {
	if err := s.send(session, method, params); err != nil {
		return err
	}
	res, err := s.receive(session, s.next, "")
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(res, out); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// printAll opens a tab, loads pageURL and prints it once per paper. The
// commands are the DevTools protocol's (chromedevtools.github.io/
// devtools-protocol: Target.createTarget, Target.attachToTarget with
// flatten, Page.enable, Page.navigate, the Page.loadEventFired event,
// Page.printToPDF).
func (s *devtools) printAll(pageURL string, papers []Paper, pdfs []string) error {
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := s.call("", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return err
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	if err := s.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached); err != nil {
		return err
	}
	tab := attached.SessionID
	if err := s.call(tab, "Page.enable", nil, nil); err != nil {
		return err
	}
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	if err := s.call(tab, "Page.navigate", map[string]any{"url": pageURL}, &nav); err != nil {
		return err
	}
	if nav.ErrorText != "" {
		return fmt.Errorf("load %s: %s", pageURL, nav.ErrorText)
	}
	if _, err := s.receive(tab, 0, "Page.loadEventFired"); err != nil {
		return err
	}
	for i, p := range papers {
		var printed struct {
			Data string `json:"data"`
		}
		// The print dialog's defaults but the paper: margins of about 1 cm
		// (the protocol's 0.4 in), no header or footer, no background.
		params := map[string]any{"paperWidth": p.Width, "paperHeight": p.Height, "displayHeaderFooter": false, "printBackground": false}
		if err := s.call(tab, "Page.printToPDF", params, &printed); err != nil {
			return fmt.Errorf("on %s: %w", p.Name, err)
		}
		data, err := base64.StdEncoding.DecodeString(printed.Data)
		if err != nil {
			return fmt.Errorf("on %s: %w", p.Name, err)
		}
		if !bytes.HasPrefix(data, []byte("%PDF-")) {
			return fmt.Errorf("on %s: the browser's answer is not a PDF (%d bytes)", p.Name, len(data))
		}
		if err := os.WriteFile(pdfs[i], data, 0o644); err != nil {
			return fmt.Errorf("on %s: %w", p.Name, err)
		}
	}
	return nil
}

// mediaBox is a page's size in a PDF as Chromium (Skia) writes it, in
// points: /MediaBox [0 0 w h] in each page's dictionary, not compressed.
var mediaBox = regexp.MustCompile(`/MediaBox\s*\[\s*0\s+0\s+([0-9.]+)\s+([0-9.]+)\s*\]`)

// OnPaper says whether every page of a PDF is paper p, upright or turned
// (a page that CSS sets in landscape, @page { size: landscape }, is the
// same sheet turned), within a point: the browser rounds the sheet to its
// own units, A4 is 595.92 × 841.92 pt where 210 × 297 mm is 595.28 × 841.89.
func OnPaper(pdf []byte, p Paper) error {
	boxes := mediaBox.FindAllSubmatch(pdf, -1)
	if len(boxes) == 0 {
		return errors.New("no page size (/MediaBox) in the PDF")
	}
	for _, m := range boxes {
		w, _ := strconv.ParseFloat(string(m[1]), 64)
		h, _ := strconv.ParseFloat(string(m[2]), 64)
		near := func(a, b float64) bool { return math.Abs(a-b) <= 1 }
		pw, ph := p.Width*72, p.Height*72
		if !(near(w, pw) && near(h, ph)) && !(near(w, ph) && near(h, pw)) {
			return fmt.Errorf("a page is %.2f × %.2f pt, not %s (%.2f × %.2f pt)", w, h, p.Name, p.Width*72, p.Height*72)
		}
	}
	return nil
}

// PDFPages is the text of each page of a PDF, laid out as printed
// (pdftotext -layout, from poppler, which ends each page with a form feed).
func PDFPages(t testing.TB, pdf string) []string {
	t.Helper()
	tool := testtools.Find(t, "pdftotext")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, tool, "-layout", pdf, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext %s: %v", pdf, err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\f"), "\f")
}
