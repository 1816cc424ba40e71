package sandbox

// The spare pool: per module, a few instances that are initialised but
// have never served a tenant. A tenant's first call takes one instead of
// instantiating on the request path, then applies the tenant's loads (catalogs) to
// it like into any fresh instance; a spare never holds tenant state before
// it is handed over, and never returns to the pool afterwards.

// readyModules returns the modules whose load finished successfully. The
// caller holds h.mu.
func (h *Host) readyModules() []*Module {
	out := make([]*Module, 0, len(h.modules))
	for _, e := range h.modules {
		select {
		case <-e.ready:
			if e.m != nil {
				out = append(out, e.m)
			}
		default:
		}
	}
	return out
}

// kickRefill wakes the refill goroutine without blocking.
func (h *Host) kickRefill() {
	if h.spares == 0 {
		return
	}
	select {
	case h.refill <- struct{}{}:
	default:
	}
}

// refillLoop tops every module's pool up to h.spares whenever kicked,
// until Close cancels bgCtx.
func (h *Host) refillLoop() {
	for {
		select {
		case <-h.bgCtx.Done():
			return
		case <-h.refill:
		}
		h.mu.Lock()
		modules := h.readyModules()
		h.mu.Unlock()
		for _, m := range modules {
			h.topUp(m)
		}
	}
}

func (h *Host) topUp(m *Module) {
	lim := h.SpareLimits()
	for m.spareCount() < h.spares {
		if h.bgCtx.Err() != nil {
			return
		}
		in, f := h.instantiate(h.bgCtx, m, lim)
		if f == nil {
			// Growing the input buffer now (tenant-neutral: plasm_alloc
			// only) takes the first memory.grow and its copy off the
			// request path.
			if f = in.grow(h.bgCtx, minInputBuffer); f != nil {
				in.close()
			}
		}
		if f != nil {
			// A module that instantiated at registration should again; if
			// it does not (memory pressure, Close), calls fall back to
			// instantiating on their own path, and the next kick retries.
			h.spareFailed.Add(1)
			return
		}
		m.mu.Lock()
		closed := m.closed
		if !closed {
			m.spares = append(m.spares, in)
		}
		m.mu.Unlock()
		if closed {
			in.close()
			return
		}
	}
}

func (m *Module) spareCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.spares)
}

// takeSpare hands a spare to a tenant whose memory ceiling is the one
// spares are made with, and asks for a refill.
func (m *Module) takeSpare(ceiling uint64) *instance {
	m.mu.Lock()
	n := len(m.spares)
	if n == 0 || m.spares[n-1].memory.limit != ceiling {
		m.mu.Unlock()
		return nil
	}
	in := m.spares[n-1]
	m.spares[n-1] = nil
	m.spares = m.spares[:n-1]
	m.mu.Unlock()
	m.host.spareTaken.Add(1)
	m.host.kickRefill()
	return in
}

// dropSpares closes the pool for good (Host.Close).
func (m *Module) dropSpares() {
	m.mu.Lock()
	spares := m.spares
	m.spares = nil
	m.closed = true
	m.mu.Unlock()
	closeAll(spares)
}
