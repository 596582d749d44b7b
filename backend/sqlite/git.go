package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/satchel-dev/satchel/backend"
)

// The git map (backend.GitMapper): tables git_commits and git_trees
// (migrations/0008_git_map.sql), deleted with their thread.

var _ backend.GitMapper = (*Backend)(nil)

// PutGitMap implements backend.GitMapper.
func (b *Backend) PutGitMap(ctx context.Context, thread int64, commits []backend.GitCommit, trees []backend.GitTree) error {
	err := b.write(ctx, func(tx *sql.Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, "SELECT 1 FROM threads WHERE id = ?", thread).Scan(&one); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			return err
		}
		ins, err := tx.PrepareContext(ctx, `INSERT INTO git_commits (thread_id, seq, root, hash, tree) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (thread_id, seq) DO UPDATE SET root = excluded.root, hash = excluded.hash, tree = excluded.tree`)
		if err != nil {
			return err
		}
		defer ins.Close()
		for _, c := range commits {
			if _, err := ins.ExecContext(ctx, thread, c.Seq, c.Root, c.Hash, c.Tree); err != nil {
				return err
			}
		}
		tr, err := tx.PrepareContext(ctx, "INSERT INTO git_trees (thread_id, hash, object) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")
		if err != nil {
			return err
		}
		defer tr.Close()
		for _, t := range trees {
			if _, err := tr.ExecContext(ctx, thread, t.Hash, blob(t.Object)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: put git map: %w", err)
	}
	return nil
}

// GitLast implements backend.GitMapper.
func (b *Backend) GitLast(ctx context.Context, thread int64) (backend.GitCommit, bool, error) {
	c := backend.GitCommit{}
	err := b.r.QueryRowContext(ctx, "SELECT seq, root, hash, tree FROM git_commits WHERE thread_id = ? ORDER BY seq DESC LIMIT 1", thread).
		Scan(&c.Seq, &c.Root, &c.Hash, &c.Tree)
	if errors.Is(err, sql.ErrNoRows) {
		return c, false, nil
	}
	if err != nil {
		return c, false, fmt.Errorf("sqlite: git map: %w", err)
	}
	return c, true, nil
}

// GitCommits implements backend.GitMapper.
func (b *Backend) GitCommits(ctx context.Context, thread int64, seqs []int64, hashes []string) ([]backend.GitCommit, error) {
	out := []backend.GitCommit{}
	if len(seqs) == 0 && len(hashes) == 0 {
		return out, nil
	}
	args := []any{thread}
	var conds []string
	if len(seqs) > 0 {
		conds = append(conds, "seq IN ("+marks(len(seqs))+")")
		for _, s := range seqs {
			args = append(args, s)
		}
	}
	if len(hashes) > 0 {
		conds = append(conds, "hash IN ("+marks(len(hashes))+")")
		for _, h := range hashes {
			args = append(args, h)
		}
	}
	rows, err := b.r.QueryContext(ctx, "SELECT seq, root, hash, tree FROM git_commits WHERE thread_id = ? AND ("+strings.Join(conds, " OR ")+") ORDER BY seq", args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: git map: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var c backend.GitCommit
		if err := rows.Scan(&c.Seq, &c.Root, &c.Hash, &c.Tree); err != nil {
			return nil, fmt.Errorf("sqlite: git map: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: git map: %w", err)
	}
	return out, nil
}

// GitTrees implements backend.GitMapper.
func (b *Backend) GitTrees(ctx context.Context, thread int64, hashes []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for len(hashes) > 0 {
		n := min(len(hashes), 500)
		args := []any{thread}
		for _, h := range hashes[:n] {
			args = append(args, h)
		}
		hashes = hashes[n:]
		rows, err := b.r.QueryContext(ctx, "SELECT hash, object FROM git_trees WHERE thread_id = ? AND hash IN ("+marks(len(args)-1)+")", args...)
		if err != nil {
			return nil, fmt.Errorf("sqlite: git trees: %w", err)
		}
		for rows.Next() {
			var h string
			var o []byte
			if err := rows.Scan(&h, &o); err != nil {
				rows.Close()
				return nil, fmt.Errorf("sqlite: git trees: %w", err)
			}
			out[h] = o
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("sqlite: git trees: %w", err)
		}
	}
	return out, nil
}

// marks is n comma-separated placeholders.
func marks(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}
