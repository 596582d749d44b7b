package sqlmigrate

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/satchel-dev/satchel/backend"
	"github.com/satchel-dev/satchel/internal/version"
)

// The processes table (docs/decisions/0062-process-registry.md).
//
// Every process that opens a database for writing registers a row in the
// database's processes table: its host, pid, the version of satchel it
// runs and the schema version it knows (its number of migrations), with
// the time the database last saw it. A goroutine renews the row every
// Heartbeat; Close deletes it. A row not seen for Lease belongs to a
// process that stopped without closing (killed, or cut off from the
// database): it is forgotten. A contract migration is refused while a
// live row knows fewer migrations than it.

// Lease is how long a process's row counts as live after it was last seen.
const Lease = 60 * time.Second

// Heartbeat is how often a process renews its row: three renewals fit in
// a lease, so one lost renewal does not make a live process look gone.
const Heartbeat = Lease / 3

// Process is a row of the processes table.
type Process struct {
	ID      int64
	Host    string
	PID     int
	Program string // the version of satchel it runs (version.Get)
	Schema  int    // the number of migrations it knows
	Age     time.Duration
}

// Self is this process's row, knowing the migrations ms.
func Self(ms []Migration) Process {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return Process{Host: host, PID: os.Getpid(), Program: version.Get().String(), Schema: len(ms)}
}

func (p Process) String() string {
	return fmt.Sprintf("pid %d on %s (satchel %s, schema version %d, seen %s ago)", p.PID, p.Host, p.Program, p.Schema, p.Age.Round(time.Second))
}

// OlderProcessesError refuses a contract migration while processes that
// predate it are registered. It matches backend.ErrOlderProcesses.
type OlderProcessesError struct {
	Migration string // the newest contract migration pending
	Version   int
	Processes []Process
}

func (e *OlderProcessesError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "contract migration %s refused: %d process(es) that know only schema version %d or older still use the database: ",
		e.Migration, len(e.Processes), e.Version-1)
	for i, p := range e.Processes {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	fmt.Fprintf(&b, ". Upgrade or stop them, then run satchel migrate --contract again (a process that stopped without closing is forgotten %s after it was last seen)", Lease)
	return b.String()
}

func (e *OlderProcessesError) Is(target error) bool { return target == backend.ErrOlderProcesses }

// Registry is the processes table as a backend reaches it.
type Registry interface {
	// Register inserts p's row, seen now, and returns its id.
	Register(ctx context.Context, p Process) (int64, error)
	// Renew marks row id seen now; false when the row is gone (it was
	// forgotten), for the caller to register again.
	Renew(ctx context.Context, id int64) (bool, error)
	// Unregister deletes row id.
	Unregister(ctx context.Context, id int64) error
}

// Registration is a process's row, renewed until Close.
type Registration struct {
	reg    Registry
	self   Process
	mu     sync.Mutex
	id     int64
	stop   chan struct{}
	done   chan struct{}
	closed sync.Once
}

// Register registers self in reg and renews the row every Heartbeat until
// Close. A renewal that fails (the database unreachable for a while) is
// tried again at the next beat.
func Register(ctx context.Context, reg Registry, self Process) (*Registration, error) {
	id, err := reg.Register(ctx, self)
	if err != nil {
		return nil, fmt.Errorf("register in processes: %w", err)
	}
	r := &Registration{reg: reg, self: self, id: id, stop: make(chan struct{}), done: make(chan struct{})}
	go r.beat()
	return r, nil
}

func (r *Registration) beat() {
	defer close(r.done)
	t := time.NewTicker(Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), Heartbeat)
		r.mu.Lock()
		ok, err := r.reg.Renew(ctx, r.id)
		if err == nil && !ok {
			if id, err := r.reg.Register(ctx, r.self); err == nil {
				r.id = id
			}
		}
		r.mu.Unlock()
		cancel()
	}
}

// ID returns the row's id.
func (r *Registration) ID() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.id
}

// Close stops the renewals and deletes the row.
func (r *Registration) Close() error {
	var err error
	r.closed.Do(func() {
		close(r.stop)
		<-r.done
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = r.reg.Unregister(ctx, r.ID())
	})
	return err
}
