package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ProjectFileName is the project file that satchel init writes at the top
// of a project directory. It names the project's database, so that
// `--dir DIR` alone finds it from any working directory.
const ProjectFileName = "satchel.json"

// ProjectFile is the content of a project file:
//
//	{"db": "satchel.db"}
//
// DB is a SQLite file path, relative to the project directory or
// absolute, or a DSN satchel.Open takes (memory:, file:..., postgres://).
// Unknown fields are refused, so a misspelt "db" is not ignored.
type ProjectFile struct {
	DB string `json:"db"`
}

// ReadProjectFile reads dir's project file. found is false, with no
// error, when dir has none.
func ReadProjectFile(dir string) (pf ProjectFile, found bool, err error) {
	name := filepath.Join(dir, ProjectFileName)
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return ProjectFile{}, false, nil
	}
	if err != nil {
		return ProjectFile{}, false, err
	}
	pf, err = parseProjectFile(b)
	if err != nil {
		return ProjectFile{}, true, refuse("%s: %v", name, err)
	}
	return pf, true, nil
}

// parseProjectFile decodes a project file, refusing what is not exactly
// one object of known fields.
func parseProjectFile(b []byte) (ProjectFile, error) {
	var pf ProjectFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pf); err != nil {
		return ProjectFile{}, fmt.Errorf("not a project file (%s): %v", `{"db": "satchel.db"}`, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return ProjectFile{}, errors.New("not a project file: more than one JSON value")
	}
	if strings.TrimSpace(pf.DB) == "" {
		return ProjectFile{}, errors.New(`"db" must name the project's database`)
	}
	return pf, nil
}

// ProjectDB returns the database that dir's project file names, resolved
// against dir when it is a relative file path; found is false when dir
// has no project file.
func ProjectDB(dir string) (dsn string, found bool, err error) {
	pf, found, err := ReadProjectFile(dir)
	if err != nil || !found {
		return "", found, err
	}
	return resolveDB(dir, pf.DB), true, nil
}

// FindProjectDB looks for a project file in dir, then in each parent
// directory up to the root, as git looks for .git: a command run in a
// subdirectory of a project uses the project's database. A relative path
// in the file is taken relative to the directory that holds the file.
// found is false when no directory up to the root has one.
func FindProjectDB(dir string) (dsn string, found bool, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false, err
	}
	for {
		if dsn, found, err := ProjectDB(abs); found || err != nil {
			return dsn, found, err
		}
		parent := filepath.Dir(abs)
		if parent == abs {
			return "", false, nil
		}
		abs = parent
	}
}

// resolveDB makes db, as a project file names it, usable from any working
// directory: a relative SQLite path is taken relative to dir; URLs and
// memory: are kept.
func resolveDB(dir, db string) string {
	if isURLDSN(db) {
		return db
	}
	path, prefixed := strings.CutPrefix(db, "file:")
	if filepath.IsAbs(path) {
		return db
	}
	path = filepath.Join(dir, path)
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if prefixed {
		return "file:" + path
	}
	return path
}

// isURLDSN says db is not a file path: memory:, or scheme://.
func isURLDSN(db string) bool {
	return db == "memory:" || strings.HasPrefix(db, "memory:") || strings.Contains(db, "://")
}

// projectDBEntry is how init names db in the project file: relative to
// dir when it lies inside it (the project moves as one directory), else
// as given (absolute).
func projectDBEntry(dir, db string) string {
	if isURLDSN(db) {
		return db
	}
	path := strings.TrimPrefix(db, "file:")
	absDir, err1 := filepath.Abs(dir)
	absDB, err2 := filepath.Abs(path)
	if err1 != nil || err2 != nil {
		return db
	}
	if rel, err := filepath.Rel(absDir, absDB); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(rel)
	}
	return absDB
}
