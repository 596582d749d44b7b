package cli

import (
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/gitrepo"
	"github.com/satchel-dev/satchel/inspector"
	"github.com/satchel-dev/satchel/internal/loopback"
)

// openWithoutTokens lets git requests without a token in as the
// inspector lets its visitors in: on loopback, while no usable token
// exists, reading every scope.
func openWithoutTokens(st *satchel.Store) func(*http.Request) (gitrepo.Identity, bool) {
	return func(r *http.Request) (gitrepo.Identity, bool) {
		if !loopback.Arrived(r) {
			return gitrepo.Identity{}, false
		}
		n, err := st.UsableTokens(r.Context())
		return gitrepo.Identity{Operator: true}, err == nil && n == 0
	}
}

func newUICmd(a *app) *cobra.Command {
	var addr, dir string
	var maxStreams int
	var serveGit bool
	var bodyTimeout time.Duration
	cmd := &cobra.Command{
		Use:     "ui [--addr ADDR] [--dir DIR]",
		GroupID: groupServe,
		Short:   "Serve the web inspector: scopes, threads, history, forks, diffs, files, collections",
		Long: `Serve the web inspector of the database (--db) at http://ADDR/: the scopes,
each scope's threads and fork tree, a thread's history (updated live as
agents write), each commit's diff, comparisons between any two commits of
one thread or of a fork and its parent, the files at any commit with glob
and grep, and the collections of the project directory --dir (by default
the working directory when it has stores/). It only reads.

Access follows the HTTP server's tokens. While no usable token exists the
inspector is open to local users on a loopback address, and refuses to
listen on any other. Once one exists, every visitor signs in with a token:
an agent's token shows its scope, an operator's token (satchel token
create --operator) every scope. A token's sign-ins end only its own older
sessions (16 at most); the live pages one token keeps open are bounded by
--max-streams-per-token (4 per session), and a request's body has
--body-read-timeout to arrive.

With --git it also serves every thread as a git repository under /git/
(docs/git.md), with the same access: a token as the HTTP password, or on
loopback while no usable token exists, reading only.

To open it next to a running MCP server, run satchel ui on the same
database, or serve both on one listener with satchel serve --http ADDR
--ui (the inspector is then under /ui/).`,
		Example: `  satchel ui
  satchel --db team.db ui --addr 127.0.0.1:9000
  satchel token create --operator && satchel ui --addr 0.0.0.0:8765`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			st, err := a.open(ctx)
			if err != nil {
				return err
			}
			var project *satchel.Project
			if d := projectDir(cmd, dir); d != "" {
				if project, err = satchel.LoadProject(d); err != nil {
					return err
				}
			}
			log := slog.New(slog.NewJSONHandler(a.stderr, nil))
			st.SetLogger(log) // the refusals of file rules
			if maxStreams <= 0 || bodyTimeout <= 0 {
				return usagef("--max-streams-per-token and --body-read-timeout must be positive")
			}
			cfg := inspector.Config{Store: st, Project: project, Logger: log, MaxStreamsPerToken: maxStreams, BodyReadTimeout: bodyTimeout}
			if serveGit {
				cfg.Git = gitrepo.New(gitrepo.Config{Store: st, Logger: log, Tokenless: openWithoutTokens(st)})
			}
			in, err := inspector.New(cfg)
			if err != nil {
				return err
			}
			if err := inspector.CheckExposure(ctx, st, addr); err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			a.notice("inspector at http://%s/", ln.Addr())
			return in.Serve(ctx, ln)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", inspector.DefaultAddr, "listen on `ADDR` (host:port)")
	cmd.Flags().StringVar(&dir, "dir", "", "project `DIR` with stores/ (default: . when it has them)")
	cmd.Flags().BoolVar(&serveGit, "git", false, "serve every thread as a git repository under /git/ too (docs/git.md)")
	cmd.Flags().IntVar(&maxStreams, "max-streams-per-token", inspector.DefaultMaxStreamsPerToken, "most live pages (thread updates) one token keeps open; past it 429")
	cmd.Flags().DurationVar(&bodyTimeout, "body-read-timeout", inspector.DefaultBodyReadTimeout, "longest a request's body (the sign-in form) may take to arrive")
	return cmd
}

// uiHandler is the inspector mounted under /ui/ of serve --http --ui.
func uiHandler(st *satchel.Store, project *satchel.Project, log *slog.Logger, maxStreams int, bodyTimeout time.Duration) (*inspector.Inspector, error) {
	return inspector.New(inspector.Config{Store: st, Project: project, Base: "/ui", Logger: log, MaxStreamsPerToken: maxStreams, BodyReadTimeout: bodyTimeout})
}
