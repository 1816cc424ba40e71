package executor

import (
	"fmt"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/plan"
)

// maxMutationIDs caps the ids a Mutation names: invalidation events say
// which rows changed, and a bulk update of thousands of rows is better
// announced as "this entity changed" than as a huge list.
const maxMutationIDs = 64

// mutation describes what a finished mutate node changed: the keys of the
// rows it returned, else of the rows it was applied to (its input), else
// the literal id argument. The key is the for-each field when the
// mutation ran per row, else "id".
func mutation(n plan.Node, states []*nodeState) Mutation {
	m := Mutation{EntryID: n.EntryID, Entity: n.Entity, Capability: n.Capability}
	key := "id"
	if n.ForEach != nil && n.ForEach.Field != "" {
		key = n.ForEach.Field
	}
	m.IDs = tableIDs(states[n.ID].table, key)
	if len(m.IDs) == 0 && n.Input >= 0 && n.Input < len(states) {
		m.IDs = tableIDs(states[n.Input].table, key)
	}
	if len(m.IDs) == 0 {
		if v, ok := n.Args["id"]; ok && v != nil {
			m.IDs = []string{fmt.Sprint(v)}
		}
	}
	return m
}

func tableIDs(t abi.Table, key string) []string {
	col := -1
	for i, c := range t.Columns {
		if c == key {
			col = i
			break
		}
	}
	if col < 0 {
		return nil
	}
	var ids []string
	for _, row := range t.Rows {
		if col < len(row) && row[col] != nil && len(ids) < maxMutationIDs {
			ids = append(ids, fmt.Sprint(row[col]))
		}
	}
	return ids
}
