package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
)

func newBackupCmd(a *app) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:     "backup FILE",
		GroupID: groupAdmin,
		Short:   "Back the database up into a new file, while writers run",
		Long: `Back the whole database up into FILE, which must not exist; FILE is
written 0600.

On SQLite it is a VACUUM INTO copy: one consistent snapshot of the
database, taken while writers go on, compacted, and checked with PRAGMA
integrity_check before the command succeeds. satchel opens the copy as
any database (--db FILE), and restore-backup loads it.

On PostgreSQL it is the export of satchel export (every scope and every
document, with the definition files of the project DIR, --dir, default .
when it has stores/), read from one REPEATABLE READ snapshot of the whole
database while writers go on. The server's own tool is the alternative for
the whole database, satchel's tables and all: pg_dump --format=custom DBNAME
> satchel.dump, restored with pg_restore into an empty database.

Prints what it wrote; with --json, {"file": FILE, "kind": "sqlite" or
"export"}.`,
		Example: `  satchel backup backups/satchel-$(date +%F).db
  satchel --db postgres://host/satchel backup satchel.satchel --dir .`,
		Args: exactArgs("FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := a.open(ctx)
			if err != nil {
				return err
			}
			file := args[0]
			kind := "sqlite"
			if s.HasFileBackup() {
				err = s.Backup(ctx, file)
			} else {
				kind = "export"
				o := satchel.ExportOptions{}
				if d := projectDir(cmd, dir); d != "" {
					o.Project = os.DirFS(d)
				}
				var stop func()
				o.Progress, stop = a.exportProgress("backup")
				defer stop()
				err = writeFileAtomic(file, false, func(w io.Writer) error {
					_, err := s.Export(ctx, w, o)
					return err
				})
				stop() // before the result is printed
			}
			if err != nil {
				return err
			}
			return a.emit(map[string]string{"file": file, "kind": kind}, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "backed up to %s (%s)\n", file, kind)
				return err
			})
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "project `DIR` whose definition files an export holds (default: . when it has them; every document is backed up either way)")
	return cmd
}

// sqliteMagic starts every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

func newRestoreBackupCmd(a *app) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:     "restore-backup FILE",
		GroupID: groupAdmin,
		Short:   "Load a backup into an empty database",
		Long: `Load FILE, made by satchel backup (a SQLite copy or an export), into the
database (--db), which must be empty: no thread and no token.

A SQLite backup is checked before anything is copied: PRAGMA
integrity_check must pass and its schema must be satchel's (migrations
this program knows, and their tables); otherwise the restore is refused,
naming the first problem. Restored to a SQLite path that does not exist
yet, it is copied as it is: everything comes back, documents included. Into
any other database it goes through an export: threads, commits, checkpoints,
forks, settings, tokens and every document, whether or not the project DIR
(--dir, default . when it has stores/) defines its store. An export file is
imported (satchel import).

The result is then verified as satchel check --storage does; a fault
fails the restore (a copied file is removed again). A backup is the
operator's own: its tokens come back with it, operator tokens included
(satchel import --tokens safe is for files from elsewhere).

Prints what it loaded and the check's counts; with --json, the counts
satchel import prints (or "restored", the file copied) and "check", the
report of check --storage.`,
		Example: `  satchel --db restored.db restore-backup backups/satchel-2026-12-01.db
  satchel --db postgres://host/satchel restore-backup satchel.db --dir .`,
		Args: exactArgs("FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			src := args[0]
			head := make([]byte, len(sqliteMagic))
			f, err := os.Open(src)
			if err != nil {
				return err
			}
			_, _ = io.ReadFull(f, head)
			f.Close()
			isSQLite := string(head) == sqliteMagic
			if isSQLite {
				if err := satchel.VerifyBackup(ctx, src); err != nil {
					return err
				}
			}
			dsn, err := a.dsn()
			if err != nil {
				return err
			}
			if target, ok := sqlitePath(dsn); ok && isSQLite {
				if _, err := os.Lstat(target); errors.Is(err, fs.ErrNotExist) {
					if err := copyBackup(ctx, src, target); err != nil {
						return err
					}
					rep, err := checkRestoredFile(ctx, target)
					if err != nil {
						return err
					}
					out := struct {
						Restored string              `json:"restored"`
						Check    satchel.CheckReport `json:"check"`
					}{target, rep}
					return a.emit(out, func(w io.Writer) error {
						_, err := fmt.Fprintf(w, "restored %s as %s\n%s\n", src, target, checkLine(rep))
						return err
					})
				}
			}
			s, err := a.open(ctx)
			if err != nil {
				return err
			}
			if empty, err := s.Empty(ctx); err != nil {
				return err
			} else if !empty {
				return &satchel.Error{Kind: satchel.ErrExists, Msg: "the database is not empty: restore-backup loads into an empty database (satchel import --replace merges into one)"}
			}
			file := src
			if isSQLite {
				tmp, err := exportSQLiteBackup(ctx, cmd, src, dir)
				if err != nil {
					return err
				}
				defer os.Remove(tmp)
				file = tmp
			}
			ef, err := os.Open(file)
			if err != nil {
				return err
			}
			defer ef.Close()
			fi, err := ef.Stat()
			if err != nil {
				return err
			}
			progress, stop := a.importProgress()
			res, err := s.Import(ctx, ef, fi.Size(), satchel.ImportOptions{Progress: progress, Tokens: satchel.TokensAll})
			stop()
			if err != nil {
				return err
			}
			rep, err := checkRestored(ctx, s)
			if err != nil {
				return err
			}
			out := struct {
				satchel.ExportStats
				Check satchel.CheckReport `json:"check"`
			}{res.ExportStats, rep}
			return a.emit(out, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "restored %d threads, %d commits, %d documents, %d tokens\n%s\n",
					res.Threads, res.Commits, res.Documents, res.Tokens, checkLine(rep))
				return err
			})
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "project `DIR` whose definition files are restored with a SQLite backup (default: . when it has them; every document is restored either way)")
	return cmd
}

// checkRestoredFile runs the storage check on the database file a restore
// copied, and removes the file again if it has a fault.
func checkRestoredFile(ctx context.Context, target string) (satchel.CheckReport, error) {
	s, err := satchel.Open(ctx, target)
	if err != nil {
		os.Remove(target)
		return satchel.CheckReport{}, err
	}
	rep, err := checkRestored(ctx, s)
	s.Close()
	if err != nil {
		os.Remove(target)
	}
	return rep, err
}

// checkRestored runs satchel check --storage on a restored database and
// refuses it, naming the first fault, if it has any.
func checkRestored(ctx context.Context, s *satchel.Store) (satchel.CheckReport, error) {
	rep, err := s.Check(ctx)
	if err != nil {
		return rep, err
	}
	if n := len(rep.Faults); n > 0 {
		return rep, &satchel.Error{Kind: satchel.ErrInvalidArgument, Msg: fmt.Sprintf("restore failed its storage check: %d faults, the first: %s", n, rep.Faults[0])}
	}
	rep.Faults = nonEmpty(rep.Faults)
	return rep, nil
}

// checkLine is what a restore prints of its storage check.
func checkLine(rep satchel.CheckReport) string {
	return fmt.Sprintf("check --storage: %d threads, %d commits, %d objects: 0 faults", rep.Threads, rep.Commits, rep.Objects)
}

// sqlitePath returns the file of a SQLite DSN.
func sqlitePath(dsn string) (string, bool) {
	switch {
	case dsn == "memory:" || dsn == "memory" || strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://"):
		return "", false
	}
	p := strings.TrimPrefix(dsn, "file:")
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	return p, p != ""
}

// copyBackup copies a SQLite backup to target (new, 0600) and checks that
// it opens as a satchel database.
func copyBackup(ctx context.Context, src, target string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if serr := out.Sync(); err == nil {
		err = serr
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		var s *satchel.Store
		if s, err = satchel.Open(ctx, target); err == nil {
			_, err = s.ScopeNames(ctx)
			s.Close()
		}
	}
	if err != nil {
		os.Remove(target)
		return fmt.Errorf("cannot restore %s: %w", src, err)
	}
	return nil
}

// exportSQLiteBackup exports a SQLite backup (a copy of it: opening a
// database may migrate it) into a temporary export file.
func exportSQLiteBackup(ctx context.Context, cmd *cobra.Command, src, dir string) (string, error) {
	tmpDir, err := os.MkdirTemp("", "satchel-restore-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmpDir)
	cp := filepath.Join(tmpDir, "backup.db")
	if err := copyBackup(ctx, src, cp); err != nil {
		return "", err
	}
	s, err := satchel.Open(ctx, cp)
	if err != nil {
		return "", err
	}
	defer s.Close()
	o := satchel.ExportOptions{}
	if d := projectDir(cmd, dir); d != "" {
		o.Project = os.DirFS(d)
	}
	f, err := os.CreateTemp("", "satchel-restore-*.satchel")
	if err != nil {
		return "", err
	}
	if _, err := s.Export(ctx, f, o); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
