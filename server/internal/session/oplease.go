package session

import (
	"context"
	"time"
)

// OpRef names one operation: its tenant, scope and number.
type OpRef struct {
	Tenant, Scope string
	N             int
}

// OpLease says that a live process owns an operation. The owner puts it
// when it accepts the operation, renews it every few seconds while the
// worker runs and drops it once the end is recorded; a lease the owner
// stopped renewing (it was killed, or lost the store) expires by itself.
// Expiry is judged on the store's clock alone (Redis: a key with a PX
// expiry; Memory: the one process's clock), so a waiter in another
// process never compares the owner's timestamps with its own clock: two
// machines whose clocks disagree still agree on whether a lease exists.
type OpLease struct {
	// Owner names the owning process (as Operation.Owner does).
	Owner string `json:"owner"`
	// TTL is the lifetime the owner gave the lease at its last renewal.
	TTL time.Duration `json:"ttl"`
	// Left is how long the lease has until it expires, on the store's
	// clock (TTL-Left is how long ago it was last renewed).
	Left time.Duration `json:"-"`
}

// OpLeases stores operation owner leases (oplease.go).
type OpLeases interface {
	// PutOpLease creates (or replaces) an operation's lease, expiring ttl
	// from now on the store's clock.
	PutOpLease(ctx context.Context, ref OpRef, owner string, ttl time.Duration) error
	// RenewOpLeases pushes each existing lease's expiry to ttl from now
	// and returns the refs whose lease no longer existed (expired or
	// dropped): their owner has been judged gone and must stop.
	RenewOpLeases(ctx context.Context, refs []OpRef, owner string, ttl time.Duration) (lost []OpRef, err error)
	// GetOpLease returns a live lease; ErrNotFound once it expired or
	// was dropped.
	GetOpLease(ctx context.Context, ref OpRef) (OpLease, error)
	// DropOpLease deletes a lease (dropping a missing one is no error).
	DropOpLease(ctx context.Context, ref OpRef) error
}
