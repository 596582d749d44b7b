package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/internal/bounded"
	"github.com/satchel-dev/satchel/internal/vpath"
)

func newFSImportCmd(a *app) *cobra.Command {
	var under string
	cmd := &cobra.Command{
		Use:   "import DIR",
		Short: "Copy a host directory into the workspace, as one commit",
		Long: `Copy every regular file below the host directory DIR into the workspace,
at its path relative to DIR (below --under PREFIX when given), as ONE
commit. Existing files at those paths are replaced; other files are left
alone. Symbolic links (to files or directories) and special files are
skipped, with a note on standard error; DIR itself may be a link.

Every path is checked first: when some are not valid workspace paths
(a name ending in a dot or a space, a backslash, a device name such as
CON, ...), nothing is imported and every bad path is reported.

Prints the workspace paths imported, one a line; with --json, an array
of them.`,
		Example: `  satchel fs import ./docs
  satchel fs import ~/project/src --under src`,
		Args: exactArgs("DIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			prefix, err := vpath.Dir(under)
			if err != nil {
				return err
			}
			files, err := a.scanImport(args[0], prefix)
			if err != nil {
				return err
			}
			paths := make([]string, len(files))
			for i, f := range files {
				paths[i] = f.path
			}
			if len(files) > 0 {
				ws, err := a.workspace(ctx)
				if err != nil {
					return err
				}
				l, err := ws.Limits(ctx)
				if err != nil {
					return err
				}
				err = ws.Batch(ctx, func(ctx context.Context, b *satchel.Batch) error {
					for _, f := range files {
						content, err := bounded.ReadFile(f.host, l.MaxFileBytes, "the per-file limit")
						if err != nil {
							return fmt.Errorf("cannot import %s: %w", f.host, err)
						}
						if err := b.Write(ctx, f.path, string(content)); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					return err
				}
			}
			return a.emit(nonEmpty(paths), lines(paths))
		},
	}
	cmd.Flags().StringVar(&under, "under", "", "import below the workspace directory `PREFIX`")
	return cmd
}

// hostFile is a file to import: where it is on the host and where it goes.
type hostFile struct{ host, path string }

// scanImport lists the regular files below dir with their workspace paths
// (below prefix), in path order. It refuses, all at once, the paths that
// are not valid workspace paths.
func (a *app) scanImport(dir, prefix string) ([]hostFile, error) {
	root, err := filepath.EvalSymlinks(dir) // DIR itself may be a link
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("cannot import %s: not a directory", dir)
	}
	var (
		files []hostFile
		bad   []error
	)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			a.notice("skipped %s: a symbolic link", rel)
			return nil
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			a.notice("skipped %s: not a regular file", rel)
			return nil
		}
		path := rel
		if prefix != "" {
			path = prefix + "/" + rel
		}
		if err := vpath.Validate(path); err != nil {
			bad = append(bad, err)
			return nil
		}
		files = append(files, hostFile{host: p, path: path})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(bad) > 0 {
		return nil, errors.Join(bad...)
	}
	return files, nil
}

func newFSExportCmd(a *app) *cobra.Command {
	var (
		at        string
		overwrite bool
	)
	cmd := &cobra.Command{
		Use:   "export DIR",
		Short: "Write the workspace's files into a host directory",
		Long: `Write every file of the workspace (at the head, or at commit --at REF) into
the host directory DIR, at its path below DIR. DIR and the directories
below it are created (mode 0755, files 0644, less the umask). Nothing is
ever written outside DIR: a symbolic link inside DIR that leads out of it
is an error, not followed.

Files already at those paths are refused, all reported at once and before
anything is written, unless --overwrite is given. Other files of DIR are
left alone.

Prints the workspace paths exported, one a line; with --json, an array
of them.`,
		Example: `  satchel fs export ./out
  satchel fs export ./release --at v1 --overwrite`,
		Args: exactArgs("DIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			dir := args[0]
			r, err := a.reader(ctx, at)
			if err != nil {
				return err
			}
			paths, err := r.List(ctx, "", satchel.ListOptions{})
			if err != nil {
				return err
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			root, err := os.OpenRoot(dir)
			if err != nil {
				return err
			}
			defer root.Close()
			names := make([]string, len(paths))
			var exist []error
			for i, p := range paths {
				name := filepath.FromSlash(p)
				if !filepath.IsLocal(name) { // validated paths are local; make sure
					return refuse("cannot export %q: not a path inside %s", p, dir)
				}
				names[i] = name
				if _, err := root.Lstat(name); err == nil && !overwrite {
					exist = append(exist, &satchel.Error{Kind: satchel.ErrExists,
						Msg: fmt.Sprintf("cannot export %s: %s exists (use --overwrite to replace it)", p, filepath.Join(dir, name))})
				}
			}
			if len(exist) > 0 {
				return errors.Join(exist...)
			}
			for i, p := range paths {
				content, err := r.Read(ctx, p)
				if err != nil {
					return err
				}
				if err := writeIn(root, names[i], content); err != nil {
					return fmt.Errorf("cannot export %s into %s: %w", p, dir, err)
				}
			}
			return a.emit(nonEmpty(paths), lines(paths))
		},
	}
	cmd.Flags().StringVar(&at, "at", "", "export commit `REF` (a sequence number or a checkpoint name)")
	cmd.Flags().BoolVar(&overwrite, "overwrite", false, "replace files that already exist in DIR")
	return cmd
}

// writeIn writes content to name within root, making its directories.
func writeIn(root *os.Root, name, content string) error {
	if d := filepath.Dir(name); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
