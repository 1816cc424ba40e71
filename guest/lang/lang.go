// Package lang parses, expands, checks and plans plasm programs.
package lang

import (
	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/guest/catalog"
	"github.com/plasmd/plasmd/guest/plan"
)

// Plan turns a program into a plan against the loaded catalogs.
func Plan(req *abi.PlanRequest, catalogs map[string]*catalog.Catalog) (*plan.Plan, *abi.Error) {
	return nil, &abi.Error{Code: abi.CodeInternal, Message: "planner not built yet"}
}
