package sandbox

import (
	"context"
	"time"
)

// The global instance cap (Config.MaxInstances). Lock order: a tenant's mu
// is never held while taking capMu or another tenant's mu; h.mu is only
// held to copy the tenant list.

// capacityWait is how reserve reports a wait that ended without a slot;
// the caller turns it into a CallError with a retry hint.
// retry says self got an idle instance of its own meanwhile, which the
// caller should use instead of a new one.
type capacityWait struct {
	reason string
	err    error
	retry  bool
}

// reserve takes a slot for one new tenant instance of self, evicting the
// least recently used idle instance of another tenant when the host is at
// its cap. It waits until a slot frees, timeout fires, ctx ends or the host
// closes.
func (h *Host) reserve(ctx context.Context, self *Tenant, timeout <-chan time.Time) *capacityWait {
	for {
		h.capMu.Lock()
		if h.maxLive == 0 || h.live < h.maxLive {
			h.live++
			h.capMu.Unlock()
			return nil
		}
		wait := h.capFreed
		h.capWaiters.Add(1)
		h.capMu.Unlock()

		evicted := h.evictLRU(self)
		if !evicted {
			select {
			case <-wait:
			case <-timeout:
				h.capWaiters.Add(-1)
				return &capacityWait{reason: BusyGlobalCap, err: context.DeadlineExceeded}
			case <-ctx.Done():
				h.capWaiters.Add(-1)
				return &capacityWait{reason: BusyGlobalCap, err: ctx.Err()}
			case <-h.bgCtx.Done():
				h.capWaiters.Add(-1)
				return &capacityWait{reason: BusyGlobalCap, err: ErrClosed}
			}
		}
		h.capWaiters.Add(-1)
		self.mu.Lock()
		ownIdle := len(self.idle) > 0
		self.mu.Unlock()
		if ownIdle {
			return &capacityWait{retry: true}
		}
	}
}

// instancesGone returns n tenant instances' slots and wakes waiters.
func (h *Host) instancesGone(n int) {
	if n == 0 {
		return
	}
	h.capMu.Lock()
	h.live -= n
	h.signalCapLocked()
	h.capMu.Unlock()
}

// idleAvailable tells cap waiters that an instance became evictable.
func (h *Host) idleAvailable() {
	if h.capWaiters.Load() == 0 {
		return
	}
	h.capMu.Lock()
	h.signalCapLocked()
	h.capMu.Unlock()
}

func (h *Host) signalCapLocked() {
	if h.capWaiters.Load() > 0 {
		close(h.capFreed)
		h.capFreed = make(chan struct{})
	}
}

// evictLRU closes the least recently released idle instance of any tenant
// but self. Each tenant's idle stack has its oldest instance at index 0, so
// only those are compared.
func (h *Host) evictLRU(self *Tenant) bool {
	h.mu.Lock()
	tenants := make([]*Tenant, 0, len(h.tenants))
	for _, t := range h.tenants {
		if t != self {
			tenants = append(tenants, t)
		}
	}
	h.mu.Unlock()

	for range 3 { // another caller may take the candidate first; retry a little
		var (
			victim *Tenant
			oldest *instance
		)
		for _, t := range tenants {
			t.mu.Lock()
			if len(t.idle) > 0 && (oldest == nil || t.idle[0].lastUsed < oldest.lastUsed) {
				victim, oldest = t, t.idle[0]
			}
			t.mu.Unlock()
		}
		if victim == nil {
			return false
		}
		victim.mu.Lock()
		if len(victim.idle) == 0 || victim.idle[0] != oldest {
			victim.mu.Unlock()
			continue
		}
		victim.idle[0] = nil
		victim.idle = victim.idle[1:]
		victim.live--
		victim.evicted++
		victim.signalLocked()
		victim.mu.Unlock()
		oldest.close()
		h.evicted.Add(1)
		h.obs.InstanceEvicted(victim.id)
		h.instancesGone(1)
		return true
	}
	return false
}
