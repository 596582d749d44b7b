package cli

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
)

func newFSExportCmd(a *app) *cobra.Command {
	var (
		at      string
		force   bool
		verbose bool
	)
	cmd := &cobra.Command{
		Use:   "export DIR|FILE.tar[.gz]",
		Short: "Write the workspace's files into a host directory or a tar archive",
		Long: `Write every file of the workspace (at the head, or at commit --at REF),
byte for byte with its modified time, into the host directory DIR at its
path below DIR, or into the tar archive FILE when its name ends in .tar,
.tar.gz or .tgz (gzipped for the last two).

DIR and the directories below it are created (mode 0755, files 0644, less
the umask). A DIR that exists and is not empty is refused unless --force,
which replaces the files at the workspace's paths and leaves the others
alone. Nothing is ever written outside DIR: a symbolic link inside DIR
that leads out of it is an error, not followed. An archive (mode 0644) is
written complete or not at all; an existing FILE is refused unless --force. A
progress bar shows on a terminal.

Prints one line, "exported 112 files to DIR"; --verbose prints every
workspace path exported first, one a line. With --json, an array of the
paths.`,
		Example: `  satchel fs export ./out
  satchel fs export ./release --at v1 --force
  satchel fs export snapshot.tar.gz --at v1`,
		Args: exactArgs("DIR|FILE.tar[.gz]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			r, err := a.reader(ctx, at)
			if err != nil {
				return err
			}
			paths, err := r.List(ctx, "", satchel.ListOptions{})
			if err != nil {
				return err
			}
			var done atomic.Int64
			stop := a.progress("export", len(paths), &done)
			if isArchive(args[0]) {
				err = exportArchive(ctx, r, paths, args[0], force, &done)
			} else {
				err = exportDir(ctx, r, paths, args[0], force, &done)
			}
			stop() // before the result is printed
			if err != nil {
				return err
			}
			return a.emit(nonEmpty(paths), func(w io.Writer) error {
				if verbose {
					if err := lines(paths)(w); err != nil {
						return err
					}
				}
				_, err := fmt.Fprintf(w, "exported %s to %s\n", nouns(len(paths), "file", "files"), args[0])
				return err
			})
		},
	}
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print every path exported")
	cmd.Flags().StringVar(&at, "at", "", "export commit `REF` (a sequence number or a checkpoint name)")
	cmd.Flags().BoolVar(&force, "force", false, "write into a DIR that is not empty, or replace FILE")
	cmd.Flags().BoolVar(&force, "overwrite", false, "the same as --force")
	_ = cmd.Flags().MarkHidden("overwrite")
	return cmd
}

func exportDir(ctx context.Context, r satchel.Reader, paths []string, dir string, force bool, done *atomic.Int64) error {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 && !force {
		return &satchel.Error{Kind: satchel.ErrExists, Msg: fmt.Sprintf("cannot export into %s: it is not empty (use --force to write into it)", dir)}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, p := range paths {
		name := filepath.FromSlash(p)
		if !filepath.IsLocal(name) { // validated paths are local; make sure
			return refuse("cannot export %q: not a path inside %s", p, dir)
		}
		content, err := r.Read(ctx, p)
		if err != nil {
			return err
		}
		if err := writeIn(root, name, content); err != nil {
			return fmt.Errorf("cannot export %s into %s: %w", p, dir, err)
		}
		if fi, err := r.Stat(ctx, p); err == nil {
			_ = root.Chtimes(name, fi.ModTime, fi.ModTime)
		}
		done.Add(1)
	}
	return nil
}

func exportArchive(ctx context.Context, r satchel.Reader, paths []string, file string, force bool, done *atomic.Int64) error {
	return writeFileMode(file, 0o644, force, func(w io.Writer) error {
		var gz *gzip.Writer
		if n := strings.ToLower(file); strings.HasSuffix(n, ".gz") || strings.HasSuffix(n, ".tgz") {
			gz = gzip.NewWriter(w)
			w = gz
		}
		tw := tar.NewWriter(w)
		dirs := map[string]bool{}
		for _, p := range paths {
			fi, err := r.Stat(ctx, p)
			if err != nil {
				return err
			}
			for i := 0; i < len(p); i++ {
				if p[i] == '/' && !dirs[p[:i]] {
					dirs[p[:i]] = true
					if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: p[:i] + "/", Mode: 0o755, ModTime: fi.ModTime, Format: tar.FormatPAX}); err != nil {
						return err
					}
				}
			}
			content, err := r.Read(ctx, p)
			if err != nil {
				return err
			}
			hdr := &tar.Header{Typeflag: tar.TypeReg, Name: p, Mode: 0o644, Size: int64(len(content)), ModTime: fi.ModTime, Format: tar.FormatPAX}
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			if _, err := io.WriteString(tw, content); err != nil {
				return err
			}
			done.Add(1)
		}
		if err := tw.Close(); err != nil {
			return err
		}
		if gz != nil {
			return gz.Close()
		}
		return nil
	})
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
