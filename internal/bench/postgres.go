package bench

import (
	"context"

	"github.com/satchel-dev/satchel"
	"github.com/satchel-dev/satchel/backend/postgres"
)

// OpenPostgres creates schema on the PostgreSQL server at url and opens a
// store in it; the function it returns closes the store and drops the
// schema.
func OpenPostgres(ctx context.Context, url, schema string, opts ...satchel.Option) (*satchel.Store, func(), error) {
	b, err := postgres.OpenFresh(ctx, url, schema)
	if err != nil {
		_ = postgres.DropSchema(context.WithoutCancel(ctx), url, schema)
		return nil, nil, err
	}
	st := satchel.New(b, opts...)
	return st, func() {
		st.Close()
		_ = postgres.DropSchema(context.WithoutCancel(ctx), url, schema)
	}, nil
}

// PreparePostgres creates schema on the PostgreSQL server at url and
// migrates it over a connection it then closes; drop drops the schema.
func PreparePostgres(ctx context.Context, url, schema string) (drop func(), err error) {
	drop = func() { _ = postgres.DropSchema(context.WithoutCancel(ctx), url, schema) }
	direct, err := postgres.OpenFresh(ctx, url, schema)
	if err != nil {
		drop()
		return nil, err
	}
	direct.Close()
	return drop, nil
}
