package rows

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	kflate "github.com/klauspost/compress/flate"

	"faultwin/internal/strictjson"
)

// Compact rows. A file whose name ends in ".gz" (results/soak.jsonl.gz) is
// written compact: the same lines as a plain file (open and seal markers
// unchanged), except that each row is stored by reference, its evidence in
// blob lines before it, and the lines are gzip-compressed, one gzip member
// per write (a row with its blobs and its open marker, or a seal), so the
// file stays append-only and `zcat` shows its lines. On disk (after gzip):
//
//	{"blob":{"sha256":"<sha256 of the content>","size":16384,"data":"<the content as text>"}}
//	{"blob":{"sha256":"…","size":27711,"base":"<first 16 hex digits of an earlier blob's sha256>","deflate":"<base64>"}}
//	{"row":{"window":"W1","status":"PASS","main":"<sha256>","logs":{"logs/criu-dump-c1-s1.log":"<sha256>"}},"schema":1,"prev":"…","hash":"…"}
//
// A row's "main" blob is the row's JSON with prev and hash empty and only
// its logs shorter than 4 KiB (otherwise exactly as a plain row carries
// it: input, criteria, window and all); each longer log (a CRIU log's
// 16 KiB tail) is a blob of its own. Window and status repeat the
// main blob's, for reading by eye, and must agree with it. Identical
// evidence is stored once: a blob already in the file is not written
// again. A blob is stored as text ("data") or, when an earlier blob is
// much like it (the same part of the same window's previous row, say),
// as raw DEFLATE with the base's content as the preset dictionary: rows of
// a soak repeat each other's structure, while their run names, pids and
// timestamps make them never identical.
//
// The chain covers the evidence: a compact row's Hash is the sha256 of its
// line with hash "" (like a plain row's), and that line names each blob
// by the sha256 of its content. The reader checks every blob's content
// against its sha256 and refuses a row whose blob is not in the file
// before it, so an edited blob is caught (its content no longer matches
// its hash) and so is a removed one; a blob edited together with its
// sha256 leaves the row naming a blob that is not there. The reader
// expands each row back to the full Row (Logs and Input as written), with
// Prev and Hash of its compact line: criteria re-judge the same input.
// Contents.Verify checks such a row by its line as read, the blobs' content
// having been checked against the sha256 the line names: the row is not
// encoded again. So a main blob is the bytes its sha256 commits to, and
// its input is kept as those bytes, unscanned (decodeMain): whether it is
// the criteria's input is the replay's strict decoding to say.
//
// A plain row's hash covers its full JSON, a compact row's its line with
// references; VerifyChain accepts either form of hash, each a commitment
// to the row's whole content. Converting a plain file (Convert) therefore
// starts a new chain: the converted file proves only that it matched the
// original at conversion, which its seal's note records (the original's
// sha256 and last row hash).

// compactLine is a compact row's line.
type compactLine struct {
	Row    rowRefs `json:"row"`
	Schema int     `json:"schema"`
	Prev   string  `json:"prev"`
	Hash   string  `json:"hash"`
}

// rowRefs is what a compact row line holds instead of the row.
type rowRefs struct {
	Window string            `json:"window"` // the main blob's Window.ID
	Status string            `json:"status"` // the main blob's Status
	Main   string            `json:"main"`   // sha256 of the row's main blob
	Logs   map[string]string `json:"logs"`   // log name to the sha256 of its blob, for logs of blobLogMin bytes or more
}

// blobLine is one blob of evidence.
type blobLine struct {
	Blob blobRec `json:"blob"`
}

type blobRec struct {
	SHA256 string `json:"sha256"` // of the content
	Size   int    `json:"size"`   // of the content, in bytes
	// Data is the content as text; or Deflate is the content as raw
	// DEFLATE (base64), with the last 32 KiB of the content of blob Base
	// (if set) as its preset dictionary. Base names an earlier blob by the
	// first baseDigits digits of its sha256, unique in the file: a wrong
	// base cannot go unnoticed, since the content is checked against
	// SHA256.
	Data    *string `json:"data,omitempty"`
	Base    string  `json:"base,omitempty"`
	Deflate string  `json:"deflate,omitempty"`
}

// baseDigits is how many hex digits of a base's sha256 name it.
const baseDigits = 16

// dictSize is DEFLATE's window: a preset dictionary longer than it is cut.
const dictSize = 32 << 10

// IsCompactPath reports whether Open writes path compact: a name ending
// in ".gz".
func IsCompactPath(path string) bool { return strings.HasSuffix(path, ".gz") }

// blobLogMin is the size from which a log is a blob of its own; a shorter
// one stays in the main blob, where it costs less than a reference.
const blobLogMin = 4 << 10

// mainOf returns the bytes of r's main blob: r's JSON with Prev and Hash
// empty and only the logs shorter than blobLogMin.
func mainOf(r Row) ([]byte, error) {
	if r.Logs != nil {
		small := map[string]string{}
		for name, text := range r.Logs {
			if len(text) < blobLogMin {
				small[name] = text
			}
		}
		r.Logs = small
	}
	r.Prev, r.Hash = "", ""
	return encodeRow(r)
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// part is one blob of a row: its name within the row ("main" or
// "log:NAME") and content.
type part struct {
	name    string
	content []byte
	sha     string
}

// compactOf splits r into its compact line (Hash as in r) and its blobs.
func compactOf(r Row) (compactLine, []part, error) {
	m, err := mainOf(r)
	if err != nil {
		return compactLine{}, nil, err
	}
	parts := []part{{name: "main", content: m, sha: sha(m)}}
	line := compactLine{Row: rowRefs{Window: r.Window.ID, Status: r.Status, Main: parts[0].sha, Logs: map[string]string{}},
		Schema: r.Schema, Prev: r.Prev, Hash: r.Hash}
	for _, name := range slices.Sorted(maps.Keys(r.Logs)) {
		if len(r.Logs[name]) < blobLogMin {
			continue
		}
		b := []byte(r.Logs[name])
		p := part{name: "log:" + name, content: b, sha: sha(b)}
		parts = append(parts, p)
		line.Row.Logs[name] = p.sha
	}
	return line, parts, nil
}

// ComputeCompactHash returns what r's Hash must be when r is stored
// compact: the sha256 of its compact line with hash "".
func ComputeCompactHash(r Row) (string, error) {
	line, _, err := compactOf(r)
	if err != nil {
		return "", err
	}
	line.Hash = ""
	b, err := json.Marshal(line)
	if err != nil {
		return "", err
	}
	return sha(b), nil
}

// lineKind for the compact file's own lines, told by the first key like
// markers: "blob" or "row" (a plain row's first key is "schema").
const (
	kindBlob lineKind = iota + 100
	kindCompactRow
)

func compactKind(line []byte) lineKind {
	switch {
	case bytes.HasPrefix(line, []byte(`{"blob":`)):
		return kindBlob
	case bytes.HasPrefix(line, []byte(`{"row":`)):
		return kindCompactRow
	}
	return kindRow
}

// blobStore is the blobs of a file being read: content by sha256, and
// sha256 by its first baseDigits digits ("" when two blobs share them).
type blobStore struct {
	content map[string][]byte
	prefix  map[string]string
	inflate io.ReadCloser // reset for each blob: a new one costs its tables
}

func newBlobStore() *blobStore {
	return &blobStore{content: map[string][]byte{}, prefix: map[string]string{}}
}

// add decodes a blob line, checks its content against its sha256 and keeps
// it. A blob met again must hold the same content.
func (s *blobStore) add(line []byte) error {
	rec, content, ok := quickBlob(line)
	if !ok {
		var b blobLine
		if err := strictjson.Decode(line, &b, "line's value"); err != nil {
			return err
		}
		rec, content = b.Blob, nil
	}
	if len(rec.SHA256) != 64 {
		return fmt.Errorf("blob: sha256 %q is not a sha256", rec.SHA256)
	}
	switch {
	case content != nil:
	case rec.Data != nil && rec.Deflate == "" && rec.Base == "":
		content = []byte(*rec.Data)
	case rec.Data == nil && rec.Deflate != "":
		var dict []byte
		if rec.Base != "" {
			base, ok := s.content[s.prefix[rec.Base]]
			if !ok {
				return fmt.Errorf("blob %s: its base %s is not in the file before it, or not unique there (a blob was removed)", ShortHash(rec.SHA256), rec.Base)
			}
			dict = tail(base)
		}
		z, err := base64.StdEncoding.DecodeString(rec.Deflate)
		if err != nil {
			return fmt.Errorf("blob %s: deflate: %w", ShortHash(rec.SHA256), err)
		}
		// klauspost/compress inflates what compress/flate wrote, faster;
		// the buffer is sized by the blob's record, one byte more to see
		// a blob longer than it says.
		if s.inflate == nil {
			s.inflate = kflate.NewReaderDict(bytes.NewReader(z), dict)
		} else if err := s.inflate.(kflate.Resetter).Reset(bytes.NewReader(z), dict); err != nil {
			return fmt.Errorf("blob %s: inflate: %w", ShortHash(rec.SHA256), err)
		}
		fr := s.inflate
		buf := bytes.NewBuffer(make([]byte, 0, min(max(rec.Size, 0), 1<<20)+bytes.MinRead+1))
		_, err = buf.ReadFrom(io.LimitReader(fr, int64(rec.Size)+1))
		content = buf.Bytes()
		if err != nil {
			return fmt.Errorf("blob %s: inflate: %w (the blob was edited)", ShortHash(rec.SHA256), err)
		}
	default:
		return fmt.Errorf("blob %s: holds neither data nor deflate, or both", ShortHash(rec.SHA256))
	}
	if len(content) != rec.Size {
		return fmt.Errorf("blob %s: %d bytes, it records %d: the blob was edited", ShortHash(rec.SHA256), len(content), rec.Size)
	}
	if h := sha(content); h != rec.SHA256 {
		return fmt.Errorf("blob %s: its content's sha256 is %s: the blob was edited after it was written", ShortHash(rec.SHA256), ShortHash(h))
	}
	if _, ok := s.content[rec.SHA256]; ok {
		return nil // stored again: the same content, its sha256 says
	}
	s.content[rec.SHA256] = content
	p := rec.SHA256[:baseDigits]
	if _, ok := s.prefix[p]; ok {
		s.prefix[p] = ""
	} else {
		s.prefix[p] = rec.SHA256
	}
	return nil
}

// quickBlob reads a blob of text as Marshal writes its line,
// {"blob":{"sha256":"…","size":N,"data":"…"}}, without decoding the line
// as a whole: its data is unquoted straight into the content, which a
// strict decode would first make a string of. Any other line, and one
// whose data is not exactly one valid JSON string, is not read here
// (ok false) and goes through the strict decode, whose result it gives.
func quickBlob(line []byte) (rec blobRec, content []byte, ok bool) {
	const head, sizeKey, dataKey = `{"blob":{"sha256":"`, `","size":`, `,"data":`
	rest, found := bytes.CutPrefix(line, []byte(head))
	if !found || len(rest) < 64+len(sizeKey) || string(rest[64:64+len(sizeKey)]) != sizeKey {
		return rec, nil, false
	}
	sum := rest[:64]
	for _, c := range sum {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return rec, nil, false
		}
	}
	rest = rest[64+len(sizeKey):]
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 || n > 15 || (n > 1 && rest[0] == '0') {
		return rec, nil, false
	}
	size, err := strconv.Atoi(string(rest[:n]))
	if err != nil {
		return rec, nil, false
	}
	data, found := bytes.CutPrefix(rest[n:], []byte(dataKey))
	if !found || !bytes.HasSuffix(data, []byte(`}}`)) {
		return rec, nil, false
	}
	// AppendUnquote grows its buffer to the quoted length once.
	content, err = jsontext.AppendUnquote(nil, data[:len(data)-2])
	if err != nil {
		return rec, nil, false
	}
	return blobRec{SHA256: string(sum), Size: size}, content, true
}

// expand decodes a compact row line and rebuilds its Row from the blobs.
// It returns with it the hash of the line as read (see lineHash).
func (s *blobStore) expand(line []byte) (Row, string, error) {
	r, c, err := s.expandLine(line)
	if err != nil {
		return Row{}, "", err
	}
	c.Hash = ""
	b, err := json.Marshal(c)
	if err != nil {
		return Row{}, "", err
	}
	return r, sha(b), nil
}

func (s *blobStore) expandLine(line []byte) (Row, compactLine, error) {
	var c compactLine
	if err := strictjson.Decode(line, &c, "line's value"); err != nil {
		return Row{}, c, err
	}
	get := func(what, h string) ([]byte, error) {
		b, ok := s.content[h]
		if !ok {
			return nil, fmt.Errorf("row (%s): its %s blob %s is not in the file before it: a blob was removed or edited", c.Row.Window, what, ShortHash(h))
		}
		return b, nil
	}
	m, err := get("main", c.Row.Main)
	if err != nil {
		return Row{}, c, err
	}
	var r Row
	if err := decodeMain(m, &r); err != nil {
		return Row{}, c, fmt.Errorf("row (%s): main blob %s: %w", c.Row.Window, ShortHash(c.Row.Main), err)
	}
	switch {
	case r.Prev != "" || r.Hash != "":
		return Row{}, c, fmt.Errorf("row (%s): main blob %s carries prev or hash", c.Row.Window, ShortHash(c.Row.Main))
	case r.Window.ID != c.Row.Window || r.Status != c.Row.Status:
		return Row{}, c, fmt.Errorf("row line says window %s status %s, its main blob %s window %s status %s", c.Row.Window, c.Row.Status, ShortHash(c.Row.Main), r.Window.ID, r.Status)
	case r.Schema != c.Schema:
		return Row{}, c, fmt.Errorf("row (%s): line schema %d, main blob schema %d", c.Row.Window, c.Schema, r.Schema)
	}
	for name, text := range r.Logs {
		// Only a log shorter than blobLogMin is in the main blob, as
		// mainOf writes it: the line's hash commits to the blob as written.
		if len(text) >= blobLogMin {
			return Row{}, c, fmt.Errorf("row (%s): main blob %s holds log %s of %d bytes, which is a blob of its own from %d", c.Row.Window, ShortHash(c.Row.Main), name, len(text), blobLogMin)
		}
	}
	if c.Row.Logs == nil {
		return Row{}, c, fmt.Errorf("row (%s): no logs map", c.Row.Window)
	}
	for name, h := range c.Row.Logs {
		b, err := get("log "+name, h)
		if err != nil {
			return Row{}, c, err
		}
		if _, ok := r.Logs[name]; ok || len(b) < blobLogMin || r.Logs == nil {
			return Row{}, c, fmt.Errorf("row (%s): log %s is in its main blob too, is shorter than %d bytes, or the main blob has no logs", c.Row.Window, name, blobLogMin)
		}
		r.Logs[name] = string(b)
	}
	r.Prev, r.Hash = c.Prev, c.Hash
	return r, c, nil
}

func tail(b []byte) []byte {
	if len(b) > dictSize {
		return b[len(b)-dictSize:]
	}
	return b
}

// digits makes "criu-dump-c1-s1.log" and "criu-dump-c2-s3.log" one kind of
// part when choosing a delta base.
var digits = regexp.MustCompile(`[0-9]+`)

// encoder writes a compact file's blobs: it knows every blob already in the
// file and, per part, the latest blob to take as a delta base.
type encoder struct {
	known  map[string]bool
	prefix map[string]int  // blobs in the file by the first baseDigits digits of their sha256
	latest map[string]part // by window and part kind, and by part kind alone
}

func newEncoder() *encoder {
	return &encoder{known: map[string]bool{}, prefix: map[string]int{}, latest: map[string]part{}}
}

// keys are the base keys of p in row r: the same part of the same window
// first, then of any window.
func baseKeys(window string, p part) [2]string {
	k := digits.ReplaceAllString(p.name, "#")
	return [2]string{window + "\x00" + k, k}
}

// seen records r's blobs as in the file, as bases for later blobs.
func (e *encoder) seen(window string, parts []part) {
	for _, p := range parts {
		if !e.known[p.sha] {
			e.known[p.sha] = true
			e.prefix[p.sha[:baseDigits]]++
		}
		for _, k := range baseKeys(window, p) {
			e.latest[k] = p
		}
	}
}

// lines returns the blob lines for parts not yet in the file.
func (e *encoder) lines(window string, parts []part) ([]byte, error) {
	var out []byte
	done := map[string]bool{}
	for _, p := range parts {
		if e.known[p.sha] || done[p.sha] {
			continue
		}
		done[p.sha] = true
		rec, err := e.encode(window, p)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(blobLine{rec})
		if err != nil {
			return nil, err
		}
		out = append(append(out, b...), '\n')
	}
	return out, nil
}

// encode stores p as a delta against the best base, or as text when no
// base makes it much smaller.
func (e *encoder) encode(window string, p part) (blobRec, error) {
	rec := blobRec{SHA256: p.sha, Size: len(p.content)}
	var best []byte
	for _, k := range baseKeys(window, p) {
		base, ok := e.latest[k]
		if !ok || rec.Base == base.sha[:baseDigits] || e.prefix[base.sha[:baseDigits]] != 1 {
			continue
		}
		z, err := deflate(p.content, tail(base.content))
		if err != nil {
			return rec, err
		}
		if best == nil || len(z) < len(best) {
			best, rec.Base = z, base.sha[:baseDigits]
		}
	}
	// Text compresses to about a quarter in the file's gzip; a delta is
	// worth it when it is clearly smaller than that.
	if best != nil && len(best)*5 < len(p.content) {
		rec.Deflate = base64.StdEncoding.EncodeToString(best)
		return rec, nil
	}
	rec.Base = ""
	if utf8.Valid(p.content) {
		s := string(p.content)
		rec.Data = &s
		return rec, nil
	}
	z, err := deflate(p.content, nil)
	if err != nil {
		return rec, err
	}
	rec.Deflate = base64.StdEncoding.EncodeToString(z)
	return rec, nil
}

func deflate(b, dict []byte) ([]byte, error) {
	var buf bytes.Buffer
	w, err := flate.NewWriterDict(&buf, flate.BestCompression, dict)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// gzipMember compresses lines into one gzip member.
func gzipMember(lines []byte) ([]byte, error) {
	var buf bytes.Buffer
	z, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := z.Write(lines); err != nil {
		return nil, err
	}
	if err := z.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// compactRowLines returns the blob lines and the compact line of r (whose
// Prev is set), with r's Hash set to its compact hash. It refuses a row
// whose main blob would not read back to the same bytes.
func (e *encoder) compactRowLines(r *Row) ([]byte, []part, error) {
	line, parts, err := compactOf(*r)
	if err != nil {
		return nil, nil, err
	}
	var back Row
	if err := decodeRow(parts[0].content, &back); err != nil {
		return nil, nil, fmt.Errorf("main blob does not read back: %w", err)
	}
	if again, err := mainOf(back); err != nil || !bytes.Equal(again, parts[0].content) {
		return nil, nil, fmt.Errorf("main blob does not survive a JSON round trip")
	}
	line.Hash = ""
	b, err := json.Marshal(line)
	if err != nil {
		return nil, nil, err
	}
	line.Hash = sha(b)
	r.Hash = line.Hash
	blobs, err := e.lines(r.Window.ID, parts)
	if err != nil {
		return nil, nil, err
	}
	b, err = json.Marshal(line)
	if err != nil {
		return nil, nil, err
	}
	return append(append(blobs, b...), '\n'), parts, nil
}
