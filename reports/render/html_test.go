package render_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"faultwin/reports/render"
)

// chromiumBin is Debian's chromium, which `sudo make deps` installs.
const chromiumBin = "/usr/bin/chromium"

// chromium runs headless Chromium on url with extra flags and returns its
// stdout. A missing browser fails the test: the page's script is part of
// what is tested, and a skipped test would hide that it never ran.
func chromium(t *testing.T, url string, extra ...string) []byte {
	t.Helper()
	bin := chromiumBin
	if _, err := os.Stat(bin); err != nil {
		p, lerr := exec.LookPath("chromium")
		if lerr != nil {
			t.Fatalf("chromium not found at %s or on PATH (%v); `sudo make deps` installs it", chromiumBin, err)
		}
		bin = p
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir()}
	args = append(append(args, extra...), url)
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(extra, " "), err, stderr.String())
	}
	return stdout.Bytes()
}

func writeHTML(t *testing.T) (string, *render.Report) {
	t.Helper()
	r := render.Build([]render.File{run1(t), run3(t), soak(t)}, false)
	var b bytes.Buffer
	if err := render.HTML(&b, r); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, r
}

// TestHTMLSelfContained: one file, nothing fetched from anywhere.
func TestHTMLSelfContained(t *testing.T) {
	path, _ := writeHTML(t)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, bad := range []string{"http://", "https://", " src=", "<link", "@import", "url(", "@font-face"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q: it must not load anything", bad)
		}
	}
	for _, want := range []string{"<style>", "<script>", `<table class="heatmap" id="heatmap-1" data-group="refsup" data-cells="13">`, `<details id="d-1-W4_30"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestHTMLInChromium loads the page in headless Chromium and checks the DOM
// after the page's script ran: every cell with its window, run and status,
// the script's ready mark and cell count, and that a row named in the URL's
// fragment opens in the panel. Then a screenshot must show the heatmap.
func TestHTMLInChromium(t *testing.T) {
	path, r := writeHTML(t)
	url := "file://" + path

	dom := string(chromium(t, url, "--dump-dom"))
	cells := 0
	for _, id := range r.Windows {
		for _, run := range r.Runs {
			c, ok := r.Cell(id, run.N)
			if !ok {
				continue
			}
			cells++
			// The status is the square's class (s-fail), as the page's
			// CSS colours it.
			want := `class="sq ` + "s-" + strings.ToLower(c.Status) + `[^"]*" href="#[^"]+" data-window="` + regexp.QuoteMeta(id) + `" data-run="` + strconv.Itoa(run.N) + `"`
			if !regexp.MustCompile(want).MatchString(dom) {
				t.Errorf("no cell %s in the DOM", want)
			}
		}
	}
	if cells != 13 {
		t.Errorf("%d cells, want 13 (4 + 3 + 6 rows)", cells)
	}
	body := regexp.MustCompile(`<body[^>]*>`).FindString(dom)
	if !strings.Contains(body, `class="js-ready"`) || !strings.Contains(body, `data-cells="`+strconv.Itoa(cells)+`"`) {
		t.Errorf("the page's script did not initialise: %s", body)
	}
	if n := strings.Count(dom, `aria-expanded="false"`); n != cells {
		t.Errorf("script marked %d cells collapsed, want %d", n, cells)
	}
	for _, status := range []string{"PASS", "FAIL", "INVALID", "ERROR"} {
		if !strings.Contains(dom, `class="sq `+"s-"+strings.ToLower(status)) {
			t.Errorf("no %s cell", status)
		}
	}

	// Each supervisor's map starts in the first screen of its section, as
	// the browser laid it out (the page's script measured it).
	secs := regexp.MustCompile(`<section aria-labelledby="h-group-\d+" class="group-section" data-map-top="(\d+)">`).FindAllStringSubmatch(dom, -1)
	if len(secs) != len(r.Groups) {
		t.Errorf("%d supervisor sections measured, want %d", len(secs), len(r.Groups))
	}
	for _, m := range secs {
		if top, _ := strconv.Atoi(m[1]); top > 400 {
			t.Errorf("a supervisor's map starts %d px below its section's top: not in its first screen", top)
		}
	}

	opened := string(chromium(t, url+"#d-1-W4_30", "--dump-dom"))
	panel := regexp.MustCompile(`(?s)<aside id="panel-1"[^>]*>.*?</aside>`).FindString(opened)
	if !strings.Contains(panel, `data-showing="d-1-W4_30"`) || !strings.Contains(panel, "pid 4242 (start 1190518) criu") {
		t.Errorf("row d-1-W4_30 did not open in the panel with its evidence:\n%s", panel)
	}
	if !regexp.MustCompile(`<a class="sq s-fail selected" href="#d-1-W4_30" data-window="W4_30" data-run="1"`).MatchString(opened) {
		t.Error("the opened row's square is not marked selected")
	}

	shot := filepath.Join(t.TempDir(), "shot.png")
	chromium(t, url, "--screenshot="+shot, "--window-size=1200,900", "--hide-scrollbars")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 900 {
		t.Errorf("screenshot is %v, want 1200x900", b)
	}
	for name, rgb := range map[string][3]uint32{"PASS": {0xb7, 0xeb, 0xc6}, "FAIL": {0xf7, 0xa1, 0xa8}} {
		if !hasColour(img, rgb) {
			t.Errorf("no %s cell colour #%02x%02x%02x in the screenshot", name, rgb[0], rgb[1], rgb[2])
		}
	}
}

// hasColour reports whether some pixel of img is rgb (8-bit), within 2.
func hasColour(img image.Image, rgb [3]uint32) bool {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if near(r>>8, rgb[0]) && near(g>>8, rgb[1]) && near(bl>>8, rgb[2]) {
				return true
			}
		}
	}
	return false
}

func near(a, b uint32) bool { return a+2 >= b && b+2 >= a }
