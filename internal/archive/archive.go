package satchel

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

// ExportFormatVersion is the version of the export format this satchel
// writes; Import refuses a file of a newer version.
const ExportFormatVersion = 1

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

// Record types.
const (
	recTypeScope  = "scope"
	recTypeThread = "thread"
	recTypeCommit = "commit"
	recTypeFile   = "project_file"
	recTypeDoc    = "doc"
	recTypeToken  = "token"
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

// recScope holds a scope's own settings (bounds and the like).
type recScope struct {
	Type     string            `json:"type"`
	Scope    string            `json:"scope"`
	Settings map[string][]byte `json:"settings,omitempty"`
}

// recRef names a commit of the same scope.
type recRef struct {
	Thread string `json:"thread"`
	Seq    int64  `json:"seq"`
}

// recThread comes before the thread's commits.
type recThread struct {
	Type    string `json:"type"`
	Scope   string `json:"scope"`
	Name    string `json:"name"`
	Created string `json:"created"`
	// Head is the sequence number of the newest commit (every commit up
	// to it that is not in the file was dropped by retention).
	Head int64 `json:"head"`
	// ForkOf is the commit the thread was forked from, when its first
	// commit says so.
	ForkOf   *recRef           `json:"fork_of,omitempty"`
	Settings map[string][]byte `json:"settings,omitempty"`
}

// recCommit is one retained commit: its tree is that of Base (when set)
// or of the thread's previous commit in the file (none: the empty tree),
// with Changes applied.
type recCommit struct {
	Type        string      `json:"type"`
	Scope       string      `json:"scope"`
	Thread      string      `json:"thread"`
	Seq         int64       `json:"seq"`
	Time        string      `json:"time"`
	Meta        string      `json:"meta"`
	Base        *recRef     `json:"base,omitempty"`
	Checkpoints []string    `json:"checkpoints,omitempty"`
	Changes     []recChange `json:"changes,omitempty"`
}

type recChange struct {
	Path    string `json:"path"`
	Deleted bool   `json:"deleted,omitempty"`
	Blob    string `json:"blob,omitempty"`
	Size    int64  `json:"size,omitempty"`
	// ModTime is the file's modified time in Unix microseconds.
	ModTime int64 `json:"mtime,omitempty"`
}

// recFile is a file of the project directory: a store or agent definition.
type recFile struct {
	Type    string `json:"type"`
	Path    string `json:"path"`
	Content string `json:"content"`
}

// recDoc is a document with its history, newest version first.
type recDoc struct {
	Type     string       `json:"type"`
	Store    string       `json:"store"`
	Scope    string       `json:"scope"`
	Key      string       `json:"key"`
	Versions []recVersion `json:"versions"`
}

type recVersion struct {
	Version int64  `json:"version"`
	Updated string `json:"updated"`
	Expires string `json:"expires,omitempty"`
	JSON    string `json:"json"`
}

// recToken is an access token as stored: its description and its
// secret's hash, never the secret.
type recToken struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	Scope  string `json:"scope"`
	Record string `json:"record"`
}

// exportTime formats a time as the file keeps it: UTC, to the
// microsecond (what every backend stores).
func exportTime(t time.Time) string {
	return t.UTC().Truncate(time.Microsecond).Format("2006-01-02T15:04:05.000000Z")
}

func parseExportTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("invalid time %q", s)
	}
	return t.UTC(), nil
}

// tarWriter writes the archive: fixed modes and times, so that one
// store's export is the same bytes every time.
type tarWriter struct {
	tw      *tar.Writer
	recs    bytes.Buffer
	chunk   int
	records int64
	blobs   int64
	seen    map[[32]byte]bool
}

func newTarWriter(w io.Writer) (*tarWriter, error) {
	t := &tarWriter{tw: tar.NewWriter(w), seen: map[[32]byte]bool{}}
	h, _ := json.Marshal(exportHeader{Format: exportFormatName, Version: ExportFormatVersion})
	return t, t.entry(exportHeaderName, append(h, '\n'))
}

func (t *tarWriter) entry(name string, data []byte) error {
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

// blob stores content once and returns its name.
func (t *tarWriter) blob(content string) (string, error) {
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

// record appends one record, flushing a records/ entry when it is full.
func (t *tarWriter) record(rec any) error {
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

func (t *tarWriter) flush() error {
	if t.recs.Len() == 0 {
		return nil
	}
	t.chunk++
	err := t.entry(fmt.Sprintf("%s%06d.ndjson", exportRecordDir, t.chunk), t.recs.Bytes())
	t.recs.Reset()
	return err
}

// close flushes the records and writes the end entry.
func (t *tarWriter) close() error {
	if err := t.flush(); err != nil {
		return err
	}
	e, _ := json.Marshal(exportEnd{Records: t.records, Blobs: t.blobs})
	if err := t.entry(exportEndName, append(e, '\n')); err != nil {
		return err
	}
	return t.tw.Close()
}

// corrupt is the error of a file that is not a valid export.
func corrupt(format string, args ...any) error {
	return errs.New(errs.ErrInvalidArgument, "corrupt export file: "+format, args...)
}

// blobLoc is where a blob's bytes lie in the file.
type blobLoc struct {
	off, size int64
}

// exportReader reads an export file in one pass, checking as it goes: the
// header's version, every blob's hash, every record's checksum, that each
// record names only blobs already seen, and the end entry's counts.
type exportReader struct {
	cr      *countReader
	tr      *tar.Reader
	blobs   map[string]blobLoc
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

// readExport reads the whole file r. hashBlobs checks each blob's content
// against its name (the first pass does; the second trusts it).
// Blobs are added to blobs as they are met, before the records that name
// them.
func readExport(r io.Reader, hashBlobs bool, blobs map[string]blobLoc, onRecord func(typ string, rec []byte) error) (map[string]blobLoc, error) {
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
		return nil, corrupt("truncated: it ends before %s", exportEndName)
	}
	if err != nil {
		return nil, corrupt("%v", err)
	}
	if h.Typeflag != tar.TypeReg {
		return nil, corrupt("entry %q is not a regular file", h.Name)
	}
	return h, nil
}

func (x *exportReader) read(hashBlobs bool) error {
	h, err := x.tr.Next()
	if err != nil {
		return corrupt("not a satchel export (no %s): %v", exportHeaderName, err)
	}
	if h.Name != exportHeaderName || h.Size > 4096 {
		return corrupt("not a satchel export: its first entry is %q, not %s", h.Name, exportHeaderName)
	}
	var hdr exportHeader
	if err := readJSON(x.tr, &hdr); err != nil || hdr.Format != exportFormatName {
		return corrupt("not a satchel export: bad %s", exportHeaderName)
	}
	if hdr.Version > ExportFormatVersion {
		return errs.New(errs.ErrInvalidArgument, "export format version %d is newer than this satchel reads (%d): upgrade satchel", hdr.Version, ExportFormatVersion)
	}
	if hdr.Version < 1 {
		return corrupt("invalid format version %d", hdr.Version)
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
				return corrupt("bad %s", exportEndName)
			}
			if end.Records != x.records || end.Blobs != int64(len(x.blobs)) {
				return corrupt("%s counts %d records and %d blobs, the file holds %d and %d", exportEndName, end.Records, end.Blobs, x.records, len(x.blobs))
			}
			if _, err := x.tr.Next(); err != io.EOF {
				return corrupt("data after %s, or a truncated end (%v)", exportEndName, err)
			}
			return nil
		default:
			return corrupt("unexpected entry %q", h.Name)
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
		return corrupt("bad blob name %q", h.Name)
	}
	if _, dup := x.blobs[name]; dup {
		return corrupt("blob %s stored twice", name)
	}
	off := x.cr.n
	if hashBlobs {
		hs := sha256.New()
		n, err := io.Copy(hs, x.tr)
		if err != nil {
			return corrupt("truncated in blob %s: %v", name, err)
		}
		if n != h.Size || hex.EncodeToString(hs.Sum(nil)) != name {
			return corrupt("blob %s does not match its hash", name)
		}
	}
	x.blobs[name] = blobLoc{off: off, size: h.Size}
	return nil
}

func (x *exportReader) recordEntry(h *tar.Header) error {
	if h.Size > 4*recordChunk+maxRecordBytes {
		return corrupt("records entry %q is too large", h.Name)
	}
	data, err := io.ReadAll(x.tr)
	if err != nil {
		return corrupt("truncated in %s: %v", h.Name, err)
	}
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return corrupt("a record of %s does not end with a newline", h.Name)
		}
		line := data[:i]
		data = data[i+1:]
		x.records++
		typ, rec, err := checkRecordLine(line)
		if err != nil {
			return corrupt("record %d: %v", x.records, err)
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
