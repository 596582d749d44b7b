package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/satchel-dev/satchel/backend"
)

// The git map (backend.GitMapper): tables git_commits and git_trees
// (migrations/0010_git_map.sql), deleted with their thread by the
// database (ON DELETE CASCADE).

var _ backend.GitMapper = (*Backend)(nil)

// PutGitMap implements backend.GitMapper: one round trip, whatever the
// number of entries and trees.
func (b *Backend) PutGitMap(ctx context.Context, thread int64, commits []backend.GitCommit, trees []backend.GitTree) error {
	seqs := make([]int64, len(commits))
	roots := make([]int64, len(commits))
	hashes := make([]string, len(commits))
	tts := make([]string, len(commits))
	for i, c := range commits {
		seqs[i], roots[i], hashes[i], tts[i] = c.Seq, c.Root, c.Hash, c.Tree
	}
	th := make([]string, len(trees))
	to := make([][]byte, len(trees))
	for i, t := range trees {
		th[i], to[i] = t.Hash, t.Object
		if to[i] == nil {
			to[i] = []byte{}
		}
	}
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		batch := &pgx.Batch{}
		batch.Queue(`INSERT INTO git_commits (thread_id, seq, root, hash, tree)
			SELECT t.id, c.seq, c.root, c.hash, c.tree
			FROM (SELECT id FROM threads WHERE id = $1 FOR KEY SHARE) t,
				unnest($2::bigint[], $3::bigint[], $4::text[], $5::text[]) AS c (seq, root, hash, tree)
			ON CONFLICT (thread_id, seq) DO UPDATE SET root = excluded.root, hash = excluded.hash, tree = excluded.tree`,
			thread, seqs, roots, hashes, tts)
		batch.Queue(`INSERT INTO git_trees (thread_id, hash, object)
			SELECT t.id, o.hash, o.object
			FROM (SELECT id FROM threads WHERE id = $1 FOR KEY SHARE) t,
				unnest($2::text[], $3::bytea[]) AS o (hash, object)
			ON CONFLICT DO NOTHING`, thread, th, to)
		return tx.SendBatch(ctx, batch).Close()
	})
	if err != nil {
		return fmt.Errorf("postgres: put git map: %w", err)
	}
	return nil
}

// GitLast implements backend.GitMapper.
func (b *Backend) GitLast(ctx context.Context, thread int64) (backend.GitCommit, bool, error) {
	c := backend.GitCommit{}
	err := b.pool.QueryRow(ctx, "SELECT seq, root, hash, tree FROM git_commits WHERE thread_id = $1 ORDER BY seq DESC LIMIT 1", thread).
		Scan(&c.Seq, &c.Root, &c.Hash, &c.Tree)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, false, nil
	}
	if err != nil {
		return c, false, fmt.Errorf("postgres: git map: %w", err)
	}
	return c, true, nil
}

// GitCommits implements backend.GitMapper.
func (b *Backend) GitCommits(ctx context.Context, thread int64, seqs []int64, hashes []string) ([]backend.GitCommit, error) {
	if seqs == nil {
		seqs = []int64{}
	}
	if hashes == nil {
		hashes = []string{}
	}
	rows, _ := b.pool.Query(ctx, `SELECT seq, root, hash, tree FROM git_commits
		WHERE thread_id = $1 AND (seq = ANY($2) OR hash = ANY($3)) ORDER BY seq`, thread, seqs, hashes)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (backend.GitCommit, error) {
		var c backend.GitCommit
		err := r.Scan(&c.Seq, &c.Root, &c.Hash, &c.Tree)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: git map: %w", err)
	}
	if out == nil {
		out = []backend.GitCommit{}
	}
	return out, nil
}

// GitTrees implements backend.GitMapper.
func (b *Backend) GitTrees(ctx context.Context, thread int64, hashes []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	if len(hashes) == 0 {
		return out, nil
	}
	rows, _ := b.pool.Query(ctx, "SELECT hash, object FROM git_trees WHERE thread_id = $1 AND hash = ANY($2)", thread, hashes)
	var h string
	var o []byte
	_, err := pgx.ForEachRow(rows, []any{&h, &o}, func() error {
		out[h] = append([]byte(nil), o...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: git trees: %w", err)
	}
	return out, nil
}
