package session

// SetOnExpire sets OnExpire under the store's lock, so it may be set while
// the store is in use (the server wires its invalidation bus this way).
func (m *Memory) SetOnExpire(f func(e Execute)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.OnExpire = f
}
