package core

// CatalogLoads returns how many times each catalog (by entry id) was
// installed into tenant tid's engine instances; nil before its first call.
// Instances install a catalog on the first call that names it, so a
// catalog nobody calls is never installed (tests and load tests read it).
func (s *Service) CatalogLoads(tid string) map[string]uint64 {
	s.mu.Lock()
	sb := s.sandboxes[tid]
	s.mu.Unlock()
	if sb == nil {
		return nil
	}
	return sb.AppliedLoads()
}
