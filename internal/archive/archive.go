// Package archive is satchel's export format (docs/export-format.md): the
// records an export holds, the writer that makes the tar archive and the
// reader that checks it in one pass. What goes into the records, and
// how an import applies them, is package satchel's.
package archive

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/satchel-dev/satchel/internal/errs"
)

// The export format (docs/export-format.md): a tar archive of
//
//	satchel.json               the header: format name and version
//	blobs/<sha256>             file contents, each stored once, before
//	                           the first record that names it
//	records/<n>.ndjson         records, one JSON object a line, each
//	                           {"sum": sha256 of rec, "rec": {...}}
//	end.json                   how many records and blobs came before
//
// Everything is written in one pass and can be read in one pass: a reader
// meets every blob before the records that name it.

// FormatVersion is the version of the export format this satchel
// writes; a reader refuses a file of a newer version, and reads every
// older one. Version 2 added the review records (a file of version 1
// has none).
const FormatVersion = 2

const (
	exportFormatName = "satchel-export"
	exportHeaderName = "satchel.json"
	exportEndName    = "end.json"
	exportBlobDir    = "blobs/"
	exportRecordDir  = "records/"
	// recordChunk is how many bytes of records one records/ entry holds
	// (a tar entry's size comes before its data, so records are buffered).
	recordChunk = 1 << 20
)

type exportHeader struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
}

type exportEnd struct {
	Records int64 `json:"records"`
	Blobs   int64 `json:"blobs"`
}

// Record types (each record's "type").
const (
	TypeScope  = "scope"
	TypeThread = "thread"
	TypeCommit = "commit"
	TypeFile   = "project_file"
	TypeDoc    = "doc"
	TypeToken  = "token"
	TypeReview = "review" // from version 2
)

// recLine is one line of a records/ entry.
type recLine struct {
	Sum string          `json:"sum"`
	Rec json.RawMessage `json:"rec"`
}

// recHead is what every record starts with.
type recHead struct {
	Type string `json:"type"`
}

// Scope holds a scope's own settings (bounds and the like).
type Scope struct {
	Type     string            `json:"type"`
	Scope    string            `json:"scope"`
	Settings map[string][]byte `json:"settings,omitempty"`
}

// Ref names a commit of the same scope.
type Ref struct {
	Thread string `json:"thread"`
	Seq    int64  `json:"seq"`
}

// Thread comes before the thread's commits.
type Thread struct {
	Type    string `json:"type"`
	Scope   string `json:"scope"`
	Name    string `json:"name"`
	Created string `json:"created"`
	// Head is the sequence number of the newest commit (every commit up
	// to it that is not in the file was dropped by retention).
	Head int64 `json:"head"`
	// ForkOf is the commit the thread was forked from, when its first
	// commit says so.
	ForkOf   *Ref              `json:"fork_of,omitempty"`
	Settings map[string][]byte `json:"settings,omitempty"`
}

// Commit is one retained commit: its tree is that of Base (when set)
// or of the thread's previous commit in the file (none: the empty tree),
// with Changes applied.
type Commit struct {
	Type        string   `json:"type"`
	Scope       string   `json:"scope"`
	Thread      string   `json:"thread"`
	Seq         int64    `json:"seq"`
	Time        string   `json:"time"`
	Meta        string   `json:"meta"`
	Base        *Ref     `json:"base,omitempty"`
	Checkpoints []string `json:"checkpoints,omitempty"`
	Changes     []Change `json:"changes,omitempty"`
}

type Change struct {
	Path    string `json:"path"`
	Deleted bool   `json:"deleted,omitempty"`
	Blob    string `json:"blob,omitempty"`
	Size    int64  `json:"size,omitempty"`
	// ModTime is the file's modified time in Unix microseconds.
	ModTime int64 `json:"mtime,omitempty"`
}

// File is a file of the project directory: a store or agent definition.
type File struct {
	Type    string `json:"type"`
	Path    string `json:"path"`
	Content string `json:"content"`
}

// Doc is a document with its history, newest version first.
type Doc struct {
	Type     string    `json:"type"`
	Store    string    `json:"store"`
	Scope    string    `json:"scope"`
	Key      string    `json:"key"`
	Versions []Version `json:"versions"`
}

type Version struct {
	Version int64  `json:"version"`
	Updated string `json:"updated"`
	Expires string `json:"expires,omitempty"`
	JSON    string `json:"json"`
}

// Token is an access token as stored: its description and its
// secret's hash, never the secret.
type Token struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	Scope  string `json:"scope"`
	Record string `json:"record"`
}

// Review is a review's record as stored (its state, who decided it and
// the caller's key included): open and decided reviews alike.
type Review struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	Scope  string `json:"scope"`
	Record string `json:"record"`
}

// Time formats a time as the file keeps it: UTC, to the
// microsecond (what every backend stores).
func Time(t time.Time) string {
	return t.UTC().Truncate(time.Microsecond).Format("2006-01-02T15:04:05.000000Z")
}

func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("invalid time %q", s)
	}
	return t.UTC(), nil
}

// Writer writes the archive: fixed modes and times, so that one
// store's export is the same bytes every time.
type Writer struct {
	tw      *tar.Writer
	recs    bytes.Buffer
	chunk   int
	records int64
	blobs   int64
	seen    map[[32]byte]bool
}

func NewWriter(w io.Writer) (*Writer, error) {
	t := &Writer{tw: tar.NewWriter(w), seen: map[[32]byte]bool{}}
	h, _ := json.Marshal(exportHeader{Format: exportFormatName, Version: FormatVersion})
	return t, t.entry(exportHeaderName, append(h, '\n'))
}

func (t *Writer) entry(name string, data []byte) error {
	hdr := &tar.Header{
		Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg,
		ModTime: time.Unix(0, 0), Format: tar.FormatUSTAR,
	}
	if err := t.tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err := t.tw.Write(data)
	return err
}

// Blob stores content once and returns its name.
func (t *Writer) Blob(content string) (string, error) {
	sum := sha256.Sum256([]byte(content))
	name := hex.EncodeToString(sum[:])
	if t.seen[sum] {
		return name, nil
	}
	t.seen[sum] = true
	t.blobs++
	hdr := &tar.Header{
		Name: exportBlobDir + name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg,
		ModTime: time.Unix(0, 0), Format: tar.FormatUSTAR,
	}
	if err := t.tw.WriteHeader(hdr); err != nil {
		return "", err
	}
	_, err := io.WriteString(t.tw, content)
	return name, err
}

// Record appends one record, flushing a records/ entry when it is full.
func (t *Writer) Record(rec any) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	line, _ := json.Marshal(recLine{Sum: hex.EncodeToString(sum[:]), Rec: b})
	t.recs.Write(line)
	t.recs.WriteByte('\n')
	t.records++
	if t.recs.Len() >= recordChunk {
		return t.flush()
	}
	return nil
}

func (t *Writer) flush() error {
	if t.recs.Len() == 0 {
		return nil
	}
	t.chunk++
	err := t.entry(fmt.Sprintf("%s%06d.ndjson", exportRecordDir, t.chunk), t.recs.Bytes())
	t.recs.Reset()
	return err
}

// Blobs is how many blobs the archive holds so far.
func (t *Writer) Blobs() int64 { return t.blobs }

// Close flushes the records and writes the end entry.
func (t *Writer) Close() error {
	if err := t.flush(); err != nil {
		return err
	}
	e, _ := json.Marshal(exportEnd{Records: t.records, Blobs: t.blobs})
	if err := t.entry(exportEndName, append(e, '\n')); err != nil {
		return err
	}
	return t.tw.Close()
}

// Corrupt is the error of a file that is not a valid export.
func Corrupt(format string, args ...any) error {
	return errs.New(errs.ErrInvalidArgument, "corrupt export file: "+format, args...)
}

// BlobLoc is where a blob's bytes lie in the file.
type BlobLoc struct {
	Off, Size int64
}

// exportReader reads an export file in one pass, checking as it goes: the
// header's version, every blob's hash, every record's checksum, that each
// record names only blobs already seen, and the end entry's counts.
type exportReader struct {
	cr      *countReader
	tr      *tar.Reader
	blobs   map[string]BlobLoc
	records int64
	// onRecord receives each record, its type and its bytes.
	onRecord func(typ string, rec []byte) error
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Read reads the whole file r. hashBlobs checks each blob's content
// against its name (the first pass does; the second trusts it).
// Blobs are added to blobs as they are met, before the records that name
// them.
func Read(r io.Reader, hashBlobs bool, blobs map[string]BlobLoc, onRecord func(typ string, rec []byte) error) (map[string]BlobLoc, error) {
	x := &exportReader{cr: &countReader{r: r}, blobs: blobs, onRecord: onRecord}
	x.tr = tar.NewReader(x.cr)
	if err := x.read(hashBlobs); err != nil {
		return nil, err
	}
	return x.blobs, nil
}

func (x *exportReader) next() (*tar.Header, error) {
	h, err := x.tr.Next()
	if err == io.EOF {
		return nil, Corrupt("truncated: it ends before %s", exportEndName)
	}
	if err != nil {
		return nil, Corrupt("%v", err)
	}
	if h.Typeflag != tar.TypeReg {
		return nil, Corrupt("entry %q is not a regular file", h.Name)
	}
	return h, nil
}

func (x *exportReader) read(hashBlobs bool) error {
	h, err := x.tr.Next()
	if err != nil {
		return Corrupt("not a satchel export (no %s): %v", exportHeaderName, err)
	}
	if h.Name != exportHeaderName || h.Size > 4096 {
		return Corrupt("not a satchel export: its first entry is %q, not %s", h.Name, exportHeaderName)
	}
	var hdr exportHeader
	if err := readJSON(x.tr, &hdr); err != nil || hdr.Format != exportFormatName {
		return Corrupt("not a satchel export: bad %s", exportHeaderName)
	}
	if hdr.Version > FormatVersion {
		return errs.New(errs.ErrInvalidArgument, "export format version %d is newer than this satchel reads (%d): upgrade satchel", hdr.Version, FormatVersion)
	}
	if hdr.Version < 1 {
		return Corrupt("invalid format version %d", hdr.Version)
	}
	for {
		h, err := x.next()
		if err != nil {
			return err
		}
		switch {
		case strings.HasPrefix(h.Name, exportBlobDir):
			if err := x.blob(h, hashBlobs); err != nil {
				return err
			}
		case strings.HasPrefix(h.Name, exportRecordDir):
			if err := x.recordEntry(h); err != nil {
				return err
			}
		case h.Name == exportEndName:
			var end exportEnd
			if h.Size > 4096 || readJSON(x.tr, &end) != nil {
				return Corrupt("bad %s", exportEndName)
			}
			if end.Records != x.records || end.Blobs != int64(len(x.blobs)) {
				return Corrupt("%s counts %d records and %d blobs, the file holds %d and %d", exportEndName, end.Records, end.Blobs, x.records, len(x.blobs))
			}
			if _, err := x.tr.Next(); err != io.EOF {
				return Corrupt("data after %s, or a truncated end (%v)", exportEndName, err)
			}
			return nil
		default:
			return Corrupt("unexpected entry %q", h.Name)
		}
	}
}

func readJSON(r io.Reader, v any) error {
	b, err := io.ReadAll(io.LimitReader(r, 4096))
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func (x *exportReader) blob(h *tar.Header, hashBlobs bool) error {
	name := strings.TrimPrefix(h.Name, exportBlobDir)
	if len(name) != 64 || strings.Trim(name, "0123456789abcdef") != "" {
		return Corrupt("bad blob name %q", h.Name)
	}
	if _, dup := x.blobs[name]; dup {
		return Corrupt("blob %s stored twice", name)
	}
	off := x.cr.n
	if hashBlobs {
		hs := sha256.New()
		n, err := io.Copy(hs, x.tr)
		if err != nil {
			return Corrupt("truncated in blob %s: %v", name, err)
		}
		if n != h.Size || hex.EncodeToString(hs.Sum(nil)) != name {
			return Corrupt("blob %s does not match its hash", name)
		}
	}
	x.blobs[name] = BlobLoc{Off: off, Size: h.Size}
	return nil
}

func (x *exportReader) recordEntry(h *tar.Header) error {
	if h.Size > 4*recordChunk+maxRecordBytes {
		return Corrupt("records entry %q is too large", h.Name)
	}
	data, err := io.ReadAll(x.tr)
	if err != nil {
		return Corrupt("truncated in %s: %v", h.Name, err)
	}
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return Corrupt("a record of %s does not end with a newline", h.Name)
		}
		line := data[:i]
		data = data[i+1:]
		x.records++
		typ, rec, err := checkRecordLine(line)
		if err != nil {
			return Corrupt("record %d: %v", x.records, err)
		}
		if err := x.onRecord(typ, rec); err != nil {
			return err
		}
	}
	return nil
}

// maxRecordBytes bounds one record (a commit that changes a million files
// stays well below it).
const maxRecordBytes = 1 << 30

// checkRecordLine parses one line and checks its checksum.
func checkRecordLine(line []byte) (typ string, rec []byte, err error) {
	var l recLine
	if err := json.Unmarshal(line, &l); err != nil {
		return "", nil, fmt.Errorf("not a JSON record line: %v", err)
	}
	sum := sha256.Sum256(l.Rec)
	if hex.EncodeToString(sum[:]) != l.Sum {
		return "", nil, fmt.Errorf("checksum mismatch")
	}
	var h recHead
	if err := json.Unmarshal(l.Rec, &h); err != nil {
		return "", nil, fmt.Errorf("not a record: %v", err)
	}
	return h.Type, l.Rec, nil
}
