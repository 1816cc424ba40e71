package sandbox

import (
	"context"
	"errors"
	"time"

	"github.com/plasmd/plasmd/guest/abi"
)

// Observer receives the sandbox's events, for metrics. Methods are called
// synchronously on the call path (some under no lock, none under a tenant
// lock), so implementations must be cheap and must not call back into the
// Host. Embed NopObserver to implement only part of it.
type Observer interface {
	// CallDone reports one finished op on a tenant (including ops refused
	// before reaching the guest); result is one of the Result* values.
	CallDone(tenant, export, result string, d time.Duration)
	// InstanceCreated reports a new instance for tenant; spare says it was
	// taken from the spare pool instead of instantiated on the call path.
	InstanceCreated(tenant string, spare bool)
	// InstanceDiscarded reports an instance closed for reason (one of the
	// Discard* values).
	InstanceDiscarded(tenant, reason string)
	// InstanceEvicted reports an idle instance of tenant closed to make
	// room under the host's global instance cap.
	InstanceEvicted(tenant string)
	// Waited reports how long a call waited for an instance (its tenant's
	// queue or the global cap); got says whether it got one.
	Waited(tenant string, d time.Duration, got bool)
	// Busy reports a call refused with ErrBusy, for reason (one of the
	// Busy* values).
	Busy(tenant, reason string)
}

// NopObserver ignores every event.
type NopObserver struct{}

func (NopObserver) CallDone(string, string, string, time.Duration) {}
func (NopObserver) InstanceCreated(string, bool)                   {}
func (NopObserver) InstanceDiscarded(string, string)               {}
func (NopObserver) InstanceEvicted(string)                         {}
func (NopObserver) Waited(string, time.Duration, bool)             {}
func (NopObserver) Busy(string, string)                            {}

// Call results, as reported to Observer.CallDone and returned by Result.
// The set is closed so metric labels stay bounded.
const (
	ResultOK         = "ok"
	ResultGuestError = "guest_error" // the guest answered with an *abi.Error
	ResultDeadline   = "deadline"
	ResultTrap       = "trap"
	ResultMemory     = "memory"
	ResultBusy       = "busy"
	ResultABI        = "abi"
	ResultTooLarge   = "too_large"
	ResultClosed     = "closed"
	ResultCanceled   = "canceled"
	ResultOther      = "other"
)

// Discard reasons, as reported to Observer.InstanceDiscarded.
const (
	DiscardFailure     = "failure"      // trap, deadline, memory, ABI break, oversized output
	DiscardReconfigure = "reconfigure"  // the tenant's module or limits changed
	DiscardCatalog     = "catalog"      // it held a catalog the tenant no longer has
	DiscardClosed      = "closed"       // the tenant or host closed
	DiscardSpareUnused = "spare_unused" // a spare dropped at Host.Close
)

// Busy reasons, as reported to Observer.Busy.
const (
	BusyQueueFull    = "queue_full"    // Limits.MaxQueue callers were already waiting
	BusyQueueTimeout = "queue_timeout" // waited Limits.QueueTimeout without an instance
	BusyCanceled     = "canceled"      // the caller's context ended while waiting
	BusyGlobalCap    = "global_cap"    // the host's instance cap stayed full
	BusyCPU          = "cpu"           // waited Limits.QueueTimeout without a host CPU slot
)

// Result classifies an error returned by a Tenant op into one of the
// Result* values (ResultOK for nil). Surfaces use it to pick a status code
// and metrics use it as a label.
func Result(err error) string {
	var ae *abi.Error
	switch {
	case err == nil:
		return ResultOK
	case errors.As(err, &ae):
		return ResultGuestError
	case errors.Is(err, ErrDeadline):
		return ResultDeadline
	case errors.Is(err, ErrTrap):
		return ResultTrap
	case errors.Is(err, ErrMemoryLimit):
		return ResultMemory
	case errors.Is(err, ErrBusy):
		return ResultBusy
	case errors.Is(err, ErrABI):
		return ResultABI
	case errors.Is(err, ErrInputTooLarge), errors.Is(err, ErrOutputTooLarge):
		return ResultTooLarge
	case errors.Is(err, ErrClosed):
		return ResultClosed
	case errors.Is(err, context.Canceled):
		return ResultCanceled
	default:
		return ResultOther
	}
}
