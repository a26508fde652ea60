package rows

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Packed rows. A finished compact file (every session sealed) can be
// packed: the same lines, each blob stored as text instead of a DEFLATE
// delta, all of them in one zstd stream whose window (packWindow) spans
// many rows. A soak's rows repeat each other's structure pass after pass,
// and a delta against one earlier blob through DEFLATE's 32 KiB window
// sees little of a 40 KiB row; zstd's window sees the previous passes
// whole, so a packed soak is about a quarter of its compact file.
//
// Packing keeps every row line, open marker and seal byte for byte: a
// blob is named by the sha256 of its content, not of its line, so the
// chain, the seals and any signature of them hold unchanged. A packed
// file keeps its name (docs and expected outcomes cite it); readers tell
// it by its first bytes, as they tell gzip. It is read-only: one stream
// cannot be appended to member by member, so Open refuses it.

// packWindow is the zstd window of a packed file: a pass of every window
// of a supervisor is 3 to 4 MiB of expanded lines, so the same window's
// row of the pass before is within reach. The reader holds one window.
const packWindow = 8 << 20

// zstdMagic opens a zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// IsPacked reports whether the file at path is packed (a zstd stream).
func IsPacked(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	b := make([]byte, 4)
	n, _ := io.ReadFull(f, b)
	return n == 4 && bytes.Equal(b, zstdMagic), nil
}

// zstdReaders are decoders of packed files not in use.
var zstdReaders sync.Pool

// readZstd reads a packed file: one zstd stream of whole lines.
func readZstd(c *Contents, br *bufio.Reader) error {
	z, _ := zstdReaders.Get().(*zstd.Decoder)
	if z == nil {
		var err error
		if z, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(64<<20)); err != nil {
			return err
		}
	}
	if err := z.Reset(br); err != nil {
		return err
	}
	defer func() {
		// Let go of br; the decoder's window buffers are kept for the
		// next packed file, a reader of many of them allocates them once.
		if z.Reset(nil) == nil {
			zstdReaders.Put(z)
		}
	}()
	lr := &lineReader{c: c, blobs: newBlobStore()}
	zr := getBuffered(z)
	defer putBuffered(zr)
	var long []byte
	for n := 1; ; n++ {
		line, err := nextLine(zr, &long)
		if errors.Is(err, io.EOF) {
			if len(line) > 0 {
				return fmt.Errorf("%s:%d: packed file ends in a partial line (the file was cut)", c.Path, n)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s:%d: zstd: %w (the packed file was cut, edited or damaged)", c.Path, n, err)
		}
		if err := lr.line(line[:len(line)-1], n); err != nil {
			return err
		}
	}
}

// Packed is what Pack did.
type Packed struct {
	Rows              int
	InBytes, OutBytes int64
}

// Pack writes the file in packed to out (in may be out: it is replaced
// only once the packed copy reads back the same). in must be compact
// (gzip) or packed already, read to its end, verify and have every
// session sealed. The packed copy must read back to the same rows, hashes
// and markers, and verify, or nothing is written.
func Pack(in, out string) (*Packed, error) {
	if !IsCompactPath(in) || !IsCompactPath(out) {
		return nil, fmt.Errorf("not packed: %s: only a compact file (a name ending in .gz) is packed; compact it first", in)
	}
	c, err := VerifyContents(in)
	if err != nil {
		return nil, fmt.Errorf("not packed: %w", err)
	}
	if s := c.Sealing(); s.State == Unsealed || s.State == Legacy {
		return nil, fmt.Errorf("not packed: %s is %s: only a file whose every session is sealed is finished", in, s.State)
	}
	lines, err := rawLines(in)
	if err != nil {
		return nil, fmt.Errorf("not packed: %w", err)
	}
	var body bytes.Buffer
	blobs := newBlobStore()
	for _, line := range lines {
		if compactKind(line) == kindBlob {
			if line, err = textBlob(blobs, line); err != nil {
				return nil, fmt.Errorf("not packed: %s: %w", in, err)
			}
		}
		body.Write(line)
		body.WriteByte('\n')
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".pack-*")
	if err != nil {
		return nil, fmt.Errorf("not packed: %w", err)
	}
	defer os.Remove(tmp.Name())
	z, err := zstd.NewWriter(tmp, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithWindowSize(packWindow), zstd.WithEncoderConcurrency(1))
	if err == nil {
		_, err = z.Write(body.Bytes())
		err = errors.Join(err, z.Close())
	}
	err = errors.Join(err, tmp.Sync(), tmp.Close())
	if err != nil {
		return nil, fmt.Errorf("not packed: %w", err)
	}
	back, err := VerifyContents(tmp.Name())
	if err != nil {
		return nil, fmt.Errorf("not packed: the packed copy does not read back: %w", err)
	}
	if err := sameFile(c, back); err != nil {
		return nil, fmt.Errorf("not packed: the packed copy of %s differs: %w", in, err)
	}
	p := &Packed{Rows: len(c.Rows), InBytes: fileSize(in), OutBytes: fileSize(tmp.Name())}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return nil, fmt.Errorf("not packed: %w", err)
	}
	return p, syncDir(filepath.Dir(out))
}

// textBlob rewrites a blob line with its content as text (or, for content
// that is not UTF-8, as DEFLATE without a base), keeping its sha256.
func textBlob(s *blobStore, line []byte) ([]byte, error) {
	if err := s.add(line); err != nil {
		return nil, err
	}
	var b blobLine
	if err := json.Unmarshal(line, &b); err != nil {
		return nil, err
	}
	content := s.content[b.Blob.SHA256]
	rec := blobRec{SHA256: b.Blob.SHA256, Size: len(content)}
	if utf8.Valid(content) {
		t := string(content)
		rec.Data = &t
	} else {
		z, err := deflate(content, nil)
		if err != nil {
			return nil, err
		}
		rec.Deflate = base64.StdEncoding.EncodeToString(z)
	}
	return json.Marshal(blobLine{rec})
}

// rawLines returns the lines of a plain, gzip or zstd file as stored.
func rawLines(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	var r io.Reader = br
	magic, _ := br.Peek(4)
	switch {
	case len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b:
		z, err := gzip.NewReader(br)
		if err != nil {
			return nil, err
		}
		r = z
	case bytes.Equal(magic, zstdMagic):
		z, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		defer z.Close()
		r = z
	}
	all, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	all = bytes.TrimSuffix(all, []byte("\n"))
	return bytes.Split(all, []byte("\n")), nil
}

// sameFile reports the first difference between two readings of a file:
// its rows (content, prev and hash) and its markers.
func sameFile(a, b *Contents) error {
	if err := SameContent(a.Rows, b.Rows); err != nil {
		return err
	}
	for i := range a.Rows {
		if a.Rows[i].Hash != b.Rows[i].Hash || a.Rows[i].Prev != b.Rows[i].Prev {
			return fmt.Errorf("row %d: hash or prev differs", i+1)
		}
	}
	x, err1 := json.Marshal(a.Markers)
	y, err2 := json.Marshal(b.Markers)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	if !bytes.Equal(x, y) {
		return fmt.Errorf("the open and seal markers differ")
	}
	return nil
}

func fileSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}
