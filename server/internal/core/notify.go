package core

import (
	"github.com/plasmd/plasmd/internal/runtime/executor"
	"github.com/plasmd/plasmd/server/internal/bus"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// publishMutations announces the rows a run changed, once the backend
// accepted the mutation and the run is stored.
func (s *Service) publishMutations(t *tenant.Tenant, runID string, muts []executor.Mutation) {
	if s.bus == nil {
		return
	}
	for _, m := range muts {
		s.bus.Publish(bus.Event{Kind: bus.KindRows, Reason: "plasm_run", Tenant: t.ID, EntryID: m.EntryID, Entity: m.Entity,
			IDs: m.IDs, Capability: m.Capability, RunID: runID})
	}
}
