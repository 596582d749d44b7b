package engine

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/backend/postgres"
	"github.com/satchel-dev/satchel/backend/postgres/postgrestest"
	"github.com/satchel-dev/satchel/backend/sqlite"
	"github.com/satchel-dev/satchel/internal/testenv"
)

// sqlStore is a database the test writes with the engine, then damages
// a pack of with SQL, then reopens.
type sqlStore struct {
	open    func(t *testing.T) backend.Backend
	setPack func(t *testing.T, id int64, pack []byte)
}

// TestCheckerFindsSQLDamage writes files with the engine on SQLite and on
// PostgreSQL, rewrites a commit's pack in the database (a node's totals
// off, a file's size off, a file's lines off) and sees each fault named.
func TestCheckerFindsSQLDamage(t *testing.T) {
	stores := map[string]func(t *testing.T) sqlStore{
		"sqlite": func(t *testing.T) sqlStore {
			path := filepath.Join(t.TempDir(), "damage.db")
			return sqlStore{
				open: func(t *testing.T) backend.Backend {
					b, err := sqlite.Open(context.Background(), path)
					if err != nil {
						t.Fatal(err)
					}
					return b
				},
				setPack: func(t *testing.T, id int64, pack []byte) {
					db, err := sql.Open("sqlite", path)
					if err == nil {
						_, err = db.Exec("UPDATE commits SET pack = ? WHERE id = ?", pack, id)
						db.Close()
					}
					if err != nil {
						t.Fatal(err)
					}
				},
			}
		},
		"postgres": func(t *testing.T) sqlStore {
			url := testenv.PostgresURL(t)
			dsn := postgrestest.Schema(t, url, postgrestest.Name("satchel_damage"))
			return sqlStore{
				open: func(t *testing.T) backend.Backend {
					b, err := postgres.Open(context.Background(), dsn)
					if err != nil {
						t.Fatal(err)
					}
					return b
				},
				setPack: func(t *testing.T, id int64, pack []byte) {
					ctx := context.Background()
					conn, err := pgx.Connect(ctx, dsn)
					if err == nil {
						_, err = conn.Exec(ctx, "UPDATE commits SET pack = $1 WHERE id = $2", pack, id)
						conn.Close(ctx)
					}
					if err != nil {
						t.Fatal(err)
					}
				},
			}
		},
	}
	type damage struct {
		name   string
		leaf   bool // damage the first leaf, else the root
		change func(i int, ch *child, en *Entry)
		object func(root Ref, ent Entry) string
		want   func(root Ref, ent Entry, files int64) string
	}
	damages := []damage{
		{"totals", false, func(i int, ch *child, _ *Entry) {
			if i == 0 {
				ch.files++
			}
		}, func(root Ref, _ Entry) string { return "node " + root.String() },
			func(_ Ref, _ Entry, files int64) string { return fmt.Sprintf("counts %d files", files+1) }},
		{"size", true, func(i int, _ *child, en *Entry) {
			if i == 1 {
				en.Size++
			}
		}, func(_ Ref, ent Entry) string { return "file " + ent.Path },
			func(_ Ref, ent Entry, _ int64) string {
				return fmt.Sprintf("is %d bytes, its chunks hold %d", ent.Size+1, ent.Size)
			}},
		{"lines", true, func(i int, _ *child, en *Entry) {
			if i == 1 {
				en.Lines++
			}
		}, func(_ Ref, ent Entry) string { return "file " + ent.Path },
			func(_ Ref, ent Entry, _ int64) string { return fmt.Sprintf("counts %d lines", ent.Lines+1) }},
	}
	for name, mk := range stores {
		for _, d := range damages {
			t.Run(name+"/"+d.name, func(t *testing.T) {
				ctx := context.Background()
				s := mk(t)
				b := s.open(t)
				e := New(b, Options{})
				th, err := b.Thread(ctx, "s", "main", true)
				if err != nil {
					t.Fatal(err)
				}
				files := map[string]string{}
				for i := range 200 {
					files[fmt.Sprintf("notes/d%02d/file-%04d.md", i%10, i)] = strings.Repeat("x\n", i)
				}
				c := put(t, e, th.ID, files)
				root, _ := decodeRoot(c.Root, c.ID)
				n, err := e.node(ctx, root)
				if err != nil || n.leaf {
					t.Fatalf("root: %v", err)
				}
				leafRef := n.child(0).ref
				leaf, err := e.node(ctx, leafRef)
				if err != nil || !leaf.leaf {
					t.Fatalf("first child: %v", err)
				}
				data, err := b.Pack(ctx, c.ID)
				if err != nil {
					t.Fatal(err)
				}
				target, idx := n, root.Idx
				if d.leaf {
					target, idx = leaf, leafRef.Idx
				}
				enc := binary.AppendUvarint(nil, uint64(target.count()))
				for i := range target.count() {
					if target.leaf {
						en := target.entry(i, nil)
						d.change(i, nil, &en)
						enc = appendEntry(enc, &en)
					} else {
						ch := target.child(i)
						d.change(i, &ch, nil)
						enc = appendChild(enc, &ch)
					}
				}
				b.Close()
				s.setPack(t, c.ID, []byte(rewritePack(t, c.ID, data, idx, string(enc))))
				b = s.open(t)
				defer b.Close()
				faults, err := NewChecker(New(b, Options{})).Commit(ctx, c)
				ent := leaf.entry(1, nil)
				obj, want := d.object(root, ent), d.want(root, ent, n.child(0).files)
				if err != nil || len(faults) != 1 || faults[0].Object != obj || !strings.Contains(faults[0].Problem, want) {
					t.Errorf("%+v, %v; want one fault of %s: %s", faults, err, obj, want)
				}
			})
		}
	}
}
